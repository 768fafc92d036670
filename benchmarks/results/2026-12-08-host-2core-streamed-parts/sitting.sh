#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# The sitting of these figures: bench_stream's random half of a cached 128 MiB .npy file's rows
# (random_split) streamed beside the whole file, sample-shuffled epochs both, per row, in window
# order and in whole-epoch order, built before (BEFORE: a part's chunks copied into slots) and
# after (AFTER: on the host, a whole-epoch part's gathers read its rows where they lie, as the
# whole stream's do), on the 2-core host (no GPU). Usage: sitting.sh BEFORE AFTER
set -eu
dir=$(dirname "$0")
exec "$dir/../../../scripts/bench-sitting.sh" "$dir" 'BM_HostStreamedPartVsWhole' 2 "$1" "$2"
