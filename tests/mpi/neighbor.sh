#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall as coltune intercepts
# them, blocking, nonblocking and persistent, forced to each algorithm,
# checked byte for byte against PMPI_ on distributed graphs, graphs and
# Cartesian grids (tests/mpi/test_neighbor.c).
#   CT_TEST_NP        the world sizes of the strict runs (default below)
#   CT_TEST_NP_NODES  the world sizes of the runs on emulated nodes
#   CT_TEST_QUICK=1   only the strict runs, with fewer cases and no large
#                     blocks (TEST_QUICK=1), at CT_TEST_NP (default 3 8), and
#                     locality on emulated nodes and the nonblocking and
#                     persistent forms at the last of them (the MPICH and
#                     AddressSanitizer runs)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_neighbor"
need_progs "$prog"

quick=${CT_TEST_QUICK:-0}
if [ "$quick" = 1 ]; then
    nps=${CT_TEST_NP:-3 8}
else
    nps=${CT_TEST_NP:-1 2 3 5 13 16}
fi

# forced ALGV ALG VAR=value... -- command: runs command with the intercepted
# MPI_Neighbor_alltoallv forced to ALGV and MPI_Neighbor_alltoall to ALG (and
# their nonblocking and persistent forms, which TEST_FORM selects),
# strict: an algorithm that cannot serve a case returns an error, which the
# test counts as a failure (a graph with two edges between the same two
# ranks, a Cartesian grid with a periodic dimension of size 1 or 2 among
# them, is forwarded to the MPI library, which is not an error).
# (Run through check_run:)
# shellcheck disable=SC2317
forced() {
    algv=$1
    alg=$2
    shift 2
    with_env COLTUNE_FALLBACK=error COLTUNE_NEIGHBOR_ALLTOALLV="$algv" \
        COLTUNE_NEIGHBOR_ALLTOALL="$alg" COLTUNE_INEIGHBOR_ALLTOALLV="$algv" \
        COLTUNE_INEIGHBOR_ALLTOALL="$alg" TEST_QUICK="$quick" "$@"
}

# The nonblocking and persistent forms (MPI_Ineighbor_alltoall(v),
# MPI_Neighbor_alltoall(v)_init): the algorithms that split (direct) and
# pmpi, requests completed by five completion calls in mixed arrays. Under
# MPICH the persistent runs also check that a library's persistent
# collective made after coltune's requests were freed completes (MPICH 4.0.2
# hangs one made on a freed persistent request's object: core/request.c).
forms() { # forms P...
    for P in "$@"; do
        for form in nonblocking persistent; do
            check_run "neighbor P=$P strict, $form, direct" \
                forced direct direct TEST_FORM=$form -- run_mpi "$P" "$prog"
        done
    done
}
# locality_forms P SPEC PPN...: the same forms by locality (SPEC: its
# parameters), a step whose later stages start as earlier ones complete
# (restriction progress: Open MPI only).
locality_forms() {
    P=$1
    spec=$2
    shift 2
    [ "$MPI_IMPL" = openmpi ] || return 0
    for ppn in "$@"; do
        for form in nonblocking persistent; do
            check_run "neighbor P=$P COLTUNE_PPN=$ppn strict, $form, $spec" \
                forced "$spec" "$spec" COLTUNE_PPN="$ppn" TEST_FORM=$form -- \
                run_mpi "$P" "$prog"
        done
    done
}

# One node (every rank on this machine): locality has one node pair, itself.
for P in $nps; do
    for alg in direct locality; do
        check_run "neighbor P=$P strict, $alg" forced "$alg" "$alg" -- run_mpi "$P" "$prog"
    done
done
if [ "$quick" = 1 ]; then
    P=${nps##* }
    check_run "neighbor P=$P COLTUNE_PPN=2 strict, locality" \
        forced locality locality COLTUNE_PPN=2 -- run_mpi "$P" "$prog"
    forms "$P"
    locality_forms "$P" locality 2
    check_run "neighbor P=$P COLTUNE_PPN=2 strict, locality:large=64" \
        forced locality:large=64 locality:large=64 COLTUNE_PPN=2 -- run_mpi "$P" "$prog"
    check_run "neighbor P=$P COLTUNE_PPN=2 strict, locality:steps=2" \
        forced locality:steps=2 locality:steps=2 COLTUNE_PPN=2 -- run_mpi "$P" "$prog"
    check_run "neighbor P=$P COLTUNE_PPN=2 strict, locality:shm=1" \
        forced locality:shm=1 locality:shm=1 COLTUNE_PPN=2 -- run_mpi "$P" "$prog"
    locality_forms "$P" locality:shm=1 2
else
    forms $nps
fi
# locality's blocks to other nodes all directly where a call's largest is
# known to be large: in a halo loop whose block sizes change
# (test_halo_loop), the calls agree it at every 64th call locality serves
# (COLTUNE_VERBOSE=2 logs each), the first in force at once, a later one
# from 8 calls on, the calls between keeping the one before: under Open
# MPI, where it serves the nonblocking calls too, four agreements (small,
# large, small, small; the second and fourth begun by a nonblocking call),
# then one for each batch of nonblocking calls started at once (large,
# small) and two where rank 0 runs ahead (small); under MPICH, where those
# are the library's (restriction progress), three (small, large, small),
# then one where rank 0 runs ahead (small). Both then log two on a ring the
# test leaves to MPI_Finalize (small, small: the second is begun by the
# last call and completed by MPI_Finalize).
halo_run() { # halo_run P SPEC
    log=$(mktemp)
    nb=$2
    small='blocks under large aggregated;' large='every block to another node directly;'
    want="$small$large$small"
    if [ "$MPI_IMPL" = openmpi ]; then
        want="$want$small$large$small$small$small"
    else
        nb=pmpi
        want="$want$small"
    fi
    want="$want$small$small"
    with_env COLTUNE_FALLBACK=error COLTUNE_NEIGHBOR_ALLTOALLV="$2" \
        COLTUNE_INEIGHBOR_ALLTOALLV="$nb" COLTUNE_PPN=2 COLTUNE_VERBOSE=2 TEST_HALO_LOOP=1 -- \
        run_mpi "$1" "$prog" > "$log" 2>&1
    rc=$?
    cat "$log"
    ways=$(sed -n 's/.*neighbour locality: largest block to another node [0-9]* bytes: //p' \
        "$log" | tr '\n' ';')
    [ "$ways" = "$want" ] || { echo "agreements: '$ways', want '$want'"; rc=1; }
    rm -f "$log"
    return $rc
}
P=7
[ "$quick" = 1 ] && P=${nps##* }
[ "$P" -ge 4 ] || P=4 # two emulated nodes at least
for spec in locality locality:steps=2; do
    check_run "neighbor P=$P COLTUNE_PPN=2 strict, $spec, a halo loop" halo_run "$P" "$spec"
done
quick_finish "emulated nodes, pmpi, mixed algorithms, coltune's choice and valgrind runs"

# Emulated nodes (COLTUNE_PPN), where locality aggregates per node pair (3
# steps) or per rank and node (2 steps) and redistributes on the node: nodes
# of 2 and 4 with a short last node (7, 13), ranks dealt round-robin over
# nodes of unequal size (3:cyclic), and every rank a node of its own (1).
for P in ${CT_TEST_NP_NODES:-7 13}; do
    for ppn in 2 3:cyclic 4; do
        check_run "neighbor P=$P COLTUNE_PPN=$ppn strict, locality" \
            forced locality locality COLTUNE_PPN="$ppn" -- run_mpi "$P" "$prog"
    done
    locality_forms "$P" locality 2 3:cyclic
done
for ppn in 2 3:cyclic 4; do
    check_run "neighbor P=13 COLTUNE_PPN=$ppn strict, locality:steps=2" \
        forced locality:steps=2 locality:steps=2 COLTUNE_PPN="$ppn" -- run_mpi 13 "$prog"
done
locality_forms 13 locality:steps=2 3:cyclic
for spec in locality locality:steps=2; do
    check_run "neighbor P=5 COLTUNE_PPN=1 strict, $spec" \
        forced "$spec" "$spec" COLTUNE_PPN=1 -- run_mpi 5 "$prog"
done
# locality's parameter large: no block to another node directly (0), every
# one (1), those of 64 bytes or more (random counts of every datatype fall
# on both sides), in every form, with 3 steps and 2.
for spec in large=0 large=1 large=64 steps=2,large=0 steps=2,large=64; do
    check_run "neighbor P=7 COLTUNE_PPN=2 strict, locality:$spec" \
        forced "locality:$spec" "locality:$spec" COLTUNE_PPN=2 -- run_mpi 7 "$prog"
done
for spec in large=64 steps=2,large=64; do
    locality_forms 7 "locality:$spec" 3:cyclic
done

# locality's messages inside the node through the node's window (shm=1):
# one node, emulated nodes of 2, 3 (round-robin, unequal) and 4, with 2
# steps, and a window of 64 bytes a rank (the exchange in several rounds),
# in every form.
for P in 5 16; do
    check_run "neighbor P=$P strict, locality:shm=1" \
        forced locality:shm=1 locality:shm=1 -- run_mpi "$P" "$prog"
done
for ppn in 2 3:cyclic 4; do
    check_run "neighbor P=13 COLTUNE_PPN=$ppn strict, locality:shm=1" \
        forced locality:shm=1 locality:shm=1 COLTUNE_PPN="$ppn" -- run_mpi 13 "$prog"
done
locality_forms 7 locality:shm=1 2 3:cyclic
check_run "neighbor P=7 COLTUNE_PPN=3 strict, locality:shm=1,steps=2" \
    forced locality:shm=1,steps=2 locality:shm=1,steps=2 COLTUNE_PPN=3 -- run_mpi 7 "$prog"
# shm_large: the messages inside the node of 100 bytes or more point-to-point,
# the others through the window (random counts of every datatype fall on both
# sides), on one node and on emulated ones, in every form.
check_run "neighbor P=5 strict, locality:shm=1,shm_large=100" \
    forced locality:shm=1,shm_large=100 locality:shm=1,shm_large=100 -- run_mpi 5 "$prog"
check_run "neighbor P=13 COLTUNE_PPN=4 strict, locality:shm=1,shm_large=100" \
    forced locality:shm=1,shm_large=100 locality:shm=1,shm_large=100 COLTUNE_PPN=4 -- \
    run_mpi 13 "$prog"
locality_forms 7 locality:shm=1,shm_large=100 3:cyclic
if [ "$MPI_IMPL" = openmpi ]; then
    for form in blocking nonblocking persistent; do
        check_run "neighbor P=7 COLTUNE_PPN=3 COLTUNE_SHM_WINDOW=64 strict, $form, \
locality:shm=1" \
            forced locality:shm=1 locality:shm=1 COLTUNE_PPN=3 COLTUNE_SHM_WINDOW=64 \
            TEST_FORM=$form -- run_mpi 7 "$prog"
    done
fi

# Four tags (COLTUNE_TEST_TAGS): four live persistent neighbourhood requests
# hold them all, the fifth and sixth go to the MPI library, said once
# (test_tags_held), by every algorithm that makes requests.
nbr_tags_held() {
    log=$(mktemp)
    with_env COLTUNE_INEIGHBOR_ALLTOALLV="$1" COLTUNE_INEIGHBOR_ALLTOALL="$1" \
        COLTUNE_TEST_TAGS=4 TEST_TAGS_HELD=1 -- run_mpi 3 "$prog" > "$log" 2>&1
    rc=$?
    [ $rc = 0 ] && [ "$(grep -c 'every one of coltune.s 4 tags of persistent calls is held' \
        "$log")" = 1 ] && ! grep -q 'failed at' "$log" ||
        { cat "$log"; echo "rc $rc; expected one message, every tag held, and no error"; rc=1; }
    rm -f "$log"
    return $rc
}
for spec in direct locality; do
    [ "$spec" = direct ] || [ "$MPI_IMPL" = openmpi ] || continue
    check_run "neighbor P=3 every persistent tag held, $spec" nbr_tags_held "$spec"
done

# Both collectives' plans on the same communicators, by different algorithms
# (and two plans of locality's on one communicator).
check_run "neighbor P=8 COLTUNE_PPN=3 strict, alltoallv locality, alltoall direct" \
    forced locality direct COLTUNE_PPN=3 -- run_mpi 8 "$prog"
check_run "neighbor P=13 COLTUNE_PPN=4:cyclic strict, alltoallv direct, alltoall locality" \
    forced direct locality COLTUNE_PPN=4:cyclic -- run_mpi 13 "$prog"
check_run "neighbor P=7 COLTUNE_PPN=3 strict, alltoallv locality:steps=2, alltoall locality" \
    forced locality:steps=2 locality COLTUNE_PPN=3 -- run_mpi 7 "$prog"
# The algorithms did serve calls, not only the library: graphs without a
# repeated edge are theirs (COLTUNE_STATS counts the calls an algorithm ran),
# and those with one, forwarded to the library, count as pmpi's.
# served FORM COLLV ALGV COLL ALG
served() {
    log=$(mktemp)
    with_env COLTUNE_STATS=1 COLTUNE_PPN=4 COLTUNE_NEIGHBOR_ALLTOALLV=locality \
        COLTUNE_NEIGHBOR_ALLTOALL=direct COLTUNE_INEIGHBOR_ALLTOALLV=direct \
        COLTUNE_INEIGHBOR_ALLTOALL=direct TEST_QUICK=1 TEST_FORM="$1" -- \
        run_mpi 8 "$prog" > "$log" 2>&1
    rc=$?
    ok=0
    [ $rc = 0 ] && awk -v cv="$2" -v av="$3" -v c="$4" -v a="$5" '
        $1 == cv && $2 == av && $3 > 0 {x = 1}
        $1 == c && $2 == a && $3 > 0 {y = 1}
        $1 == cv && $2 == "pmpi" && $3 > 0 {f = 1}
        END {exit !(x && y && f)}' "$log" && ok=1
    [ $ok = 1 ] || { cat "$log"; echo "$3 and $5 served no $1 call, or pmpi none of $2"; }
    rm -f "$log"
    [ $ok = 1 ]
}
check_run "neighbor P=8 COLTUNE_PPN=4: the forced algorithms serve calls" \
    served blocking neighbor_alltoallv locality neighbor_alltoall direct
for form in nonblocking persistent; do
    check_run "neighbor P=8 COLTUNE_PPN=4: direct serves $form calls" \
        served $form ineighbor_alltoallv direct ineighbor_alltoall direct
done
# The shipped rules (conf/coltune.rules): the persistent forms across nodes
# with small blocks are locality's (Open MPI; MPICH passes it over, as its
# restriction progress says, and the library serves them), every result
# checked against PMPI_.
# So are, on connected graphs, the blocking and nonblocking Neighbor_alltoall
# calls of up to 1 KiB (test_cart's, among others). The blocking
# Neighbor_alltoallv across nodes learns between pmpi and locality
# (COLTUNE_ADAPT_SHARE=100: each learner explores from its communicator's
# first call, so locality serves some of the test's ten calls per graph).
# Every call counts once in the statistics, whoever served it: a learner's
# timed call on a graph that is the library's (a repeated edge) too, as the
# library's (as many calls as with no rules file). Not the persistent form's:
# a request of coltune's counts its starts, one of the library's its init
# (coltune does not see the starts of the library's requests).
# shipped_run FORM COLLECTIVE...: run in FORM under the shipped rules; each
# COLLECTIVE must have calls served by locality (under MPICH, the blocking
# ones only), and, but in the persistent form, as many counted as in a run
# of the library's alone.
# stats_calls LOG COLLECTIVE: the calls counted, every algorithm's.
stats_calls() {
    awk -v c="$2" '$1 == c && $2 !~ /^[0-9]+$/ {n += $3} END {print n + 0}' "$1"
}
shipped_run() {
    log=$(mktemp)
    ref=$(mktemp)
    form=$1
    shift
    with_env COLTUNE_RULES="$top_srcdir/conf/coltune.rules" COLTUNE_STATS=1 COLTUNE_PPN=4 \
        COLTUNE_ADAPT_SHARE=100 TEST_QUICK=1 TEST_FORM=$form -- run_mpi 8 "$prog" > "$log" 2>&1
    rc=$?
    cat "$log"
    [ "$form" = persistent ] ||
        with_env COLTUNE_RULES= COLTUNE_STATS=1 COLTUNE_PPN=4 TEST_QUICK=1 TEST_FORM=$form -- \
            run_mpi 8 "$prog" > "$ref" 2>&1 || { cat "$ref"; rc=1; }
    for coll in "$@"; do
        if [ "$MPI_IMPL" = openmpi ] || [ "$form" = blocking ]; then
            awk -v c="$coll" '$1 == c && $2 == "locality" && $3 > 0 {x = 1} END {exit !x}' \
                "$log" || { echo "locality served no $form $coll call"; rc=1; }
        fi
        [ "$form" = persistent ] && continue
        n=$(stats_calls "$log" "$coll")
        want=$(stats_calls "$ref" "$coll")
        [ "$n" = "$want" ] && [ "$want" -gt 0 ] ||
            { echo "$coll: $n calls counted, $want under the library alone"; rc=1; }
    done
    rm -f "$log" "$ref"
    return $rc
}
check_run "neighbor P=8 COLTUNE_PPN=4, persistent, the shipped rules" \
    shipped_run persistent ineighbor_alltoallv ineighbor_alltoall
check_run "neighbor P=8 COLTUNE_PPN=4, blocking, the shipped rules" \
    shipped_run blocking neighbor_alltoall neighbor_alltoallv
check_run "neighbor P=8 COLTUNE_PPN=4, nonblocking, the shipped rules" \
    shipped_run nonblocking ineighbor_alltoall
# coltune_decision on a graph communicator: its rules on the graph apply
# once a neighbourhood call has read it (test_decision).
decision_run() {
    rules=$(mktemp)
    echo 'neighbor_alltoall degree=1 offnode=0-100 direct' > "$rules"
    with_env COLTUNE_RULES="$rules" TEST_DECISION=direct -- run_mpi 4 "$prog"
    rc=$?
    rm -f "$rules"
    return $rc
}
check_run "neighbor P=4: coltune_decision applies the graph's rules once read" decision_run
# MPI_Neighbor_alltoall's msg_size on a connected graph (components=1): every
# rank takes it from its own block, the star's leaves from their receive
# block, and all choose alike (test_one_block_size): per form, the star's 5
# calls of 16 B direct's, its 5 of 2 KiB and the two rings' 10 pmpi's.
one_size_run() {
    rules=$(mktemp)
    log=$(mktemp)
    printf '%s\n' 'neighbor_alltoall components=1 msg_size=0-1k direct' \
        'ineighbor_alltoall components=1 msg_size=0-1k direct' > "$rules"
    with_env COLTUNE_RULES="$rules" COLTUNE_STATS=1 TEST_ONE_SIZE=1 "$@" -- \
        run_mpi 5 "$prog" > "$log" 2>&1
    rc=$?
    cat "$log"
    [ $rc = 0 ] && awk '($1 == "neighbor_alltoall" || $1 == "ineighbor_alltoall") &&
                        ($2 == "direct" && $3 == 5 || $2 == "pmpi" && $3 == 15) {n++}
                        END {exit n != 4}' "$log" ||
        { echo "want 5 calls of direct and 15 of pmpi in each form"; rc=1; }
    rm -f "$rules" "$log"
    return $rc
}
check_run "neighbor P=5: Neighbor_alltoall's msg_size on a connected graph" one_size_run
check_run "neighbor P=5 COLTUNE_PPN=2: Neighbor_alltoall's msg_size on a connected graph" \
    one_size_run COLTUNE_PPN=2
# Forwarded (pmpi), and coltune's own choice (nothing forced, the fallback on).
check_run "neighbor P=8 strict, pmpi" forced pmpi pmpi -- run_mpi 8 "$prog"
check_run "neighbor P=8 COLTUNE_PPN=4, coltune's choice" \
    with_env COLTUNE_PPN=4 -- run_mpi 8 "$prog"
for form in nonblocking persistent; do
    check_run "neighbor P=7 strict, $form, pmpi" \
        forced pmpi pmpi TEST_FORM=$form -- run_mpi 7 "$prog"
    check_run "neighbor P=8 COLTUNE_PPN=4, $form, coltune's choice" \
        with_env COLTUNE_PPN=4 TEST_FORM=$form -- run_mpi 8 "$prog"
done

# Under valgrind (Open MPI ships a suppression file for its own internals;
# tests/mpi/pmix-valgrind.supp covers its launcher channel): no invalid
# access or uninitialised read. The test program is a libtool wrapper script:
# libtool --mode=execute runs valgrind on the real binary, not on the shell.
supp=$vg_supp
if valgrind_usable "valgrind"; then
    for run in locality/3/2/blocking locality/3/2/persistent \
        locality:steps=2/3/2/nonblocking locality:shm=1,shm_large=100/3/2/persistent; do
        # ALG/P/PPN/FORM
        alg=${run%%/*}
        rest=${run#*/}
        P=${rest%%/*}
        rest=${rest#*/}
        ppn=${rest%%/*}
        form=${rest#*/}
        check_run "neighbor P=$P ${ppn:+COLTUNE_PPN=$ppn }strict, $form, $alg, under valgrind" \
            forced "$alg" "$alg" TEST_QUICK=1 TEST_FORM=$form ${ppn:+COLTUNE_PPN=$ppn} -- \
            run_mpi "$P" "$top_builddir/libtool" --mode=execute "$VALGRIND" --quiet \
            --error-exitcode=3 --suppressions="$supp" \
            --suppressions="$top_srcdir/tests/mpi/pmix-valgrind.supp" "$prog"
    done
fi
finish
