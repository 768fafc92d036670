#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_epoch's mixed epoch (CIFAR rows in sources of a quarter
# and three quarters, weights 0.25 and 0.75 in periods of one batch) beside the single dataset's
# shuffled epoch of the same rows, built before (BEFORE: one position placed at a time) and
# after (AFTER: 16 at a time, in lanes) the host gather placed a mixture's rows together, run
# in turn, three times each, three repetitions a run, on the 2-core host (no GPU).
set -eu
dir=$(dirname "$0")
exec "$dir/../../../scripts/bench-sitting.sh" "$dir" 'BM_HostMixedEpoch' 3 "$1" "$2"
