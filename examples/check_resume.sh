#!/bin/sh
# SPDX-FileCopyrightText: 2026 The resident authors
# SPDX-License-Identifier: Apache-2.0
# Stops a training run after some steps, resumes it in a new process from its checkpoint, and
# checks that the final loss and weights are those of the run that never stopped, bit for bit.
#
#   check_resume.sh TRAINER CHECKPOINT STEPS [TRAINER OPTIONS...]
set -eu
trainer=$1
checkpoint=$2
steps=$3
shift 3
whole=$("$trainer" "$@" | grep 'final loss')
"$trainer" "$@" --stop-after "$steps" --checkpoint "$checkpoint" | grep 'stopped after'
resumed=$("$trainer" "$@" --resume "$checkpoint" | grep 'final loss')
echo "never stopped: $whole"
echo "resumed:       $resumed"
if [ "$whole" = "$resumed" ]; then
  echo "check_resume: the resumed run ends bit for bit as the run that never stopped"
else
  echo "check_resume: the resumed run differs" >&2
  exit 1
fi
