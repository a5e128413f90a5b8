#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Online tuning (tests/mpi/test_adapt.c): under COLTUNE_ADAPT=1 and under an
# adapt rule, every call's result equals PMPI_'s and every rank runs the same
# candidate at the same call, at many P, with re-checks every 50 calls;
# node_aware only across emulated nodes; rounds on the grid of calls; one
# rank delayed at random; a duel between rounds; a phase change that demotes
# the choice; several communicators; MPI_THREAD_MULTIPLE; the learned rules
# file (COLTUNE_ADAPT_OUT) checked by coltune-info and read back with no
# exploration.
#   CT_TEST_NP      the P values (default below)
#   CT_TEST_QUICK=1 the P sweep only (the MPICH smoke run, the ASan build)
. "${top_srcdir:-$(dirname "$0")/../..}/tests/mpi/common.sh"
prog="$top_builddir/tests/mpi/test_adapt"
need_progs "$prog"
info="$top_builddir/info/coltune-info"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# adapt_says LOG PATTERN WHAT: LOG has a line matching PATTERN; else WHAT is
# said, with the learners' lines of LOG, and the check fails.
adapt_says() {
    grep -q "$2" "$1" && return 0
    echo "$3:"
    grep ': adapt: ' "$1"
    return 1
}

for P in ${CT_TEST_NP:-1 2 3 5 8}; do
    # from P = 2 the first round runs pmpi, pairwise, nonblocking, linear,
    # scattered, tuna and shm at least; on one node not node_aware
    min=1
    [ "$P" -ge 2 ] && min=7
    check_run "adapt P=$P COLTUNE_ADAPT=1" \
        with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_RECHECK=50 TEST_MIN_ALGS=$min \
        TEST_NOT_RAN=node_aware -- run_mpi "$P" "$prog"
done
# Across (emulated) nodes node_aware is a candidate too, its results checked.
check_run "adapt P=4 COLTUNE_PPN=2: node_aware among the candidates" \
    with_env COLTUNE_ADAPT=1 COLTUNE_PPN=2 TEST_MIN_ALGS=8 TEST_RAN=node_aware -- \
    run_mpi 4 "$prog"
quick_finish "uneven emulated nodes, the grid, delays, adapt rules, threads and the learned rules file"

check_run "adapt P=5 COLTUNE_PPN=2 (nodes of 2, 2, 1): node_aware among the candidates" \
    with_env COLTUNE_ADAPT=1 COLTUNE_PPN=2 TEST_MIN_ALGS=8 TEST_RAN=node_aware -- \
    run_mpi 5 "$prog"

# Rounds after the first start on the grid of calls: at share 50%, after a
# multiple of the smallest power of two not below the round's calls (32 for
# 3 turns of 6 calls, 128 for 11; the first round, of 4-call turns without
# pmpi's second, starts at once). Until the first decision, at least 3
# rounds (a decision needs 3: with no rules' choice standing, pmpi is kept
# after 3 when no candidate can beat it by 5%, a winner needs 4), those after
# the first on it; every call's choice checked on all ranks. (The first round's time counts the MPI
# library's first calls; on a loaded machine the next round came after call
# 1280, hence 3000 calls.)
grid() {
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=50 COLTUNE_VERBOSE=2 \
        TEST_FILTER=test_alltoallv TEST_CALLS=3000 -- \
        run_mpi 4 "$prog" > "$tmp/grid" 2>&1 || { cat "$tmp/grid"; return 1; }
    awk '/: adapt: (chose|re-checked|demoted|kept)/ { done = 1 }
         /: adapt: round [0-9]+ after call / && !done {
             n++
             for (i = 1; i < NF; i++) if ($i == "call") c = $(i + 1)
             if ($0 !~ /round 1 / && c % 32 != 0) bad = 1
         }
         END { exit !(n >= 3 && !bad) }' "$tmp/grid" || {
        echo "fewer than 3 rounds, or one off the grid:"
        grep ': adapt: ' "$tmp/grid"
        return 1
    }
}
check_run "adapt P=4 rounds on the grid of calls" grid

# The last rank of every communicator sleeps up to 400 us in each timed call:
# the times differ from rank to rank, the choices must not.
check_run "adapt P=4 one rank delayed at random" \
    with_env COLTUNE_ADAPT=1 COLTUNE_TEST_ADAPT_DELAY=400 COLTUNE_ADAPT_SHARE=100 -- \
    run_mpi 4 "$prog"

# A phase change (COLTUNE_TEST_ADAPT_PHASE): before the learner's call 1000
# every rank sleeps 1 ms in pmpi's timed calls, from it on in every other
# algorithm's. A candidate must win, lose a re-check after the change, be
# demoted, and relearning must keep pmpi. The win may come from a re-check
# of pmpi (a first round that a hiccup made inconclusive keeps pmpi): it is
# said "chose" as well.
phase_change() {
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_RECHECK=50 \
        COLTUNE_TEST_ADAPT_PHASE=1000 COLTUNE_VERBOSE=1 TEST_FILTER=test_alltoallv \
        TEST_CALLS=3000 -- run_mpi 3 "$prog" > "$tmp/phase" 2>&1 ||
        { cat "$tmp/phase"; return 1; }
    awk '/: adapt: chose / && !/: adapt: chose pmpi/ { won = 1 }
         /: adapt: demoted / && won { demoted = 1 }
         /: adapt: chose pmpi/ && demoted { kept = 1 }
         END { exit !kept }' "$tmp/phase" || {
        echo "no win, demotion and pmpi, in that order:"
        grep ': adapt: ' "$tmp/phase"
        return 1
    }
}
check_run "adapt P=3 a phase change: the choice demoted, pmpi kept" phase_change

# At the default share, the calls between rounds open with a duel of the two
# best so far, agreed like a round (every call's choice checked on all ranks).
# pmpi is made slow in the rounds (a phase that never ends), so that every
# candidate beats it and a duel is certain.
duel() {
    with_env COLTUNE_ADAPT=1 COLTUNE_VERBOSE=2 COLTUNE_TEST_ADAPT_PHASE=1000000 \
        TEST_FILTER=test_alltoallv TEST_CALLS=600 -- \
        run_mpi 4 "$prog" > "$tmp/duel" 2>&1 || { cat "$tmp/duel"; return 1; }
    adapt_says "$tmp/duel" ': adapt: duel between rounds: .* us, .* us per iteration' "no duel"
}
check_run "adapt P=4 a duel between rounds" duel

# The incumbent: what the rules file gives a call runs every call until the
# first round, which, below a share of 100, waits for a multiple of a grid
# of calls (adapt.c, first_wait: 16384 at P = 4 and the default share, 1024
# at 20%). Here tuna:radix=4, a variant of TuNA's parameter sweep at P = 4
# that the first round would not run without an incumbent: 200 calls run it
# alone, on every rank alike, and COLTUNE_STATS and COLTUNE_ADAPT_OUT say
# so, naming the call the round waits for (the file keeps the choice as the
# cell's rule). At 20% the learner explores within 1300 calls, not before
# call 512.
incumbent() {
    printf '%s\n' 'alltoallv tuna:radix=4' > "$tmp/incumbent.rules"
    with_env COLTUNE_ADAPT=1 COLTUNE_RULES="$tmp/incumbent.rules" COLTUNE_VERBOSE=2 \
        COLTUNE_STATS=1 COLTUNE_ADAPT_OUT="$tmp/waited.rules" \
        TEST_FILTER=test_alltoallv TEST_CALLS=200 TEST_RAN=tuna TEST_MAX_ALGS=1 -- \
        run_mpi 4 "$prog" > "$tmp/incumbent" 2>&1 || { cat "$tmp/incumbent"; return 1; }
    waits=$(sed -n "s/^alltoallv .* 200 *0 .* tuna:radix=4 (the rules' choice; learning from call \([0-9]*\))$/\1/p" \
        "$tmp/incumbent")
    [ -n "$waits" ] && [ "$waits" -gt 200 ] ||
        { echo "no waiting learner's row:"; cat "$tmp/incumbent"; return 1; }
    # what ran (the statistics' row of each algorithm): as coltune_decision said
    [ "$(grep -c '^alltoallv  *[a-z]' "$tmp/incumbent")" = 1 ] &&
        grep -q '^alltoallv  *tuna  *200 ' "$tmp/incumbent" ||
        { echo "not only tuna ran:"; cat "$tmp/incumbent"; return 1; }
    grep -q "^# not learned: the run ended before call $waits," "$tmp/waited.rules" &&
        grep -q '^alltoallv *comm_size=4 nodes=1 ppn=4 *tuna:radix=4$' "$tmp/waited.rules" ||
        { echo "COLTUNE_ADAPT_OUT:"; cat "$tmp/waited.rules"; return 1; }
    "$info" --check "$tmp/waited.rules" > "$tmp/check" 2>&1 ||
        { echo "coltune-info --check:"; cat "$tmp/check"; return 1; }
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=20 COLTUNE_RULES="$tmp/incumbent.rules" \
        COLTUNE_VERBOSE=2 TEST_FILTER=test_alltoallv TEST_CALLS=1300 TEST_MIN_ALGS=7 -- \
        run_mpi 4 "$prog" > "$tmp/incumbent" 2>&1 || { cat "$tmp/incumbent"; return 1; }
    awk '/: adapt: round 1 after call / {
             n++
             for (i = 1; i < NF; i++) if ($i == "call") c = $(i + 1)
             if (c < 512) bad = 1
         }
         END { exit !(n >= 1 && !bad) }' "$tmp/incumbent" || {
        echo "no first round, or one before call 512:"
        grep ': adapt: ' "$tmp/incumbent"
        return 1
    }
    # COLTUNE_VERBOSE says when exploring began, after the incumbent's calls
    began=": adapt: exploring [0-9]* candidates and pmpi from call [0-9]*"
    adapt_says "$tmp/incumbent" "$began (the rules' choice ran the first [0-9]*)\$" \
        "no line when the exploration began"
}
check_run "adapt P=4 the rules' choice runs until the first round, which waits" incumbent

# The incumbent is what the rules give the call with the adapt rules passed
# over: here past an adapt rule with a msg_size condition (which an
# Alltoallv cannot check without communicating) and a rule whose algorithm
# cannot serve P = 4 (leaders out of range, after radix and block_count
# resolved: their values must not reach tuna's), tuna:radix=4, which the
# calls then run alone until the first round.
incumbent_walk() {
    printf '%s\n' 'alltoallv msg_size=0-1g adapt' \
        'alltoallv node_aware:radix=2,block_count=1,leaders=1000' 'alltoallv tuna:radix=4' \
        > "$tmp/walk.rules"
    with_env COLTUNE_RULES="$tmp/walk.rules" COLTUNE_STATS=1 TEST_FILTER=test_alltoallv \
        TEST_CALLS=200 TEST_RAN=tuna TEST_MAX_ALGS=1 -- \
        run_mpi 4 "$prog" > "$tmp/walk" 2>&1 || { cat "$tmp/walk"; return 1; }
    grep -q "^alltoallv .* tuna:radix=4 (the rules' choice; learning from call [0-9]*)$" \
        "$tmp/walk" || { echo "no incumbent tuna:radix=4:"; cat "$tmp/walk"; return 1; }
}
check_run "adapt P=4 the incumbent past an adapt rule and a rule that cannot serve" \
    incumbent_walk

# Where no candidate can win before the budget runs out (NO_EVIDENCE), the
# rules' choice stays, not pmpi: pmpi sleeps 1 ms a call in the rounds (a
# phase that never ends), so the incumbent, tuna:radix=4, measures faster
# than it, and a budget of 100 exploring calls ends the exploration after
# its second round, before any candidate may win (min_win, 4 rounds).
kept() {
    printf '%s\n' 'alltoallv tuna:radix=4' > "$tmp/kept.rules"
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_SHARE=100 COLTUNE_ADAPT_CALLS=100 \
        COLTUNE_RULES="$tmp/kept.rules" COLTUNE_VERBOSE=1 COLTUNE_TEST_ADAPT_PHASE=1000000 \
        TEST_FILTER=test_alltoallv TEST_CALLS=300 -- \
        run_mpi 4 "$prog" > "$tmp/kept" 2>&1 || { cat "$tmp/kept"; return 1; }
    adapt_says "$tmp/kept" ': adapt: kept, no candidate won: tuna:radix=4, ' \
        "the rules' choice was not kept" &&
        adapt_says "$tmp/kept" ': adapt: exploring [0-9]* candidates and pmpi from call 1$' \
            "no line when the exploration began (share 100: at the first call)"
}
check_run "adapt P=4 the rules' choice stays when no candidate wins" kept

# A learner still exploring at MPI_Finalize (no rules file: it learns from
# the first call; 150 calls end within its rounds and duels): COLTUNE_ADAPT_OUT
# gives its shape the best so far, which ran between the rounds, as its rule,
# so that the file, reused, runs what the run ran.
still_learning() {
    with_env COLTUNE_ADAPT=1 COLTUNE_RULES= COLTUNE_ADAPT_OUT="$tmp/still.rules" \
        COLTUNE_STATS=1 TEST_FILTER=test_alltoallv TEST_CALLS=150 -- \
        run_mpi 4 "$prog" > "$tmp/still" 2>&1 || { cat "$tmp/still"; return 1; }
    spec=$(awk '/^# still learning at MPI_Finalize \(/ { c = NR }
                c && NR == c + 1 && /^alltoallv +comm_size=4 nodes=1 ppn=4 +[a-z]/ { print $NF }' \
        "$tmp/still.rules")
    [ -n "$spec" ] || { echo "COLTUNE_ADAPT_OUT:"; cat "$tmp/still.rules"; return 1; }
    # the rule is the best so far that COLTUNE_STATS shows, still learning
    grep -q "^alltoallv  *4  *1  *4 .* $spec .*(still learning)\$" "$tmp/still" ||
        { echo "$spec is not a learner's best so far:"; cat "$tmp/still"; return 1; }
    "$info" --check "$tmp/still.rules" > "$tmp/check" 2>&1 ||
        { echo "coltune-info --check:"; cat "$tmp/check"; return 1; }
}
check_run "adapt P=4 a learner still exploring writes its best so far" still_learning

# coltune_decision on one rank alone makes no learner: its incumbent, from
# the asked size (16384 B: shm), would differ from the first call's (20000
# B, the same size class: pmpi), and that rank would run another algorithm.
printf '%s\n' 'alltoall msg_size=0-16k shm' 'alltoall pmpi' > "$tmp/query.rules"
check_run "adapt P=3 a query on one rank changes nothing" \
    with_env COLTUNE_ADAPT=1 COLTUNE_RULES="$tmp/query.rules" TEST_FILTER=test_query_one_rank \
    TEST_CALLS=40 -- run_mpi 3 "$prog"

# An adapt rule with candidates, and one without: the other calls follow the
# rules as usual.
printf '%s\n' 'alltoallv comm_size=2- adapt:shm|pairwise|tuna:radix=2|pmpi' \
    'alltoall msg_size=0-128 adapt' 'alltoall linear' > "$tmp/adapt.rules"
check_run "adapt P=5 adapt rules" \
    with_env COLTUNE_RULES="$tmp/adapt.rules" COLTUNE_FALLBACK=error -- run_mpi 5 "$prog"

check_run "adapt P=3 MPI_THREAD_MULTIPLE, a communicator per thread" \
    with_env COLTUNE_ADAPT=1 TEST_THREAD_MULTIPLE=1 TEST_FILTER=test_threads -- run_mpi 3 "$prog"

# COLTUNE_ADAPT_OUT: rank 0 writes what every learner of the job decided
# (those of communicators it is not in too: the row communicators of
# test_many_comms), coltune-info finds it clean, and a run with it as
# COLTUNE_RULES decides by its rules and explores nothing.
learned() {
    # 250 calls in rounds, unpaced: every learner decides within the run
    with_env COLTUNE_ADAPT=1 COLTUNE_ADAPT_CALLS=250 COLTUNE_ADAPT_SHARE=100 \
        COLTUNE_ADAPT_OUT="$tmp/learned.rules" COLTUNE_STATS=1 TEST_CALLS=400 -- \
        run_mpi 4 "$prog" > "$tmp/out" 2>&1 ||
        { cat "$tmp/out"; return 1; }
    grep -q '^coltune adaptive tuning' "$tmp/out" || { echo "no adaptive tuning table"; return 1; }
    grep -v '^#' "$tmp/learned.rules" | grep -q '^alltoallv *comm_size=4 nodes=1 ppn=4 ' ||
        { echo "no alltoallv rule for P=4:"; cat "$tmp/learned.rules"; return 1; }
    # rows of 2 ranks: rank 0 is in one of the two
    grep -v '^#' "$tmp/learned.rules" | grep -q '^alltoallv *comm_size=2 ' ||
        { echo "no rule for the row communicators:"; cat "$tmp/learned.rules"; return 1; }
    grep -q '^# [0-9.]*x \[[0-9.]*, [0-9.]*\] over pmpi\|^# no candidate beat pmpi' \
        "$tmp/learned.rules" || { echo "no measured ratio:"; cat "$tmp/learned.rules"; return 1; }
    "$info" --check "$tmp/learned.rules" > "$tmp/check" 2>&1 ||
        { echo "coltune-info --check:"; cat "$tmp/check"; return 1; }
    spec=$(grep -v '^#' "$tmp/learned.rules" | grep '^alltoallv *comm_size=4 ' | awk '{print $NF}')
    with_env COLTUNE_RULES="$tmp/learned.rules" COLTUNE_VERBOSE=1 COLTUNE_STATS=1 -- \
        run_mpi 4 "$prog" > "$tmp/again" 2>&1 || { cat "$tmp/again"; return 1; }
    if grep -q 'adaptive tuning\|: adapt:' "$tmp/again"; then
        echo "the learned rules explored again:"
        cat "$tmp/again"
        return 1
    fi
    grep -q "alltoallv on .*: $spec \[rule line" "$tmp/again" || {
        echo "the learned choice $spec was not used:"
        cat "$tmp/again"
        return 1
    }
}
check_run "adapt P=4 COLTUNE_ADAPT_OUT read back" learned
finish
