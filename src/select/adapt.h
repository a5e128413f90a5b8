/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adapt.h - online tuning: a learner per communicator and collective (and
 * per message-size class where every rank knows the size) that tries the
 * candidate algorithms on the application's own calls and keeps the fastest
 * (COLTUNE_ADAPT=1, or a rule whose algorithm is adapt).
 *
 * Every rank runs the same candidate at the same call: which one is a
 * function of the call's index among the learner's calls and of what all
 * ranks agreed at the end of the previous round or duel. A round gives pmpi, pmpi
 * again (A/A) and each live candidate a turn of a few calls, in an order
 * rotated from round to round; at its end one allreduce (MPI_MAX, on the
 * private communicator) gives every turn's slowest-rank time, and
 * adapt_judge.h's verdict drops losers or decides. A new learner with an
 * incumbent (what the rules would run) runs it until its first round, which
 * waits for the first multiple of the grid of calls of a round four times
 * as long (below a share of 100; adapt.c, first_wait). The algorithms are first
 * compared with their default parameters; the winner's parameter sweep is
 * compared next. The first round is a warm-up (each candidate makes its
 * state: windows, node communicators) and is not judged. Between rounds the
 * learner runs its best candidate so far until exploring is again within its
 * share of the collective's time, the next round starting on a grid of calls
 * common to learners whose rounds have as many turns (so that communicators
 * called together explore together); those calls open with a duel of the two
 * best so far (18 calls each, in slot order, one allreduce; none where the
 * rounds rank the favourite first, unless it displaced what stands), and the
 * faster runs the rest and is spared by halving while it does, except that
 * what stands loses its place only to a second lost duel in a row
 * (ct_judge_duel): what runs between rounds, not the decision, follows it. After the decision a call costs a
 * counter; a re-check after COLTUNE_ADAPT_RECHECK calls
 * (doubling each time it confirms) measures the winner against pmpi again
 * and relearns if it measures no faster than pmpi (kept if the noise leaves
 * the re-check open). Where no candidate wins, what stands stays: the
 * incumbent unless pmpi measured faster, a re-checked choice or a
 * parameter sweep's defaults while their median beats pmpi
 * (ct_judge_settle); and the rounds end early where what stands is faster
 * than pmpi and no candidate can beat it by the margin (CT_VERDICT_STANDS).
 */
#ifndef CT_ADAPT_H
#define CT_ADAPT_H

#include "algorithms.h"
#include "core/context.h"
#include "select/adapt_judge.h"
#include "select/rules.h"

/* A candidate: an algorithm and its parameters resolved for the communicator. */
typedef struct ct_adapt_cand {
    const ct_algorithm *alg;
    long params[CT_MAX_PARAMS];
} ct_adapt_cand;

struct ct_learner;

/* What one call runs for a learner: its slot, and whether the call is timed
 * (ct_adapt_record after it): one of a round's, or one of a duel's between
 * rounds (half 0 or 1; -1 for a round's). */
typedef struct ct_adapt_turn {
    struct ct_learner *learner; /* NULL: the call is not the learner's */
    int slot;
    int timed;
    int duel;
} ct_adapt_turn;

/* Message-size classes: 0 for 0 bytes, c >= 1 for [2^(c-1), 2^c - 1]; a
 * collective whose size differs between ranks has one class, -1. */
#define CT_ADAPT_CLASSES 50
int ct_adapt_class(ct_coll coll, long msg_size);
/* The class of msg_size, whatever the collective (a persistent call's size,
 * agreed at its init). */
int ct_adapt_size_class(long msg_size);

/* The learner of (coll, cls) on ctx for the adapt rule rule (NULL:
 * COLTUNE_ADAPT), NULL when there is none yet. Two adapt rules that match
 * calls of one class have learners of their own, as their candidates differ. */
struct ct_learner *ct_adapt_find(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule);

/* Makes it, with the candidates that can serve the communicator (pmpi is
 * added: slots 0 and 1, the candidates from slot 2) and its incumbent: the
 * slot of what the rules would run (-1: none), which runs the first calls,
 * until the first round (adapt.c, first_wait), and between rounds until a
 * duel beats it (ct_judge_plan_duel); NULL when out of memory. */
struct ct_learner *ct_adapt_create(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule,
                                   const ct_adapt_cand *cands, int ncands, int prior);

/*
 * A persistent request's learner (src/learn.c): its own, not the
 * context's (its starts all have the same arguments: one learner, whose
 * candidates run on successive starts). It agrees without blocking: where a
 * round or a duel ends, its next start posts a nonblocking allreduce
 * (ct_adapt_agree_post; *req MPI_REQUEST_NULL when there is nothing to
 * agree), the request completes only once that has, and the following start
 * judges it (ct_adapt_agreed) before it asks what to run. The starts in
 * between run the best so far. Freed with ct_adapt_release, its record kept.
 */
struct ct_learner *ct_adapt_create_own(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule,
                                       const ct_adapt_cand *cands, int ncands, int prior);
void ct_adapt_release(struct ct_learner *l);
int ct_adapt_agree_post(ct_ctx *ctx, struct ct_learner *l, MPI_Request *req);
int ct_adapt_agreed(ct_ctx *ctx, struct ct_learner *l);
/* Its slots (pmpi's two, CT_ADAPT_BASE and CT_ADAPT_AA, then the
 * candidates), and what slot s runs. */
int ct_adapt_slots(const struct ct_learner *l);
const ct_adapt_cand *ct_adapt_slot(const struct ct_learner *l, int s);

/* What the first call of a learner not made yet would run, given what
 * ct_adapt_create would be given, without making it (coltune_decision: a
 * query, local to the rank that asks, must change nothing). */
void ct_adapt_first(ct_coll coll, const ct_adapt_cand *cands, int ncands, int prior,
                    ct_adapt_cand *out);

/* The candidate the learner's next call runs; advance 0 only looks
 * (coltune_decision), 1 counts the call. */
void ct_adapt_next(struct ct_learner *l, int advance, ct_adapt_turn *turn, ct_adapt_cand *out);

/* When a timed call returns: keeps what the round needs; at the end of a
 * round, agrees on the round's times with the other ranks (one allreduce)
 * and judges. Every rank calls it for every timed call, whatever the call
 * returned. */
int ct_adapt_record(ct_ctx *ctx, const ct_adapt_turn *turn);

/*
 * At MPI_Finalize, collective over comm (MPI_COMM_WORLD, which the
 * application no longer uses then): what every learner of every rank found
 * is gathered on rank 0,
 * which writes it to path as a rules file (path NULL: not written) and, with
 * stats, prints per collective the calls and time spent exploring and the
 * choices made.
 */
int ct_adapt_finish(MPI_Comm comm, const char *path, int stats);

/* Frees what the learners recorded (after ct_adapt_finish). */
void ct_adapt_free(void);

#endif
