#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# coltune's internal traffic never reaches the user's communicator.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
need_progs "$top_builddir/tests/mpi/test_isolation"
for P in ${CT_TEST_NP:-1 2 5 8}; do
    check_run "isolation P=$P" \
        with_env COLTUNE_FALLBACK=error -- run_mpi "$P" "$top_builddir/tests/mpi/test_isolation"
done
finish
