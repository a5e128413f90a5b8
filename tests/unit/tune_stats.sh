#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The statistics of coltune-tune on synthetic samples (tests/unit/test_tune_stats.py):
# interval coverage, the stopping rule, the A/A guard, choice among equals.
# No MPI, no timing.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
exec python3 "$top_srcdir/tests/unit/test_tune_stats.py" "$top_builddir/scripts/coltune-tune"
