// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// npy_resave IN OUT: loads IN with resident::npy and saves what it read to OUT, so that a
// NumPy script can check both directions (tests/npy_interop.py).
#include <cstdio>
#include <resident/npy.hpp>

namespace npy = resident::npy;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: npy_resave IN OUT\n");
    return 2;
  }
  try {
    npy::save(argv[2], npy::load(argv[1]));
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
