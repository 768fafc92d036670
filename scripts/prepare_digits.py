#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
"""Writes scikit-learn's handwritten digits (1,797 images of 8x8 pixels, 10 classes; shipped
inside scikit-learn, no download) as resident's examples read them:

    <dir>/digits_x.npy  uint8 pixels, shape (1797, 64), values 0..16
    <dir>/digits_y.npy  int32 labels, shape (1797,)

Pixels are stored compactly (one byte each) and normalised on the fly by the training loop
(resident::Normalize{1/16, 0}). The rows are shuffled once with a fixed seed so that the last
fifth, which train_mlp holds out, has every class.

With --npz, writes instead one archive in the layout of Keras' mnist.npz, compressed as
numpy.savez_compressed writes it (deflated members):

    <dir>/digits.npz  x_train (1437, 8, 8) and x_test (360, 8, 8) uint8 pixels scaled to
                      0..240, as MNIST's are to 0..255; y_train and y_test uint8 labels

usage: prepare_digits.py [--npz] <dir>
"""
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits


def replace(path: str, write) -> None:
    """write(file) into a temporary in the same folder, renamed over the path: a dataset that
    maps or streams the old file keeps reading it whole, and a failure leaves it as it was."""
    folder, name = os.path.split(path)
    fd, temporary = tempfile.mkstemp(prefix=name + ".tmp-", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)  # mkstemp's 0600 is not what np.save would give
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def save(path: str, array: np.ndarray) -> None:
    """np.save, through a temporary (see replace)."""
    replace(path, lambda f: np.save(f, array))


def save_mnist_layout(path: str, pixels: np.ndarray, labels: np.ndarray) -> None:
    """The digits as Keras' mnist.npz holds MNIST, deflated, through a temporary."""
    images = (pixels * 15).astype(np.uint8).reshape(-1, 8, 8)
    train = len(labels) * 4 // 5
    replace(path, lambda f: np.savez_compressed(
        f, x_train=images[:train], y_train=labels[:train].astype(np.uint8),
        x_test=images[train:], y_test=labels[train:].astype(np.uint8)))


def main() -> int:
    args = sys.argv[1:]
    as_npz = args[:1] == ["--npz"]
    if as_npz:
        args = args[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = args[0]
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    order = np.random.default_rng(20261203).permutation(len(digits.target))
    pixels = digits.data[order].astype(np.uint8)
    labels = digits.target[order].astype(np.int32)
    if as_npz:
        save_mnist_layout(os.path.join(out, "digits.npz"), pixels, labels)
    else:
        save(os.path.join(out, "digits_x.npy"), np.ascontiguousarray(pixels))
        save(os.path.join(out, "digits_y.npy"), np.ascontiguousarray(labels))
    print(f"prepare_digits: {pixels.shape[0]} images of {pixels.shape[1]} pixels, "
          f"{len(np.unique(labels))} classes -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
