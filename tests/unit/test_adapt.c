/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_adapt.c - the online learner's judgement (select/adapt_judge.h) on
 * recorded timings, and the adapt rules: a turn's measure, deterministic verdicts, ties, a
 * noisy A/A pair, successive halving (sparing the favoured), losers dropped (against pmpi and
 * against what stands), the duel between rounds, a candidate that wins
 * in one batch of rounds and loses in the next (a re-check), a re-check the
 * noise leaves open (the choice kept, unless it measured slower), the grid
 * the rounds start on, the sign-test
 * ranks; "adapt" and "adapt:a|b" in a rules file, and what the decision
 * without MPI says of them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <string.h>

#include "select/adapt.h"
#include "select/decide.h"

#define MAXR 64

/* Recorded rounds: t[r][k] in microseconds (the judge only takes ratios). */
typedef struct rounds {
    double t[MAXR * CT_ADAPT_MAX_SLOTS];
    int n, nslots;
    int standing; /* the slot that stands (ct_judge_input); 0: none */
} rounds;

/* A round where slot k takes base[k] * (1 + jitter[k] * wobble(r)). */
static double wobble(int r, int k) { return sin(1.7 * r + 2.3 * k); }

static void add_round(rounds *rs, const double *base, const double *jitter)
{
    for (int k = 0; k < rs->nslots; k++)
        rs->t[rs->n * rs->nslots + k] = base[k] * (1.0 + jitter[k] * wobble(rs->n, k));
    rs->n++;
}

/* One more round, as a learner runs it (the slots not alive do not run:
 * their times are negative), judged with the favoured slots; returns the
 * slots alive after it. */
static uint64_t judge_round(rounds *rs, const double *base, const double *jitter,
                            uint64_t alive, uint64_t favoured, const ct_judge_knobs *kn,
                            ct_verdict *v)
{
    add_round(rs, base, jitter);
    for (int k = 0; k < rs->nslots; k++)
        if (!(alive >> k & 1u))
            rs->t[(rs->n - 1) * rs->nslots + k] = -1.0;
    ct_judge_input in = {rs->t, rs->n, rs->nslots, alive, favoured, rs->standing};
    ct_judge(&in, kn, v);
    return v->alive;
}

/* Runs rounds, as a learner does, until the verdict is not open. */
static ct_verdict run(rounds *rs, const double *base, const double *jitter,
                      const ct_judge_knobs *kn)
{
    ct_verdict v;
    uint64_t alive = ((uint64_t)1 << rs->nslots) - 1;
    for (;;) {
        alive = judge_round(rs, base, jitter, alive, 0, kn, &v);
        if (v.kind != CT_VERDICT_OPEN)
            return v;
        assert_true(rs->n < kn->max_rounds); /* open past max_rounds never happens */
    }
}

static void test_interval_ranks(void **state)
{
    (void)state;
    int lo, hi;
    ct_median_interval_ranks(5, 0.95, &lo, &hi); /* too few for 95%: the whole range */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 4);
    ct_median_interval_ranks(6, 0.95, &lo, &hi); /* 2 P(B <= 0) = 1/32 */
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 5);
    ct_median_interval_ranks(10, 0.95, &lo, &hi); /* 2 P(B <= 1) = 0.021 */
    assert_int_equal(lo, 1);
    assert_int_equal(hi, 8);
    ct_median_interval_ranks(2000, 0.95, &lo, &hi); /* no underflow */
    assert_true(lo > 900 && lo < 1000 && hi == 1999 - lo);
}

/* A turn's measure: the median of the iterations no other learner's call
 * ran in, or of all when every one had such a call. */
static void test_turn_measure(void **state)
{
    (void)state;
    const double t[] = {40, 300, 42, 41, 250};
    const unsigned char all[] = {1, 1, 1, 1, 1}, some[] = {1, 0, 1, 1, 0},
                        none[] = {0, 0, 0, 0, 0}, two[] = {1, 0, 1, 0, 0};
    assert_true(ct_judge_turn(t, all, 5) == 42);   /* one descheduled call does not count */
    assert_true(ct_judge_turn(t, some, 5) == 41);  /* the iterations alone */
    assert_true(ct_judge_turn(t, none, 5) == 42);  /* none alone: all of them */
    assert_true(ct_judge_turn(t, two, 5) == 41);   /* an even count: the middle pair's mean */
    assert_true(ct_judge_turn(t, all, 1) == 40);
    assert_true(ct_judge_turn(t, all, 0) < 0);
}

/* pmpi 100, a candidate at 50 (2x) and one at 150: the 2x one wins at
 * min_win rounds, the same way every time. */
static void test_clear_winner_deterministic(void **state)
{
    (void)state;
    const double base[] = {100, 100, 50, 150}, jitter[] = {0.02, 0.02, 0.02, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 4}, b = {.nslots = 4};
    ct_verdict va = run(&a, base, jitter, &kn), vb = run(&b, base, jitter, &kn);
    assert_int_equal(va.kind, CT_VERDICT_WIN);
    assert_int_equal(va.winner, 2);
    /* a re-check that confirms keeps it */
    assert_int_equal(ct_judge_settle(&va, 2, CT_STAND_FASTER), 2);
    assert_int_equal(a.n, kn.min_win);
    assert_true(va.est[2].point > 1.9 && va.est[2].point < 2.1);
    assert_true(va.est[2].lo >= va.threshold);
    assert_int_equal(vb.kind, va.kind);
    assert_int_equal(vb.winner, va.winner);
    assert_int_equal(b.n, a.n);
    assert_true(va.est[2].point == vb.est[2].point && va.est[2].lo == vb.est[2].lo &&
                va.est[2].hi == vb.est[2].hi && va.est[2].n == vb.est[2].n);
}

/* Two candidates with the same times: the first slot wins. */
static void test_tie_first_slot(void **state)
{
    (void)state;
    const double base[] = {100, 100, 60, 60}, jitter[] = {0.01, 0.01, 0, 0};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 4};
    ct_verdict v = run(&rs, base, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_WIN);
    assert_int_equal(v.winner, 2);
}

/* pmpi against itself varies by 40%: a 1.2x candidate cannot clear the
 * noise, and is dropped as futile (its interval's upper end below the win
 * threshold) long before the rounds run out; a first decision keeps pmpi, a
 * re-check of that candidate on the same rounds keeps it (faster, but
 * hidden by the noise), and a re-check of pmpi keeps pmpi. */
static void test_noisy_aa_keeps_pmpi(void **state)
{
    (void)state;
    const double base[] = {100, 100, 83}, jitter[] = {0.4, 0.4, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 3};
    ct_verdict v = run(&rs, base, jitter, &kn);
    assert_true(v.noise > 0.2);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_int_equal(v.winner, CT_ADAPT_BASE);
    assert_true(rs.n < kn.max_rounds / 4);
    assert_true(v.est[2].point > 1.1);
    assert_int_equal(ct_judge_settle(&v, -1, CT_STAND_FASTER), CT_ADAPT_BASE);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), 2);
    assert_int_equal(ct_judge_settle(&v, CT_ADAPT_BASE, CT_STAND_FASTER), CT_ADAPT_BASE);
}

/* Every candidate slower than pmpi: all dropped after min_drop rounds, pmpi
 * wins without waiting for max_rounds. */
static void test_losers_dropped(void **state)
{
    (void)state;
    const double base[] = {100, 100, 130, 200, 101}, jitter[] = {0.01, 0.01, 0.01, 0.01, 0.01};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 5};
    ct_verdict v = run(&rs, base, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_int_equal(v.winner, CT_ADAPT_BASE);
    assert_int_equal(rs.n, kn.min_drop);
    assert_int_equal(v.alive, 3u);
}

/* Eight candidates of distinct speeds: after halve_every rounds the slower
 * half is gone, and the fastest wins. */
static void test_successive_halving(void **state)
{
    (void)state;
    double base[10] = {100, 100}, jitter[10] = {0};
    for (int k = 2; k < 10; k++)
        base[k] = 20.0 + 5.0 * k; /* slot 2 fastest (30), slot 9 slowest (65) */
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 10};
    uint64_t alive = (1u << 10) - 1;
    ct_verdict v;
    for (int r = 0; r < kn.halve_every; r++)
        alive = judge_round(&rs, base, jitter, alive, 0, &kn, &v);
    assert_int_equal(v.kind, CT_VERDICT_OPEN);
    assert_int_equal(alive, 3u | (0xfu << 2)); /* pmpi twice and slots 2-5 */
    rs.n = 0;
    v = run(&rs, base, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_WIN);
    assert_int_equal(v.winner, 2);
}

/* Halving spares the favoured candidate (the last duel's winner) though its
 * median ranks it in the slower half; the rule that drops a candidate unable
 * to beat pmpi by the margin still applies to it. */
static void test_halving_spares_favoured(void **state)
{
    (void)state;
    double base[10] = {100, 100}, jitter[10] = {0};
    for (int k = 2; k < 10; k++)
        base[k] = 20.0 + 5.0 * k; /* slot 9 the slowest candidate (65) */
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 10};
    uint64_t alive = (1u << 10) - 1;
    ct_verdict v;
    for (int r = 0; r < kn.halve_every; r++)
        alive = judge_round(&rs, base, jitter, alive, 1u << 9, &kn, &v);
    assert_int_equal(v.kind, CT_VERDICT_OPEN);
    assert_int_equal(alive, 3u | (0xfu << 2) | (1u << 9)); /* slots 2-5 and the favoured */

    base[9] = 130.0; /* slower than pmpi: dropped after min_drop rounds, favoured or not */
    rs.n = 0;
    alive = (1u << 10) - 1;
    for (int r = 0; r < kn.min_drop; r++) {
        alive = judge_round(&rs, base, jitter, alive, 1u << 9, &kn, &v);
        if (rs.n < kn.min_drop) /* halved (halve_every < min_drop), not dropped */
            assert_true(alive >> 9 & 1u);
    }
    assert_false(alive >> 9 & 1u);
}

/* A candidate twice as fast as pmpi in one batch of rounds (it wins), then
 * slower than pmpi in the next (the application changed phase: the re-check
 * finds pmpi better). */
static void test_win_then_lose(void **state)
{
    (void)state;
    const double fast[] = {100, 100, 50}, slow[] = {100, 100, 140}, jitter[] = {0.03, 0.03, 0.03};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds first = {.nslots = 3}, second = {.nslots = 3, .standing = 2}; /* its re-check */
    ct_verdict v = run(&first, fast, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_WIN);
    assert_int_equal(v.winner, 2);
    assert_int_equal(ct_judge_settle(&v, -1, CT_STAND_FASTER), 2);
    v = run(&second, slow, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_int_equal(v.winner, CT_ADAPT_BASE);
    /* the re-check demotes it */
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), CT_ADAPT_BASE);
}

/* A re-check where the choice has become 10% slower than pmpi, behind the
 * same noise: whether the rounds run out or drop it, it is demoted; the
 * rounds where its median comes out above 1 do not end the re-check (it
 * stands, but is not faster at the confidence). */
static void test_recheck_slower_demoted(void **state)
{
    (void)state;
    const double slower[] = {100, 100, 110}, jitter[] = {0.4, 0.4, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 3, .standing = 2};
    ct_verdict v = run(&rs, slower, jitter, &kn);
    assert_true(v.kind == CT_VERDICT_NO_EVIDENCE || v.kind == CT_VERDICT_BASELINE);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), CT_ADAPT_BASE);
}

/* A candidate that stands and that no other candidate beats. As fast as
 * pmpi within the margin, it is dropped (BASELINE) yet stays, its median
 * over every round above 1. 3% slower than pmpi, steadily, it goes, the rules'
 * incumbent too (its interval below 1). 10% slower behind 40% noise, a
 * re-checked choice goes (its median below 1) but the rules' incumbent
 * stays (pmpi not faster at the confidence). With nothing standing, pmpi. */
static void test_standing_kept_unless_slower(void **state)
{
    (void)state;
    const double level[] = {100, 100, 98}, slower[] = {100, 100, 103},
                 steady[] = {0.01, 0.01, 0.01}, hidden[] = {100, 100, 110},
                 noisy[] = {0.4, 0.4, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 3}, b = {.nslots = 3}, c = {.nslots = 3, .standing = 2};
    ct_verdict v = run(&a, level, steady, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_false(v.alive >> 2 & 1u);
    assert_int_equal(v.est[2].n, a.n); /* dropped, still estimated */
    assert_true(v.est[2].point > 1.0);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), 2);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_UNLESS_SLOWER), 2);
    assert_int_equal(ct_judge_settle(&v, -1, CT_STAND_UNLESS_SLOWER), CT_ADAPT_BASE);

    v = run(&b, slower, steady, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_true(v.est[2].hi < 1.0);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), CT_ADAPT_BASE);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_UNLESS_SLOWER), CT_ADAPT_BASE);

    v = run(&c, hidden, noisy, &kn);
    assert_true(v.kind == CT_VERDICT_NO_EVIDENCE || v.kind == CT_VERDICT_BASELINE);
    assert_true(v.est[2].point < 1.0 && v.est[2].hi >= 1.0);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), CT_ADAPT_BASE);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_UNLESS_SLOWER), 2);
}

/* A candidate dropped in an early round keeps its estimate, from the rounds
 * it ran, in every later verdict: halving drops slots 2 and 5 after round
 * 2, and the noisy A/A pair keeps the verdict open beyond it; slot 3
 * stands (the futility rule, which would drop a 1.2x candidate behind 40%
 * noise, spares what stands). */
static void test_dropped_keeps_estimate(void **state)
{
    (void)state;
    const double base[] = {100, 100, 98, 83, 84, 99}, jitter[] = {0.4, 0.4, 0.01, 0.02, 0.02, 0.01};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 6, .standing = 3};
    ct_verdict v = run(&rs, base, jitter, &kn);
    assert_int_not_equal(v.kind, CT_VERDICT_WIN);
    assert_true(rs.n > kn.halve_every);
    assert_true(v.alive >> 3 & 1u);
    assert_int_equal(v.est[2].n, kn.halve_every);
    assert_int_equal(v.est[5].n, kn.halve_every);
    assert_int_equal(v.est[3].n, rs.n);
}

/* Futility: behind 10% A/A noise (the win threshold 1.1), a steady
 * candidate 4% faster than pmpi can never win: its interval's upper end
 * stays below the threshold, and it is dropped after min_drop rounds
 * (BASELINE), where the margin alone (1.05) kept it to the last round; one
 * 30% faster is kept and wins. */
static void test_futile_dropped(void **state)
{
    (void)state;
    const double close[] = {100, 100, 96}, clear[] = {100, 100, 77},
                 jitter[] = {0.1, 0.1, 0.01};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 3}, b = {.nslots = 3};
    ct_verdict v = run(&a, close, jitter, &kn);
    assert_true(v.threshold > 1.08);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_true(a.n <= kn.min_win + 2);
    assert_true(v.est[2].hi >= 1.0 + kn.margin); /* the margin alone would keep it */
    assert_true(v.est[2].hi < v.threshold);
    v = run(&b, clear, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_WIN);
    assert_int_equal(v.winner, 2);
}

/* The rules' incumbent (slot 2, 2x, standing) against slower candidates,
 * behind a noisy A/A pair that keeps a win out of reach: before min_win
 * rounds the rounds go on; then no live challenger can beat it by the
 * margin (they are dropped), and it stands. The same rounds with no
 * candidate standing, or with slot 3 standing (slower than slot 2), go on;
 * a noisy challenger that may beat the incumbent by the margin (6% faster,
 * 10% jitter) keeps them going too. */
static void test_incumbent_stands(void **state)
{
    (void)state;
    const double base[] = {100, 100, 50, 80, 90}, close[] = {100, 100, 50, 47, 90},
                 jitter[] = {0.4, 0.4, 0.02, 0.1, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 5, .standing = 2}, b = {.nslots = 5, .standing = 2},
           none = {.nslots = 5}, slow = {.nslots = 5, .standing = 3};
    const uint64_t all = (1u << 5) - 1;
    ct_verdict v;
    for (int r = 0; r < kn.min_win; r++) {
        judge_round(&none, base, jitter, all, 1u << 2, &kn, &v);
        assert_int_equal(v.kind, CT_VERDICT_OPEN);
        judge_round(&slow, base, jitter, all, 1u << 2, &kn, &v);
        assert_int_equal(v.kind, CT_VERDICT_OPEN);
        judge_round(&b, close, jitter, all, 1u << 2, &kn, &v);
        assert_int_equal(v.kind, CT_VERDICT_OPEN);
        assert_true(v.alive >> 3 & 1u);
        judge_round(&a, base, jitter, all, 1u << 2, &kn, &v);
        assert_int_equal(v.kind, r + 1 < kn.min_win ? CT_VERDICT_OPEN : CT_VERDICT_STANDS);
    }
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_UNLESS_SLOWER), 2);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_FASTER), 2);
}

/* Halving after round 2 keeps the faster half of four candidates, slots 2
 * and 3; slot 5, the slowest, goes unless it stands (too few rounds for the
 * rule that drops a candidate unable to beat pmpi). */
static void test_halving_spares_standing(void **state)
{
    (void)state;
    const double base[] = {100, 100, 50, 60, 70, 95}, jitter[] = {0.4, 0.4, 0.02, 0.02, 0.02, 0.02};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 6}, b = {.nslots = 6, .standing = 5};
    uint64_t alive_a = (1u << 6) - 1, alive_b = alive_a;
    ct_verdict v;
    for (int r = 0; r < kn.halve_every; r++) {
        alive_a = judge_round(&a, base, jitter, alive_a, 0, &kn, &v);
        alive_b = judge_round(&b, base, jitter, alive_b, 0, &kn, &v);
    }
    assert_int_equal(alive_a, 3u | (1u << 2) | (1u << 3));
    assert_int_equal(alive_b, 3u | (1u << 2) | (1u << 3) | (1u << 5));
}

/* A re-check that measures the choice 10% slower than pmpi, steadily: a
 * candidate that does not stand goes after min_drop rounds; the one that
 * stands (the rules' choice) runs min_demote rounds, then goes too and,
 * pmpi faster at the confidence, is demoted. */
static void test_standing_dropped_later(void **state)
{
    (void)state;
    const double slower[] = {100, 100, 110}, steady[] = {0.01, 0.01, 0.01};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 3}, b = {.nslots = 3, .standing = 2};
    assert_true(kn.min_demote > kn.min_drop);
    ct_verdict v = run(&a, slower, steady, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_int_equal(a.n, kn.min_drop);
    v = run(&b, slower, steady, &kn);
    assert_int_equal(v.kind, CT_VERDICT_BASELINE);
    assert_int_equal(b.n, kn.min_demote);
    assert_int_equal(ct_judge_settle(&v, 2, CT_STAND_UNLESS_SLOWER), CT_ADAPT_BASE);
}

/* A candidate 20% slower than what stands (slot 2), with speedups over a
 * noisy pmpi that overlap: dropped after min_drop rounds beside it, and what
 * stands then stands at min_win. With nothing standing it stays; standing
 * itself, the faster slot 2 is not dropped. What stands 3% faster than
 * pmpi, not by the margin, drops nothing so: a candidate 6% faster than
 * pmpi, 3% faster than it, stays. */
static void test_below_standing_dropped(void **state)
{
    (void)state;
    const double base[] = {100, 100, 50, 60}, jitter[] = {0.4, 0.4, 0.02, 0.02},
                 weak[] = {100, 100, 97, 94.3}, steady[] = {0.01, 0.01, 0.002, 0.002};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds a = {.nslots = 4, .standing = 2}, none = {.nslots = 4},
           slow = {.nslots = 4, .standing = 3}, w3 = {.nslots = 4, .standing = 2};
    uint64_t alive_a = 0xfu, alive_none = 0xfu, alive_slow = 0xfu, alive_w3 = 0xfu;
    ct_verdict v, w, x;
    for (int r = 1; r <= kn.min_win; r++) {
        alive_a = judge_round(&a, base, jitter, alive_a, 0, &kn, &v);
        alive_none = judge_round(&none, base, jitter, alive_none, 0, &kn, &w);
        alive_slow = judge_round(&slow, base, jitter, alive_slow, 0, &kn, &x);
        assert_int_equal(alive_a >> 3 & 1u, r < kn.min_drop);
        assert_int_equal(v.kind, r < kn.min_win ? CT_VERDICT_OPEN : CT_VERDICT_STANDS);
        assert_true(alive_none >> 3 & 1u);
        assert_int_equal(w.kind, CT_VERDICT_OPEN);
        assert_true(alive_slow >> 2 & 1u);
        assert_int_equal(x.kind, CT_VERDICT_OPEN); /* slot 3 stands, slot 2 is faster */
        alive_w3 = judge_round(&w3, weak, steady, alive_w3, 0, &kn, &w);
        assert_true(alive_w3 >> 3 & 1u);
    }
    assert_true(v.est[3].lo > 1.0 && v.est[3].point > 1.5); /* it beats pmpi: the pmpi rule keeps it */
    assert_true(w.est[2].point < 1.0 + kn.margin && w.est[3].point > 1.0 + kn.margin);
}

/* The duel between rounds: what stands, as the favourite, keeps its place
 * after one lost duel and is displaced by the second in a row; a won duel
 * starts the count again; with nothing standing, or a favourite that does
 * not stand, the faster side runs at once (what stands wins its place back
 * at once); a tie keeps the favourite. */
static void test_duel_upsets(void **state)
{
    (void)state;
    const int side[2] = {2, 5};
    const double five_faster[2] = {60, 50}, two_faster[2] = {50, 60}, tie[2] = {50, 50};
    int lost = 0;
    assert_int_equal(CT_JUDGE_DUEL_UPSETS, 2);
    assert_int_equal(ct_judge_duel(side, five_faster, 2, 2, &lost), 2);
    assert_int_equal(lost, 1);
    assert_int_equal(ct_judge_duel(side, five_faster, 2, 2, &lost), 5);
    assert_int_equal(lost, 0);
    assert_int_equal(ct_judge_duel(side, five_faster, 2, 2, &lost), 2);
    assert_int_equal(ct_judge_duel(side, two_faster, 2, 2, &lost), 2);
    assert_int_equal(lost, 0);
    assert_int_equal(ct_judge_duel(side, five_faster, 2, 2, &lost), 2);
    lost = 0;
    assert_int_equal(ct_judge_duel(side, five_faster, 2, -1, &lost), 5);
    assert_int_equal(ct_judge_duel(side, two_faster, 5, 2, &lost), 2);
    assert_int_equal(lost, 0);
    assert_int_equal(ct_judge_duel(side, tie, 5, -1, &lost), 5);
    assert_int_equal(ct_judge_duel(side, five_faster, 2, 2, &lost), 2);
    assert_int_equal(lost, 1);
    assert_int_equal(ct_judge_duel(side, tie, 2, 2, &lost), 2); /* a tie: not lost */
    assert_int_equal(lost, 0);
}

/* A verdict for ct_judge_plan_duel: slots 2-5 are candidates, those of
 * `alive` in the rounds, with these speedups over pmpi; best the highest of
 * the live ones. */
static ct_verdict duel_verdict(uint64_t alive, const double point[6])
{
    ct_verdict v;
    memset(&v, 0, sizeof v);
    v.alive = alive | 3u;
    v.best = -1;
    for (int k = 2; k < 6; k++) {
        v.est[k] = (ct_estimate){point[k], point[k] - 0.1, point[k] + 0.1, 4};
        if ((alive >> k & 1u) && (v.best < 0 || point[k] > point[v.best]))
            v.best = k;
    }
    return v;
}

/* ct_judge_plan_duel on v (6 slots) runs `runs`, and the duel's sides are
 * side0 and side1 (-1: no duel). */
static void expect_duel(const ct_verdict *v, int favour, int standing, int recheck, int runs,
                        int side0, int side1)
{
    int side[2];
    assert_int_equal(ct_judge_plan_duel(v, 6, favour, standing, recheck, side), runs);
    assert_int_equal(side[0], side0);
    assert_int_equal(side[1], side1);
}

/* The duel between rounds: the favourite runs, unchallenged where the
 * rounds rank it first and faster than pmpi, else against the best other
 * faster than pmpi, or pmpi; a favourite no longer in the rounds gives way
 * to their best, nothing faster than pmpi to pmpi; what stands challenges
 * whatever displaced it while faster than pmpi; at a re-check the choice
 * runs while the rounds keep it, and pmpi does not duel it (the rounds
 * judge it). */
static void test_plan_duel(void **state)
{
    (void)state;
    const double pts[6] = {0, 0, 1.3, 1.5, 1.8, 1.1}, slow[6] = {0, 0, 0.8, 0.9, 0.7, 0.6};
    ct_verdict v = duel_verdict(0x3cu, pts); /* 2-5 live, 4 first */
    expect_duel(&v, 4, -1, 0, 4, 4, -1);     /* the first: no duel */
    expect_duel(&v, 3, -1, 0, 3, 3, 4);      /* against the first */
    expect_duel(&v, 2, -1, 0, 2, 2, 4);
    v = duel_verdict(0x2cu, pts);       /* 4 dropped: the favourite gives way to the first, 3 */
    expect_duel(&v, 4, -1, 0, 3, 2, 3); /* slot order, not the favourite first */
    v = duel_verdict(0x3cu, slow);      /* nothing beats pmpi */
    expect_duel(&v, -1, -1, 0, CT_ADAPT_BASE, CT_ADAPT_BASE, -1);
    expect_duel(&v, 3, -1, 0, 3, CT_ADAPT_BASE, 3); /* pmpi challenges */
    /* What stands (2) challenges the favourite that displaced it (4)... */
    v = duel_verdict(0x3cu, pts);
    expect_duel(&v, 4, 2, 0, 4, 2, 4);
    /* ...while faster than pmpi. */
    const double weak[6] = {0, 0, 0.95, 1.5, 1.8, 1.1};
    v = duel_verdict(0x3cu, weak);
    expect_duel(&v, 4, 2, 0, 4, 4, -1);
    /* A re-check of 3: it runs whatever the favourite, against the best
     * other; alone, unchallenged. */
    v = duel_verdict(0x3cu, pts);
    expect_duel(&v, 4, 3, 1, 3, 3, 4);
    v = duel_verdict(0x08u, pts);
    expect_duel(&v, 3, 3, 1, 3, 3, -1);
    v = duel_verdict(0x08u, slow); /* slower than pmpi: still no duel, the rounds judge */
    expect_duel(&v, 3, 3, 1, 3, 3, -1);
    /* A re-checked choice the rounds dropped runs no more: the favourite
     * does, against the best other. */
    v = duel_verdict(0x34u, pts);
    expect_duel(&v, 2, 3, 1, 2, 2, 4);
}

/* The start of the next round: on the grid of G (the smallest power of two
 * not below the round's calls times (100 - share) / share), nearest to where
 * the share puts it and after the round; two learners whose wants differ a
 * little start together; extreme shares and wants stay in range. */
/* A duel's cost is what it took beyond the faster side run throughout
 * (charged to the share): 18 iterations a side, 100 us against 130 us, cost
 * 540 us, whichever side was faster; nothing without two measured sides. */
static void test_duel_cost(void **state)
{
    (void)state;
    const double a[2] = {100e-6, 130e-6}, b[2] = {130e-6, 100e-6}, none[2] = {100e-6, -1};
    assert_true(fabs(ct_judge_duel_cost(a, 18) - 540e-6) < 1e-12);
    assert_true(fabs(ct_judge_duel_cost(b, 18) - 540e-6) < 1e-12);
    assert_true(ct_judge_duel_cost(none, 18) == 0.0);
    assert_true(ct_judge_duel_cost(a, 0) == 0.0);
}

static void test_next_round(void **state)
{
    (void)state;
    /* share 5%, 11 turns of 6 calls: 66 * 95 / 5 = 1254, G = 2048 */
    long r = ct_judge_next_round(94, 1500, 66, 5);
    assert_int_equal(94 + r, 2048);
    assert_int_equal(ct_judge_next_round(94, 1900, 66, 5), ct_judge_next_round(94, 2300, 66, 5));
    assert_int_equal(94 + ct_judge_next_round(94, 3500, 66, 5), 4096); /* nearest */
    assert_int_equal(2100 + ct_judge_next_round(2100, 0, 66, 5), 4096); /* after the round */
    /* share 1%, 64 turns of 6 calls: 384 * 99 = 38016, G = 65536 */
    assert_int_equal(ct_judge_next_round(0, 0, 384, 1), 65536);
    /* share 96%: 384 * 4 / 96 = 16 exactly, G = 16 (integer arithmetic) */
    assert_int_equal(100 + ct_judge_next_round(100, 0, 384, 96), 112);
    /* share 50%, one call per round: G = 1, the next call */
    assert_int_equal(ct_judge_next_round(7, 0, 1, 50), 1);
    /* a want past any run does not overflow */
    r = ct_judge_next_round(1000, LONG_MAX, 66, 5);
    assert_true(r > 0 && (1000 + r) % 2048 == 0);
}

/* Of two candidates that both clear the threshold, the faster wins. */
static void test_fastest_winner(void **state)
{
    (void)state;
    const double base[] = {100, 100, 70, 40}, jitter[] = {0.01, 0.01, 0.01, 0.01};
    const ct_judge_knobs kn = ct_judge_knobs_default();
    rounds rs = {.nslots = 4};
    ct_verdict v = run(&rs, base, jitter, &kn);
    assert_int_equal(v.kind, CT_VERDICT_WIN);
    assert_int_equal(v.winner, 3);
    assert_true(v.est[2].lo >= v.threshold);
}

/* What an estimate says to a person: no interval from one round (the demo
 * printed "83.02x [83.02, 83.02]" under load), nothing without a round. */
static void test_format_estimate(void **state)
{
    (void)state;
    char buf[64];
    ct_judge_format(&(ct_estimate){0, 0, 0, 0}, buf, sizeof buf);
    assert_string_equal(buf, "");
    ct_judge_format(&(ct_estimate){83.02, 83.02, 83.02, 1}, buf, sizeof buf);
    assert_string_equal(buf, "83.02x (1 round, no interval yet)");
    ct_judge_format(&(ct_estimate){1.5, 1.41, 1.58, 4}, buf, sizeof buf);
    assert_string_equal(buf, "1.50x [1.41, 1.58]");
    ct_judge_format(&(ct_estimate){1.5, 1.41, 1.58, 4}, buf, 6);
    assert_string_equal(buf, "1.50x"); /* cut, still terminated */
}

static void test_size_classes(void **state)
{
    (void)state;
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALLV, 4096), -1); /* rank-local size */
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 0), 0);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 1), 1);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 2), 2);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 3), 2);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 1024), 11);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLTOALL, 2047), 11);
    assert_int_equal(ct_adapt_class(CT_COLL_ALLGATHER_INTER, 1L << 62), CT_ADAPT_CLASSES - 2);
}

/* adapt rules: parsed, their candidates kept, and the decision without MPI
 * names them; COLTUNE_ADAPT makes every MPI collective adapt. */
static void test_adapt_rules(void **state)
{
    (void)state;
    static const char text[] = "alltoall msg_size=0-1k adapt:shm|tuna:radix=2|pmpi\n"
                               "alltoallv adapt\n"
                               "alltoall pairwise\n";
    ct_config *cfg = ct_config_global();
    memset(cfg, 0, sizeof *cfg);
    assert_int_equal(ct_rules_parse_report(text, "t", &cfg->rules, NULL, NULL), 0);
    assert_int_equal(cfg->rules.count, 3);
    const ct_rule *r = &cfg->rules.rules[0];
    assert_true(r->adapt);
    assert_int_equal(r->ncands, 3);
    assert_string_equal(r->cands[1].alg->name, "tuna");
    assert_string_equal(r->spec.alg->name, "pmpi");
    assert_true(cfg->rules.rules[1].adapt);
    assert_int_equal(cfg->rules.rules[1].ncands, 0);
    assert_false(cfg->rules.rules[2].adapt);

    const ct_shape env = {8, 8, 1};
    const ct_topo topo = {.N = 1, .Q = 8, .shared = 1};
    ct_choice c;
    ct_call_facts f = {512, 0, 0};
    assert_int_equal(
        ct_decide_offline(cfg, CT_COLL_ALLTOALL, &env, &topo, &f, 0, NULL, NULL, &c, NULL),
        MPI_SUCCESS);
    assert_true(c.adapt);
    assert_ptr_equal(c.adapt_rule, &cfg->rules.rules[0]);
    assert_int_equal(c.rule_line, 1);
    f.msg_size = 4096;
    assert_int_equal(
        ct_decide_offline(cfg, CT_COLL_ALLTOALL, &env, &topo, &f, 0, NULL, NULL, &c, NULL),
        MPI_SUCCESS);
    assert_false(c.adapt);
    assert_string_equal(c.alg->name, "pairwise");
    cfg->set.adapt = 1; /* COLTUNE_ADAPT=1: before the rules */
    assert_int_equal(
        ct_decide_offline(cfg, CT_COLL_ALLTOALL, &env, &topo, &f, 0, NULL, NULL, &c, NULL),
        MPI_SUCCESS);
    assert_true(c.adapt);
    assert_null(c.adapt_rule);
    /* the sparse exchanges have no pmpi: never adaptive */
    assert_int_equal(
        ct_decide_offline(cfg, CT_COLL_ALLTOALL_CRS, &env, &topo, &f, 0, NULL, NULL, &c, NULL),
        MPI_SUCCESS);
    assert_false(c.adapt);
    ct_config_free(cfg);

    /* errors name the candidate */
    int errors = ct_rules_parse_report("alltoall adapt:shm|nosuch\nalltoall_crs adapt\n"
                                       "alltoall adaptive\n",
                                       "t", &cfg->rules, NULL, NULL);
    assert_int_equal(errors, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_ranks),
        cmocka_unit_test(test_turn_measure),
        cmocka_unit_test(test_clear_winner_deterministic),
        cmocka_unit_test(test_tie_first_slot),
        cmocka_unit_test(test_noisy_aa_keeps_pmpi),
        cmocka_unit_test(test_losers_dropped),
        cmocka_unit_test(test_successive_halving),
        cmocka_unit_test(test_halving_spares_favoured),
        cmocka_unit_test(test_win_then_lose),
        cmocka_unit_test(test_recheck_slower_demoted),
        cmocka_unit_test(test_standing_kept_unless_slower),
        cmocka_unit_test(test_dropped_keeps_estimate),
        cmocka_unit_test(test_futile_dropped),
        cmocka_unit_test(test_duel_cost),
        cmocka_unit_test(test_incumbent_stands),
        cmocka_unit_test(test_standing_dropped_later),
        cmocka_unit_test(test_halving_spares_standing),
        cmocka_unit_test(test_below_standing_dropped),
        cmocka_unit_test(test_duel_upsets),
        cmocka_unit_test(test_plan_duel),
        cmocka_unit_test(test_next_round),
        cmocka_unit_test(test_fastest_winner),
        cmocka_unit_test(test_format_estimate),
        cmocka_unit_test(test_size_classes),
        cmocka_unit_test(test_adapt_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
