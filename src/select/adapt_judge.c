/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adapt_judge.c - the learner's statistics (adapt_judge.h), as coltune-tune
 * computes them (median_interval_ranks, paired_estimate, cell_noise, decide
 * in scripts/coltune-tune.in).
 */
#include "select/adapt_judge.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

ct_judge_knobs ct_judge_knobs_default(void)
{
    return (ct_judge_knobs){.margin = 0.05,
                            .noise_floor = 0.03,
                            .confidence = 0.95,
                            .halve_every = 2,
                            .keep = 2,
                            .min_drop = 3,
                            .min_demote = 6,
                            .min_win = 4,
                            .max_rounds = CT_JUDGE_MAX_ROUNDS};
}

/* The number of samples below the median is Binomial(n, 1/2): [x(l),
 * x(n-1-l)] misses the median with probability 2 P(B <= l). l is the largest
 * rank that keeps this at most 1 - confidence. P(B = k) is computed in logs,
 * so that no n underflows. */
void ct_median_interval_ranks(int n, double confidence, int *lo, int *hi)
{
    const double alpha = 1.0 - confidence;
    double cdf = 0.0;
    int l = 0;
    for (int k = 0; k < n / 2; k++) {
        cdf += exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * log(2.0));
        if (2.0 * cdf > alpha)
            break;
        l = k;
    }
    *lo = l;
    *hi = n > 0 ? n - 1 - l : 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_sorted(const double *x, int n)
{
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

double ct_judge_turn(const double *t, const unsigned char *alone, int n)
{
    double x[CT_JUDGE_MAX_TURN];
    int m = 0;
    if (n > CT_JUDGE_MAX_TURN)
        n = CT_JUDGE_MAX_TURN;
    for (int i = 0; i < n; i++)
        if (alone[i])
            x[m++] = t[i];
    if (m == 0)
        for (int i = 0; i < n; i++)
            x[m++] = t[i];
    if (m == 0)
        return -1.0;
    qsort(x, (size_t)m, sizeof *x, cmp_double);
    return median_sorted(x, m);
}

ct_estimate ct_judge_estimate(const ct_judge_input *in, int base, int k, double confidence)
{
    ct_estimate e = {0, 0, 0, 0};
    double ratios[CT_JUDGE_MAX_ROUNDS];
    const int nrounds = in->nrounds < CT_JUDGE_MAX_ROUNDS ? in->nrounds : CT_JUDGE_MAX_ROUNDS;
    for (int r = 0; r < nrounds; r++) {
        const double tb = in->t[r * in->nslots + base], tk = in->t[r * in->nslots + k];
        if (tb > 0 && tk > 0)
            ratios[e.n++] = tb / tk;
    }
    if (e.n > 0) {
        int lo, hi;
        qsort(ratios, (size_t)e.n, sizeof *ratios, cmp_double);
        ct_median_interval_ranks(e.n, confidence, &lo, &hi);
        e.point = median_sorted(ratios, e.n);
        e.lo = ratios[lo];
        e.hi = ratios[hi];
    }
    return e;
}

void ct_judge_format(const ct_estimate *e, char *buf, size_t len)
{
    if (len == 0)
        return;
    if (e->n <= 0)
        buf[0] = '\0';
    else if (e->n == 1)
        snprintf(buf, len, "%.2fx (1 round, no interval yet)", e->point);
    else
        snprintf(buf, len, "%.2fx [%.2f, %.2f]", e->point, e->lo, e->hi);
}

/* The live candidate with the highest point (the first of equals), -1 when
 * none has an estimate. */
static int best_of(const ct_verdict *v, int nslots)
{
    int best = -1;
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++)
        if ((v->alive >> k & 1u) && v->est[k].n > 0 &&
            (best < 0 || v->est[k].point > v->est[best].point))
            best = k;
    return best;
}

/* Is live candidate j ranked above k (higher median; the lower slot of
 * equals)? */
static int ranks_above(const ct_verdict *v, int j, int k)
{
    return v->est[j].point > v->est[k].point || (v->est[j].point == v->est[k].point && j < k);
}

/* Can candidate k, after min_drop rounds beside what stands (-1: none),
 * not beat it by the margin: its speedup over what stands, paired by round
 * as its speedup over pmpi is, has an interval whose upper end stays below
 * 1 + margin? Only while what stands beats pmpi by the margin (its median):
 * else a candidate dropped so might have beaten pmpi, which replaces what
 * stands should it be demoted. Paired, the rounds' common slowdowns (the
 * other learners' calls in them) cancel: on 16 ranks and 2 cores, every
 * round of pencil_fft's learners measured the rules' shm faster than each
 * point-to-point candidate, while their speedups over pmpi, each noisy on
 * its own, overlapped shm's for 10 to 25 rounds and more. */
static int below_standing(const ct_verdict *v, const ct_judge_input *in, int standing, int k,
                          const ct_judge_knobs *kn)
{
    if (standing < 0 || k == standing || v->est[standing].point < 1.0 + kn->margin)
        return 0;
    const ct_estimate e = ct_judge_estimate(in, standing, k, kn->confidence);
    return e.n >= kn->min_drop && e.hi < 1.0 + kn->margin;
}

/* Drops the candidates that have had min_drop rounds and can never win
 * (futility: their interval's upper end stays below the win threshold,
 * 1 + max(margin, noise)), what stands after min_demote rounds where it
 * cannot beat pmpi by the margin (it need not win, only not be slower), and
 * those that cannot beat what stands by the margin
 * (below_standing); every halve_every rounds, the live candidates ranked in
 * the lower half go too (at least keep stay), except the favoured ones and
 * the one that stands, which only the first rule drops. Three rounds of a
 * learner whose rounds hold other learners' calls can all favour pmpi by
 * chance: on 16 ranks and 2 cores, re-checks of pencil_fft's learners now
 * and then demoted the rules' shm, 1.9x pmpi over whole runs, on three. */
static void drop_losers(ct_verdict *v, const ct_judge_input *in, int nslots, int standing,
                        const ct_judge_knobs *kn)
{
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++) {
        const ct_estimate *e = &v->est[k];
        const int rounds = k == standing ? kn->min_demote : kn->min_drop;
        /* futility: an upper end below the threshold can never win; what
         * stands need not win, only not be slower, which its rounds judge */
        const double bar = k == standing ? 1.0 + kn->margin : v->threshold;
        if ((v->alive >> k & 1u) &&
            ((e->n >= rounds && e->hi < bar) || below_standing(v, in, standing, k, kn)))
            v->alive &= ~((uint64_t)1 << k);
    }
    if (kn->halve_every <= 0 || in->nrounds % kn->halve_every != 0)
        return;
    int live = 0;
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++)
        live += (int)(v->alive >> k & 1u);
    int keep = (live + 1) / 2 > kn->keep ? (live + 1) / 2 : kn->keep;
    const uint64_t spared = 3u | in->favoured | (standing >= 0 ? (uint64_t)1 << standing : 0);
    uint64_t kept = v->alive & spared;
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++) {
        if (!(v->alive >> k & 1u))
            continue;
        int above = 0;
        for (int j = CT_ADAPT_AA + 1; j < nslots; j++)
            above += (v->alive >> j & 1u) && j != k && ranks_above(v, j, k);
        if (above < keep)
            kept |= (uint64_t)1 << k;
    }
    v->alive = kept;
}

/* Does `kept`, the live candidate that stands (-1: none), hold off every
 * other: after min_win rounds, faster than pmpi at the confidence (its
 * interval above 1), and no other candidate left, drop_losers having
 * dropped those that cannot beat it by the margin (below_standing)? Then
 * more rounds are unlikely to find one better by the margin: they would
 * only cost their share of the time (16 ranks on 2 cores: pencil_fft's
 * learners, whose rounds hold the other communicators' calls and cannot
 * clear their noise, explored the rules' shm against pmpi through 40000
 * calls). Its interval, not its median: a re-check, which has no other
 * candidate, would otherwise keep a slower choice at the first round its
 * median came out above 1. */
static int stands(const ct_verdict *v, int kept, int nslots, const ct_judge_knobs *kn)
{
    if (kept < 0 || !(v->alive >> kept & 1u))
        return 0;
    const ct_estimate *e = &v->est[kept];
    if (e->n < kn->min_win || e->lo <= 1.0)
        return 0;
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++)
        if (k != kept && (v->alive >> k & 1u))
            return 0;
    return 1;
}

void ct_judge(const ct_judge_input *in, const ct_judge_knobs *kn, ct_verdict *v)
{
    const int nslots = in->nslots < CT_ADAPT_MAX_SLOTS ? in->nslots : CT_ADAPT_MAX_SLOTS;
    v->kind = CT_VERDICT_OPEN;
    v->winner = CT_ADAPT_BASE;
    v->alive = in->alive | (1u << CT_ADAPT_BASE) | (1u << CT_ADAPT_AA);
    v->aa = ct_judge_estimate(in, CT_ADAPT_BASE, CT_ADAPT_AA, kn->confidence);
    const double reach = v->aa.n > 0 ? fmax(v->aa.hi, 1.0 / v->aa.lo) - 1.0 : 0.0;
    v->noise = fmax(kn->noise_floor, reach);
    v->threshold = 1.0 + fmax(kn->margin, v->noise);
    /* The candidate that stands, -1 for none. */
    const int standing =
        in->standing > CT_ADAPT_AA && in->standing < nslots ? in->standing : -1;
    for (int k = 0; k < CT_ADAPT_MAX_SLOTS; k++)
        v->est[k] = (ct_estimate){0, 0, 0, 0};
    /* Dropped candidates too: a choice that stands where none wins is
     * judged by all its rounds (ct_judge_settle). */
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++)
        v->est[k] = ct_judge_estimate(in, CT_ADAPT_BASE, k, kn->confidence);
    drop_losers(v, in, nslots, standing, kn);
    v->best = best_of(v, nslots);

    /* The winner: of the candidates whose interval clears the threshold, the
     * fastest; while a live candidate that has not won yet is faster by more
     * than the margin, it gets more rounds (up to max_rounds). */
    int winner = -1, contender = 0;
    for (int k = CT_ADAPT_AA + 1; k < nslots; k++) {
        const ct_estimate *e = &v->est[k];
        if ((v->alive >> k & 1u) && e->n >= kn->min_win && e->lo >= v->threshold &&
            (winner < 0 || e->point > v->est[winner].point))
            winner = k;
    }
    if (winner >= 0)
        for (int k = CT_ADAPT_AA + 1; k < nslots; k++)
            if ((v->alive >> k & 1u) && k != winner &&
                v->est[k].point > v->est[winner].point * (1.0 + kn->margin) &&
                !(v->est[k].n >= kn->min_win && v->est[k].lo >= v->threshold))
                contender = 1;
    const int out_of_rounds = in->nrounds >= kn->max_rounds;
    if (winner >= 0 && (!contender || out_of_rounds)) {
        v->kind = CT_VERDICT_WIN;
        v->winner = winner;
    } else if ((v->alive >> (CT_ADAPT_AA + 1)) == 0) {
        v->kind = CT_VERDICT_BASELINE;
    } else if (out_of_rounds) {
        v->kind = CT_VERDICT_NO_EVIDENCE;
    } else if (stands(v, standing, nslots, kn)) {
        v->kind = CT_VERDICT_STANDS;
    }
}

int ct_judge_settle(const ct_verdict *v, int kept, ct_stand stand)
{
    if (v->kind == CT_VERDICT_WIN)
        return v->winner;
    if (kept <= CT_ADAPT_AA || kept >= CT_ADAPT_MAX_SLOTS)
        return CT_ADAPT_BASE;
    const ct_estimate *e = &v->est[kept];
    const int stays = stand == CT_STAND_FASTER ? e->n > 0 && e->point > 1.0
                                               : e->n == 0 || e->hi >= 1.0;
    return stays ? kept : CT_ADAPT_BASE;
}

/* Can slot k run between rounds: a live candidate faster than pmpi so far? */
static int exploitable(const ct_verdict *v, int k)
{
    return k > CT_ADAPT_AA && k < CT_ADAPT_MAX_SLOTS && (v->alive >> k & 1u) &&
           v->est[k].n > 0 && v->est[k].point > 1.0;
}

/* Is slot k still in the rounds (pmpi always is)? */
static int live_slot(const ct_verdict *v, int k)
{
    return k == CT_ADAPT_BASE ||
           (k > CT_ADAPT_AA && k < CT_ADAPT_MAX_SLOTS && (v->alive >> k & 1u));
}

/* Plans the duel between rounds (adapt_judge.h). Why a duel: rounds of a
 * few calls rank close candidates by chance at first (16 ranks on 2 cores:
 * node_aware, scattered or shm first, whose whole runs differ by 10% to 2x;
 * on the 4-rank communicators of pencil_fft, shm measured slower than pmpi
 * in the first round of one learner in two, and that learner then ran pmpi
 * or a point-to-point exchange for 2000 calls, 1.5x slower); 16 consecutive
 * iterations each, at the application's own pace, rank them as whole runs
 * do. Only what runs between rounds follows the duel: the rounds decide. */
int ct_judge_plan_duel(const ct_verdict *v, int nslots, int favour, int standing, int recheck,
                       int side[2])
{
    const int first = v->best; /* the rounds' best, -1 for none */
    int a = favour >= 0 && live_slot(v, favour) ? favour
            : exploitable(v, first)             ? first
                                                : CT_ADAPT_BASE;
    /* A re-check: the choice stands until the rounds demote it. */
    const int rechecked = recheck && standing > CT_ADAPT_AA && live_slot(v, standing);
    if (rechecked)
        a = standing;
    int b = a > CT_ADAPT_AA && !rechecked ? CT_ADAPT_BASE : -1;
    for (int k = CT_ADAPT_AA + 1; k < nslots && k < CT_ADAPT_MAX_SLOTS; k++)
        if (k != a && exploitable(v, k) && (b <= CT_ADAPT_AA || v->est[k].point > v->est[b].point))
            b = k; /* pmpi's point is 1: any that beats it ranks above */
    /* A favourite the rounds rank first, pmpi below it, needs no duel: the
     * duel settles what runs where the two disagree (on 16 ranks and 2
     * cores a duel against a point-to-point challenger cost pencil_fft's
     * learners some 2 ms each time). */
    if (a == favour && a == first && exploitable(v, a))
        b = -1;
    /* What stands challenges whatever displaced it (ct_judge_duel), though
     * the rounds rank it lower: their first rounds rank close candidates by
     * chance, and the duels that follow would otherwise be between
     * point-to-point exchanges only. */
    if (standing > CT_ADAPT_AA && standing != a && exploitable(v, standing))
        b = standing;
    /* The two sides in slot order, not the favourite first: learners called
     * together (adapt.c, pace's grid) hold their duels at the same calls,
     * and each side then runs while the others run the same algorithm where
     * their duels have it, as a whole run does. With the favourite first,
     * every learner ran its challenger at once: on 16 ranks and 2 cores a
     * challenger measured 12-19% slower than as a favourite, and shm won 95%
     * of its duels as a favourite but half as a challenger of a
     * point-to-point favourite; in slot order it won 97% (pencil_fft, 5000
     * iterations). */
    side[0] = b >= 0 && b < a ? b : a;
    side[1] = b < 0 ? -1 : b < a ? a : b;
    return a;
}

/* A duel's 16 iterations a side can rank a slower algorithm first by
 * chance: on 16 ranks and 2 cores, pencil_fft's learners, whose rules' shm
 * wins nearly all its duels by 20-40%, now and then lost one to a
 * point-to-point exchange (nonblocking 56.4 against shm 61.2 us), which then
 * ran until the next round, and the duels after it were between
 * point-to-point exchanges (3000 calls of nonblocking in a run of 10000).
 * Two chance losses in a row are rare; a faster challenger loses one
 * stretch between rounds. */
int ct_judge_duel(const int side[2], const double t[2], int favour, int standing, int *lost)
{
    const int winner = t[1] < t[0] ? side[1] : t[0] < t[1] ? side[0] : favour;
    if (winner != favour && favour > CT_ADAPT_AA && favour == standing &&
        ++*lost < CT_JUDGE_DUEL_UPSETS)
        return favour;
    *lost = 0;
    return winner;
}

double ct_judge_duel_cost(const double t[2], int calls)
{
    return calls > 0 && t[0] > 0 && t[1] > 0 ? calls * fabs(t[0] - t[1]) : 0.0;
}

/* want is clamped so that no sum below overflows (beyond any run). */
#define NEXT_ROUND_MAX_WANT (LONG_MAX / 4)

long ct_judge_next_round(long calls, long want, long round_calls, int share_pct)
{
    if (share_pct < 1)
        share_pct = 1;
    if (share_pct > 99)
        share_pct = 99;
    if (want < 0)
        want = 0;
    if (want > NEXT_ROUND_MAX_WANT)
        want = NEXT_ROUND_MAX_WANT;
    if (round_calls < 1)
        round_calls = 1;
    const long even = (round_calls * (100 - share_pct) + share_pct - 1) / share_pct;
    long g = 1;
    while (g < even)
        g <<= 1;
    const long nearest = (calls + want + g / 2) / g, next = calls / g + 1;
    return (nearest > next ? nearest : next) * g - calls;
}
