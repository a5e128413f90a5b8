/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adapt_judge.h - how the online learner (adapt.h) judges its measurements:
 * the statistics of coltune-tune (scripts/coltune-tune.in), on the rounds of
 * one learner. Pure functions of the agreed times, so every rank that holds
 * the same times reaches the same verdict; no MPI.
 *
 * A round runs every live candidate once, interleaved; slot 0 is pmpi (the
 * baseline), slot 1 pmpi again (the A/A pair that measures the noise), the
 * others the candidates. A candidate's speedup is the median over rounds of
 * pmpi's time / its time in the same round, with the distribution-free
 * interval of the sign test (order statistics of the ratios). It wins when
 * the interval's lower end clears 1 + max(margin, noise), noise being how far
 * the A/A interval reaches from 1 (never below the floor); one whose upper
 * end stays below that threshold can never win, and is dropped after
 * min_drop rounds (futility). Where a candidate
 * stands (the rules' choice, a choice at its re-check, a sweep's defaults),
 * a candidate that cannot beat it by the margin (their ratio paired by
 * round, as against pmpi) is dropped after min_drop rounds while it beats
 * pmpi by the margin, and the rounds
 * end, after min_win rounds at least, as soon as it is faster than pmpi at
 * the confidence (its interval above 1) and no other can beat it by the
 * margin; halving spares it, and it is dropped as unable to beat pmpi only
 * after min_demote rounds.
 */
#ifndef CT_ADAPT_JUDGE_H
#define CT_ADAPT_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#define CT_ADAPT_BASE 0   /* slot of pmpi, the baseline */
#define CT_ADAPT_AA 1     /* slot of pmpi's second copy (A/A) */
#define CT_ADAPT_MAX_SLOTS 64 /* slots of a round: pmpi twice and the candidates */
#define CT_JUDGE_MAX_ROUNDS 64 /* rounds an estimate reads at most (max_rounds) */

/* A speedup over pmpi and its confidence interval from n paired rounds. */
typedef struct ct_estimate {
    double point, lo, hi;
    int n;
} ct_estimate;

/* The learner's knobs (settings.h has the variables that set them). */
typedef struct ct_judge_knobs {
    double margin;      /* a win must beat pmpi by this fraction (0.05) */
    double noise_floor; /* the noise is never taken below this fraction (0.03) */
    double confidence;  /* of the intervals (0.95) */
    int halve_every;    /* every this many rounds, the slower half of the live
                           candidates (by median speedup) is dropped (2) */
    int keep;           /* halving keeps at least this many candidates (2) */
    int min_drop;       /* rounds before a candidate that cannot beat pmpi, or
                           what stands, by the margin is dropped (3) */
    int min_demote;     /* the same for the candidate that stands (6: the
                           fewest rounds whose whole range is an interval
                           at 95%; 5 give 94%) */
    int min_win;        /* rounds before a candidate may win (4) */
    int max_rounds;     /* rounds at most: then the evidence decides (64; at most
                           CT_JUDGE_MAX_ROUNDS) */
} ct_judge_knobs;

/* The defaults above. */
ct_judge_knobs ct_judge_knobs_default(void);

/* The times of one learner: t[r * nslots + k] is the slowest rank's time of
 * slot k in round r (r < nrounds), negative where slot k did not run. */
typedef struct ct_judge_input {
    const double *t;
    int nrounds, nslots;
    uint64_t alive; /* bit k: slot k still runs (bits 0 and 1 always set) */
    uint64_t favoured; /* live candidates halving keeps (the learner's last duel's
                          winner, adapt.c): the cut by medians spares them */
    int standing;      /* the candidate that stands where none wins (the rules'
                          choice, a choice at its re-check, a sweep's defaults:
                          ct_judge_settle); <= CT_ADAPT_AA: none */
} ct_judge_input;

typedef enum ct_verdict_kind {
    CT_VERDICT_OPEN = 0,    /* measure another round */
    CT_VERDICT_WIN,         /* slot `winner` beats pmpi */
    CT_VERDICT_BASELINE,    /* no candidate left: none could beat pmpi, or what
                               stands, by the margin */
    CT_VERDICT_NO_EVIDENCE, /* max_rounds reached without a win (ct_judge_settle) */
    CT_VERDICT_STANDS       /* what stands (ct_judge_input.standing) is faster than
                               pmpi at the confidence and no live candidate can
                               beat it by the margin */
} ct_verdict_kind;

typedef struct ct_verdict {
    ct_verdict_kind kind;
    int winner;         /* slot of the winner, CT_ADAPT_BASE unless WIN */
    int best;           /* the live candidate with the highest point (-1: none) */
    uint64_t alive;     /* the slots that run in the next round */
    double noise, threshold;
    ct_estimate aa;     /* pmpi against itself */
    ct_estimate est[CT_ADAPT_MAX_SLOTS]; /* each candidate slot's estimate, dropped ones
                                            too (n 0: none) */
} ct_verdict;

/* What a turn of a round measures on one rank (adapt.c): the median of its
 * n iterations' times t[i] (n <= CT_JUDGE_MAX_TURN), of those whose alone[i]
 * is set (no other learner's call in them), or of all when none is. */
#define CT_JUDGE_MAX_TURN 16
double ct_judge_turn(const double *t, const unsigned char *alone, int n);

/* 0-based ranks (lo, hi) of the order statistics of n samples that bound
 * their median with probability >= confidence; (0, n - 1), the whole range,
 * for the smallest n (up to 8 at 95%; below 6 it bounds the median with
 * less than 95%). */
void ct_median_interval_ranks(int n, double confidence, int *lo, int *hi);

/* The speedup of slot k over slot base from the rounds where both ran
 * (n 0 when none did). */
ct_estimate ct_judge_estimate(const ct_judge_input *in, int base, int k, double confidence);

/* What an estimate can say, for a person: "1.50x [1.41, 1.58]"; from one
 * round, which has no interval, "1.50x (1 round, no interval yet)"; ""
 * with no round. */
void ct_judge_format(const ct_estimate *e, char *buf, size_t len);

/* Judges the rounds so far (see the file comment): drops candidates that
 * can never clear the win threshold (after min_drop rounds; what stands
 * after min_demote, where it cannot beat pmpi by the margin) or that cannot
 * beat what stands (after min_drop rounds, while it beats pmpi by the
 * margin), halves the field every halve_every rounds (successive halving:
 * the slower half by median goes, except the favoured and what stands), and
 * says whether a candidate wins, none can (BASELINE), the rounds ran out,
 * what stands holds off every other (STANDS), or another round is needed. */
void ct_judge(const ct_judge_input *in, const ct_judge_knobs *kn, ct_verdict *v);

/* What a candidate that stands must have measured over the rounds (dropped
 * or not) to stay where no candidate wins. */
typedef enum ct_stand {
    CT_STAND_FASTER,       /* its median faster than pmpi's (above 1): a
                              re-checked choice, the defaults of a sweep */
    CT_STAND_UNLESS_SLOWER /* anything but an interval below 1 (pmpi faster
                              at the confidence): the rules' incumbent */
} ct_stand;

/* The slot a finished exploration settles on (v->kind is not OPEN): the
 * winner of a WIN; else the candidate that stands, `kept` (> CT_ADAPT_AA;
 * -1 for none), if it measured as stand asks (as it did where it STANDS);
 * else pmpi (CT_ADAPT_BASE).
 * Rounds that cannot tell the candidates apart (NO_EVIDENCE), or that find
 * none faster than pmpi by the margin (BASELINE), do not replace what
 * stands: a re-check demotes a choice that has become slower, not one the
 * noise now hides, and learning replaces the rules' choice with pmpi only
 * where pmpi was measured faster. */
int ct_judge_settle(const ct_verdict *v, int kept, ct_stand stand);

/* The duel that opens the calls between rounds (adapt.c), planned from the
 * verdict v of the last round (nslots slots). Returns the slot that runs
 * between rounds apart from the duel: the favourite (the faster in the last
 * duel, at first what the rules would run; -1 none) while the rounds keep
 * it, else the rounds' best while faster than pmpi, else pmpi; at a
 * re-check (recheck set), the choice (standing) while the rounds keep it.
 * side[0] < side[1] are the duel's two sides, in slot order (side[1] -1: no
 * duel): that slot against the best other faster than pmpi by the rounds,
 * or, where none is, pmpi against a candidate (not at a re-check, whose
 * rounds judge the choice); no duel where the favourite is the rounds' best
 * and faster than pmpi; but what stands (standing, <= CT_ADAPT_AA: none),
 * wherever it is faster than pmpi and does not run, challenges whatever
 * runs. */
int ct_judge_plan_duel(const ct_verdict *v, int nslots, int favour, int standing, int recheck,
                       int side[2]);

/* Duels that what stands must lose in a row before another displaces it
 * (ct_judge_duel). */
#define CT_JUDGE_DUEL_UPSETS 2

/* The duel between rounds (adapt.c): side[0] and side[1] measured t[0] and
 * t[1] per iteration (agreed, so the same on every rank), `favour` ran
 * before it. Returns the slot that runs until the next round and that the
 * next duel favours: the faster side (favour on a tie), except that what
 * stands (standing, <= CT_ADAPT_AA: none), as the favourite, keeps its place
 * until it has lost CT_JUDGE_DUEL_UPSETS duels in a row; *lost counts them
 * (back to 0 when the favourite wins or is displaced). */
int ct_judge_duel(const int side[2], const double t[2], int favour, int standing, int *lost);

/* What a duel of `calls` iterations a side, measured t[0] and t[1] per
 * iteration, cost beyond running the faster side throughout: exploration's
 * cost, charged to the share (adapt.c) like a round's, so that the next
 * round waits the longer. */
double ct_judge_duel_cost(const double t[2], int calls);

/* The calls from call `calls`, at the end of a judged round, to the start of
 * the next: the multiple of G nearest to calls + want, and at least the first
 * multiple after calls. want is the calls that keep the rounds within the
 * share (share_pct percent, below 100) of the time so far; G is the smallest
 * power of two not below round_calls (100 - share_pct) / share_pct (the
 * calls that keep the round's own calls within the share), the same for
 * every learner whose rounds have as many turns (adapt.c, pace). */
long ct_judge_next_round(long calls, long want, long round_calls, int share_pct);

#endif
