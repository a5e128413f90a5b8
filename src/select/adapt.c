/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adapt.c - the online learner (adapt.h).
 */
#include "select/adapt.h"
#include "core/cache.h"
#include "core/log.h"
#include "core/state.h"
#include "select/spec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum phase { PHASE_EXPLORE, PHASE_DECIDED } phase;

#define CT_ADAPT_BURST 6 /* calls in a turn of a round: 5 iterations judged */
#define CT_ADAPT_SCREEN 4 /* in the first judged round of an exploration: 3 judged */
#define CT_ADAPT_WARM 2   /* in the warm-up: both halves of a shared window */
_Static_assert(CT_ADAPT_BURST - 1 <= CT_JUDGE_MAX_TURN, "a turn's iterations fit the judge");
#define DUEL_CALLS 18 /* calls of each side of a duel: 2 to switch, 16 judged */
#define DUEL_SKIP 2
_Static_assert(DUEL_CALLS - DUEL_SKIP <= CT_JUDGE_MAX_TURN, "a duel's iterations fit the judge");

/* What a learner has found, kept by the process after its communicator is
 * freed (for COLTUNE_ADAPT_OUT and COLTUNE_STATS): the same on every rank of
 * the communicator, as everything in it was agreed. */
typedef struct learned {
    double leader; /* the communicator: world rank and context serial of its rank 0 */
    int coll, cls, rule_line;
    int persistent; /* a persistent request's learner (its rule says persistent=1) */
    long P, N, Q;
    int decided, kind; /* kind: ct_verdict_kind of the decision */
    char spec[160];    /* the choice (decided) or the best so far */
    ct_estimate est;   /* its speedup over pmpi (n 0: pmpi) */
    double noise;
    int ncands, nrounds;
    long calls, explore_calls;
    long waits; /* > 0: the incumbent runs until call waits, the first round */
    double explore_time, agree_time;
} learned;

typedef struct ct_learner {
    /* What every call reads (ct_adapt_find, ct_adapt_next), together in the
     * first cache lines, not scattered among the rounds' arrays: where ranks
     * outnumber cores, each finds its caches cold after every switch. */
    const ct_rule *rule;     /* the adapt rule it serves, NULL for COLTUNE_ADAPT */
    struct ct_learner *next; /* of the same collective and class, another rule's */
    phase ph;
    int best, choice;        /* slots: the best so far, the decision */
    /* The slot the next call runs, as a question (coltune_decision) answers
     * it: written by the thread whose calls advance the learner after each
     * of its changes (publish), read by any (atomic), so that a question
     * from another thread never reads the rest while it changes. */
    int answer;
    /* The calls between rounds open with a duel: the best candidate so far
     * and the runner-up (duel[1] < 0: none, as where the rounds rank the
     * favourite first; ct_judge_plan_duel), in slot order, run DUEL_CALLS
     * calls each, measured as a turn is; one allreduce agrees the two, and
     * the faster (what stands only after a second lost duel in a row:
     * ct_judge_duel) runs the rest of the calls and opens the next duel
     * (favour). */
    int duel[2];
    int duel_seen[2]; /* calls of each side so far */
    long calls, next_check;
    long lead; /* the incumbent's calls before the first round (first_wait), whose
                  time end_round adds to exploit_time once the round measured it */
    long exploit_left;     /* calls of best before the next round (the share) */
    double exploit_time;   /* estimated time of the calls between rounds */
    double best_time;      /* an exploit call's estimated time */

    ct_coll coll;
    int cls, rule_line;
    int nslots; /* 2 + candidates */
    ct_adapt_cand slot[CT_ADAPT_MAX_SLOTS];
    int recheck;    /* this exploration re-checks the decision */
    int refine;     /* this exploration sweeps the parameters of slot refine_of */
    int refine_of;
    uint64_t firsts; /* each algorithm's first slot (its defaults) and the incumbent's:
                        the first field */
    uint64_t alive; /* the slots the rounds run */
    int nrounds;    /* judged rounds in t */
    double *t;      /* [max_rounds][nslots] agreed slowest-rank times */
    /* The round in progress: nturns turns of burst calls each, slot
     * order[i] in turn i, whose later calls are judged; pos counts its calls. */
    int order[CT_ADAPT_MAX_SLOTS], nturns, burst, pos;
    double last_exit;            /* when this rank left its previous timed call */
    unsigned long last_count;    /* the learners' calls then (ct_state) */
    double gap[CT_ADAPT_BURST];  /* [i]: from leaving call i - 1 to leaving call i */
    unsigned char alone[CT_ADAPT_BURST]; /* [i]: no other learner's call in gap[i] */
    double local[CT_ADAPT_MAX_SLOTS]; /* this rank's times in it */
    double elapsed;                   /* this rank's time in it: the sum of its gaps */
    double duel_gap[2][CT_JUDGE_MAX_TURN];
    unsigned char duel_alone[2][CT_JUDGE_MAX_TURN];
    int favour; /* the faster slot of the last duel, at first the prior; -1 none */
    int lost;   /* duels what stands lost in a row as the favourite (ct_judge_duel) */
    int prior;  /* what the rules would run (ct_adapt_create), -1 none */
    /* The process's exploring learners' calls per call of this one since
     * its last round or the end of its wait (end_round: the most any rank
     * had), and the counts then. */
    double crowd;
    unsigned long crowd_mark;
    long calls_mark;
    ct_verdict v;          /* the last verdict */
    long explore_calls, check_gap;
    long explore_start; /* explore_calls when the current exploration began */
    int announced;      /* the current exploration's first round call was logged */
    double explore_time, agree_time, leader;
    double first_time; /* of the first round, in explore_time */
    int warm;          /* the first round (not judged) is over */
    int record;       /* index in the_learned */
    /* A persistent request's learner (ct_adapt_create_own) agrees without
     * blocking: a round's or a duel's end leaves its times in pend (pending:
     * what ended) for the request's next start to post as a nonblocking
     * allreduce (ct_adapt_agree_post) and its completion to judge
     * (ct_adapt_agreed); the starts in between run best. */
    int own;
    int pending, posted, npend;
    double pend[CT_ADAPT_MAX_SLOTS + 3];
} ct_learner;

enum { PEND_NONE, PEND_ROUND, PEND_DUEL };

static void learner_free(ct_learner *l);
static int judge_round(ct_ctx *ctx, ct_learner *l, double *buf);
static void judge_duel(ct_ctx *ctx, ct_learner *l, const double *t);

/* The learners of one context, by collective and class. */
typedef struct learners {
    ct_learner *by[CT_COLL_COUNT][CT_ADAPT_CLASSES];
} learners;

/* What the learners of the process found (guarded by the state lock). */
static struct {
    learned *r;
    ct_learner **live; /* [i]: the learner still updating r[i], NULL once freed */
    int n, cap;
} the_learned;

static const ct_settings *settings(void) { return ct_settings_get(); }

static ct_judge_knobs knobs(int nrounds_now, int force)
{
    ct_judge_knobs kn = ct_judge_knobs_default();
    if (force) /* the budget ran out: what the evidence says now */
        kn.max_rounds = nrounds_now;
    return kn;
}

int ct_adapt_class(ct_coll coll, long msg_size)
{
    return ct_coll_msg_size_known(coll) ? ct_adapt_size_class(msg_size) : -1;
}

int ct_adapt_size_class(long msg_size)
{
    int c = 0;
    while (msg_size > 0 && c < CT_ADAPT_CLASSES - 2) {
        msg_size >>= 1;
        c++;
    }
    return c;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static void fill_record(const ct_learner *l, const ct_ctx *ctx, learned *r)
{
    const int s = l->ph == PHASE_DECIDED ? l->choice : l->best;
    r->leader = l->leader;
    r->coll = l->coll;
    r->cls = l->cls;
    r->persistent = l->own;
    r->rule_line = l->rule_line;
    if (ctx != NULL) {
        r->P = ctx->shape.P;
        r->N = ctx->shape.N;
        r->Q = ctx->shape.Q;
    }
    r->decided = l->ph == PHASE_DECIDED;
    r->kind = l->v.kind;
    ct_spec_format_resolved(l->slot[s].alg, l->slot[s].params, r->spec, sizeof r->spec);
    r->est = s > CT_ADAPT_AA ? l->v.est[s] : (ct_estimate){0, 0, 0, 0};
    r->noise = l->v.noise;
    r->ncands = l->nslots - 2;
    r->nrounds = l->nrounds;
    r->calls = l->calls;
    r->waits = l->lead > 0 && l->calls <= l->lead ? l->lead : 0;
    r->explore_calls = l->explore_calls;
    r->explore_time = l->explore_time;
    r->agree_time = l->agree_time;
}

/* Keeps what l found (at the end of each round and when it is freed). */
static void sync_record(ct_learner *l, const ct_ctx *ctx, int release)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    if (l->record < 0 && the_learned.n == the_learned.cap) {
        int cap = the_learned.cap ? 2 * the_learned.cap : 16;
        learned *r = realloc(the_learned.r, (size_t)cap * sizeof *r);
        if (r != NULL)
            the_learned.r = r;
        ct_learner **live = realloc(the_learned.live, (size_t)cap * sizeof *live);
        if (live != NULL)
            the_learned.live = live;
        if (r != NULL && live != NULL)
            the_learned.cap = cap;
    }
    if (l->record < 0 && the_learned.n < the_learned.cap) {
        l->record = the_learned.n++;
        memset(&the_learned.r[l->record], 0, sizeof the_learned.r[0]);
    }
    if (l->record >= 0) {
        fill_record(l, ctx, &the_learned.r[l->record]);
        the_learned.live[l->record] = release ? NULL : l;
    }
    ct_state_unlock(st);
}

/* ------------------------------------------------------------------ */
/* The learners of a context                                           */
/* ------------------------------------------------------------------ */

/* What a learner keeps while it lives (counted in the cache, core/cache.h). */
static size_t learner_bytes(const ct_learner *l)
{
    return sizeof *l + (size_t)ct_judge_knobs_default().max_rounds * (size_t)l->nslots *
                           sizeof *l->t;
}

static int learners_create(ct_ctx *ctx, void *arg, void **obj)
{
    (void)ctx;
    (void)arg;
    *obj = calloc(1, sizeof(learners));
    return *obj != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void learners_release(void *obj)
{
    learners *ls = obj;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        for (int k = 0; k < CT_ADAPT_CLASSES; k++) {
            for (ct_learner *l = ls->by[c][k], *next; l != NULL; l = next) {
                next = l->next;
                learner_free(l);
            }
        }
    free(ls);
}

static const ct_ctx_key learners_key = {"adapt", learners_create, learners_release, NULL};

/* The list of coll's learners of class cls on ctx; with make, the
 * context's learners are made where there are none yet (NULL: out of
 * memory, or none without make). */
static ct_learner **slot_of(ct_ctx *ctx, ct_coll coll, int cls, int make)
{
    void *obj = ct_ctx_ext_find(ctx, &learners_key);
    if (obj == NULL && make)
        (void)ct_ctx_ext(ctx, &learners_key, NULL, &obj);
    return obj != NULL ? &((learners *)obj)->by[coll][cls + 1] : NULL;
}

struct ct_learner *ct_adapt_find(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule)
{
    ct_learner **p = slot_of(ctx, coll, cls, 0); /* a query makes nothing */
    /* acquire: a question from another thread sees a learner made whole */
    ct_learner *l = p != NULL ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : NULL;
    while (l != NULL && l->rule != rule)
        l = l->next;
    return l;
}

/* ------------------------------------------------------------------ */
/* Rounds                                                              */
/* ------------------------------------------------------------------ */

/* The next round: every live slot's turn, the order rotated by the round's
 * number so that no candidate always follows the same one. A turn is
 * CT_ADAPT_BURST calls of the slot; what is judged is, on each rank, the
 * median of the times from leaving one of its calls to leaving the next
 * (then the slowest rank's, agreed at the end of the round): whole
 * iterations of the application's loop with that algorithm, the ranks
 * entering at its own skew, not at whatever skew the slot before left. The
 * application's work between the calls is included on purpose: an algorithm
 * that leaves a rank early but keeps the processors busy (progress, polling)
 * slows that work down, and time inside the calls alone would favour it
 * (measured: point-to-point exchanges won rounds that shm won in whole
 * runs). An iteration that holds a call of another learner (of a row or a
 * column communicator of one application, say) is left out where the turn
 * has others: that call runs whatever its own learner tries or, decided,
 * adds its time to every slot alike and brings their ratios towards 1 (16
 * ranks on 2 cores: where pencil_fft's column learners had decided, its row
 * learners' rounds measured shm and pmpi alike, 150-280 us, and could not
 * end; without the column calls, 55-65 against 75-100).
 * (In a loop of row, column, column, row calls, every other iteration of
 * each is alone; where none is, all count.) The median: one iteration the
 * operating system descheduled does not make a turn slow. The first round
 * warms up the algorithms that make state at their first calls
 * (CT_L_WARM_UP: shared windows, node communicators), to make and touch it;
 * it is not judged. The others' warm-up is the first call of each turn,
 * which is not judged either: warming up every candidate cost 20 calls of
 * point-to-point exchanges and pmpi (16 ranks, 2 cores: 2 ms of a 75 ms
 * run). */
/* Has slot k a turn in a round: the warm-up (warm 0), a screening round
 * (screen 1) or another? */
static int has_turn(const ct_learner *l, int k, int warm, int screen)
{
    return (l->alive >> k & 1u) && (warm || (l->slot[k].alg->restrictions & CT_L_WARM_UP)) &&
           !(screen && k == CT_ADAPT_AA);
}

static void plan_round(ct_learner *l)
{
    int n = 0, list[CT_ADAPT_MAX_SLOTS];
    const int screen = l->warm && l->nrounds == 0;
    for (int k = 0; k < l->nslots; k++)
        if (has_turn(l, k, l->warm, screen))
            list[n++] = k;
    if (n == 0 && !l->warm) { /* nothing to warm up */
        l->warm = 1;
        plan_round(l);
        return;
    }
    for (int i = 0; i < n; i++)
        l->order[i] = list[(i + l->nrounds) % n];
    l->nturns = n;
    l->burst = !l->warm ? CT_ADAPT_WARM : screen ? CT_ADAPT_SCREEN : CT_ADAPT_BURST;
    l->pos = 0;
    for (int k = 0; k < CT_ADAPT_MAX_SLOTS; k++)
        l->local[k] = -1.0;
    l->elapsed = 0;
}

/* The fraction of the collective's time l's rounds may take: the share,
 * divided among the learners that explore in a process (end_round). */
static double share_of(const ct_learner *l)
{
    return settings()->adapt_share / 100.0 / (l->crowd > 1.0 ? l->crowd : 1.0);
}

/* Starts counting the calls for the next crowd. */
static void crowd_mark(ct_learner *l)
{
    l->crowd_mark = __atomic_load_n(&ct_state_get()->learner_calls, __ATOMIC_RELAXED);
    l->calls_mark = l->calls;
}

/* What a call of a new learner's first round costs, in calls of the
 * incumbent: the candidates' first calls open the MPI library's connections
 * between the ranks and make the algorithms' state (16 ranks on 2 cores,
 * shm the incumbent: 3.3 for examples/fft_transpose.c, 2.7 for the 4-rank
 * communicators of examples/pencil_fft.c; the MPI library's own first four
 * calls alone took 2.8 ms, 28 times shm's). */
#define CT_ADAPT_FIRST_COST 4

/* The calls the incumbent runs before a new learner's first round: the
 * first multiple of the grid G (ct_judge_next_round) of a round of that
 * many calls of the incumbent that the first round costs (the warm-up's
 * calls and the screening turns, CT_ADAPT_FIRST_COST each), so that the
 * first round too keeps within the share of the collective's time, as the
 * later rounds do; when it costs more, pace makes the next wait longer
 * (end_round counts these calls at the incumbent's measured time). A
 * learner with an incumbent runs what coltune would run without learning;
 * it pays for learning as the run goes, not at its start: a run shorter
 * than the wait runs the rules' choice throughout (16 ranks on 2 cores: the
 * first round and its duel cost pencil_fft some 10 ms, and 1500 iterations
 * take 290 ms with the shipped rules' shm; the main job, some 5.5 ms of
 * 51). */
static long first_wait(const ct_learner *l)
{
    long n = 0;
    for (int k = 0; k < l->nslots; k++)
        n += CT_ADAPT_WARM * has_turn(l, k, 0, 0) + CT_ADAPT_SCREEN * has_turn(l, k, 1, 1);
    return ct_judge_next_round(0, 0, CT_ADAPT_FIRST_COST * n, settings()->adapt_share);
}

/* Starts measuring alive from scratch (the rounds' times are forgotten). */
static void explore(ct_learner *l, uint64_t alive, int recheck)
{
    if (recheck) { /* the calls since the decision count as the others' time */
        const double share = share_of(l);
        l->exploit_time = (l->explore_time - l->first_time) * (1.0 - share) / share;
    }
    l->ph = PHASE_EXPLORE;
    l->alive = alive;
    l->recheck = recheck;
    l->nrounds = 0;
    l->exploit_left = 0;
    l->duel[0] = l->duel[1] = -1;
    l->favour = l->prior;
    l->lost = 0;
    l->explore_start = l->explore_calls;
    l->announced = 0;
    crowd_mark(l);
    plan_round(l);
}

/* "alltoall (1024-2047 B) on MPI_COMM_WORLD#0": the learner in a log line. */
static void learner_name(const ct_ctx *ctx, const ct_learner *l, char *buf, size_t len)
{
    char size[48] = "";
    if (l->cls > 0)
        snprintf(size, sizeof size, " (%ld-%ld B)", 1L << (l->cls - 1), (1L << l->cls) - 1);
    snprintf(buf, len, "%s%s on %s#%d", ct_coll_name(l->coll), size, ctx->name, ctx->serial);
}

/* COLTUNE_VERBOSE=1: an exploration's first round call (the first of the
 * learner, a re-check, a parameter sweep, a relearning after a demotion). */
static void log_explore(const ct_ctx *ctx, const ct_learner *l)
{
    if (!settings()->verbose || ctx->decide_rank != 0)
        return;
    char name[160];
    learner_name(ctx, l, name, sizeof name);
    const int ncands = __builtin_popcountll(l->alive & ~(uint64_t)3); /* not pmpi, its copy */
    if (l->recheck && l->choice > CT_ADAPT_AA)
        ct_log("%s: adapt: re-checking its choice against pmpi from call %ld", name, l->calls);
    else if (l->recheck)
        ct_log("%s: adapt: re-checking pmpi against %d candidates from call %ld", name, ncands,
               l->calls);
    else if (l->refine)
        ct_log("%s: adapt: sweeping the winner's parameters, %d values, from call %ld", name,
               ncands, l->calls);
    else if (l->lead > 0 && l->calls > l->lead)
        ct_log("%s: adapt: exploring %d candidates and pmpi from call %ld (the rules' choice "
               "ran the first %ld)", name, ncands, l->calls, l->lead);
    else
        ct_log("%s: adapt: exploring %d candidates and pmpi from call %ld", name, ncands,
               l->calls);
}

static void log_decision(const ct_ctx *ctx, const ct_learner *l, const char *what)
{
    if (!settings()->verbose || ctx->decide_rank != 0)
        return;
    char spec[160], name[160], speed[64] = "1.00x [1.00, 1.00]"; /* pmpi */
    const int s = l->choice;
    ct_spec_format_resolved(l->slot[s].alg, l->slot[s].params, spec, sizeof spec);
    learner_name(ctx, l, name, sizeof name);
    if (s > CT_ADAPT_AA)
        ct_judge_format(&l->v.est[s], speed, sizeof speed);
    ct_log("%s: adapt: %s %s, %s over pmpi (noise %.0f%%); "
           "%d candidates, %d rounds, %ld calls, %.6f s exploring", name, what, spec, speed,
           100.0 * l->v.noise, l->nslots - 2, l->nrounds, l->explore_calls, l->explore_time);
}

/* COLTUNE_VERBOSE=2: each round's agreed times, in microseconds by slot,
 * and the learner's calls before it. */
static void log_round(const ct_ctx *ctx, const ct_learner *l, const double *t)
{
    char line[CT_ADAPT_MAX_SLOTS * 12] = "", name[160];
    size_t used = 0;
    if (settings()->verbose < 2 || ctx->decide_rank != 0)
        return;
    for (int k = 0; k < l->nslots && used < sizeof line; k++)
        used += (size_t)snprintf(line + used, sizeof line - used, t[k] > 0 ? " %.1f" : " -",
                                 1e6 * t[k]);
    learner_name(ctx, l, name, sizeof name);
    ct_log("%s: adapt: round %d after call %ld (us by slot: pmpi, pmpi, candidates):%s", name,
           l->nrounds, l->calls - (long)l->nturns * l->burst, line);
}

/* The slowest rank's values of buf (one allreduce, MPI_MAX, on the private
 * communicator; its time counted). Should it fail, this rank's learner
 * learns no more and keeps pmpi. */
static int agree(ct_ctx *ctx, ct_learner *l, double *buf, int n)
{
    const double t0 = PMPI_Wtime();
    const int rc = PMPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MAX, ctx->decide_comm);
    l->agree_time += PMPI_Wtime() - t0;
    if (rc != MPI_SUCCESS) {
        ct_log_mpi_error(rc, "MPI_Allreduce", __FILE__, __LINE__);
        l->ph = PHASE_DECIDED;
        l->choice = CT_ADAPT_BASE;
        l->next_check = -1;
    }
    return rc;
}

/* COLTUNE_VERBOSE=2: a duel's agreed times. */
static void log_duel(const ct_ctx *ctx, const ct_learner *l, const double *t)
{
    if (settings()->verbose < 2 || ctx->decide_rank != 0)
        return;
    char a[160], b[160], name[160];
    ct_spec_format_resolved(l->slot[l->duel[0]].alg, l->slot[l->duel[0]].params, a, sizeof a);
    ct_spec_format_resolved(l->slot[l->duel[1]].alg, l->slot[l->duel[1]].params, b, sizeof b);
    learner_name(ctx, l, name, sizeof name);
    ct_log("%s: adapt: duel between rounds: %s %.1f us, %s %.1f us per iteration", name, a,
           1e6 * t[0], b, 1e6 * t[1]);
}

/* The slots of alg's parameter sweep, pmpi's two included. */
static uint64_t variants_of(const ct_learner *l, int s)
{
    uint64_t v = 3u;
    for (int k = 2; k < l->nslots; k++)
        if (l->slot[k].alg == l->slot[s].alg)
            v |= (uint64_t)1 << k;
    return v;
}

/* What stands where no candidate wins: the choice a re-check measures, the
 * defaults whose parameter sweep this is, else the incumbent (on 16 ranks
 * and 2 cores, pencil_fft's learners of 4 ranks, whose rounds interleave,
 * could not tell shm from pmpi, and, keeping pmpi when their budget ran out
 * (COLTUNE_ADAPT_CALLS=400), made 20000 iterations 1.3x slower than the
 * rules' shm). */
static int standing_of(const ct_learner *l)
{
    return l->recheck ? l->choice : l->refine ? l->refine_of : l->prior;
}

static void decide(ct_ctx *ctx, ct_learner *l)
{
    const int before = l->choice, was_recheck = l->recheck;
    const int standing = standing_of(l);
    /* The rules' choice stays unless pmpi measured faster, at its re-checks
     * too (else a re-check would demote what the relearning keeps); a
     * choice that learning made stays while its median beats pmpi. */
    const int incumbent = standing > CT_ADAPT_AA && standing == l->prior;
    const int choice = ct_judge_settle(&l->v, standing,
                                       incumbent ? CT_STAND_UNLESS_SLOWER : CT_STAND_FASTER);
    const int won = l->v.kind == CT_VERDICT_WIN;
    if (l->refine) {
        l->refine = 0;
    } else if (!was_recheck && won && choice > CT_ADAPT_AA &&
               (variants_of(l, choice) & ~((uint64_t)1 << choice)) != 3u) {
        /* An algorithm won with its defaults: its parameter sweep against
         * pmpi decides which values it keeps. */
        explore(l, variants_of(l, choice), 0);
        l->refine = 1;
        l->refine_of = choice;
        l->favour = choice; /* the winner runs between the sweep's rounds */
        return;
    }
    if (was_recheck && before > CT_ADAPT_AA && choice != before) {
        /* The decision measured slower than pmpi: the application's calls
         * changed; relearn from every algorithm. */
        log_decision(ctx, l, "demoted");
        explore(l, l->firsts, 0);
        return;
    }
    l->ph = PHASE_DECIDED;
    l->recheck = 0;
    l->choice = choice;
    /* Confirmed (a win again, pmpi again, the choice faster than pmpi at
     * the confidence with nothing to beat it (STANDS), or the rules' choice
     * faster than pmpi again, as a learned choice must be to stay): look
     * again later. A choice kept by an inconclusive re-check is looked at as
     * soon as this one. */
    const int confirmed =
        was_recheck && choice == before &&
        (won || before <= CT_ADAPT_AA || l->v.kind == CT_VERDICT_STANDS ||
         (incumbent && ct_judge_settle(&l->v, before, CT_STAND_FASTER) == before));
    if (confirmed)
        l->check_gap *= 2;
    l->next_check = l->check_gap > 0 ? l->calls + l->check_gap : -1;
    /* A re-check of pmpi that a candidate won adopts it: "chose". */
    const char *what = was_recheck && choice == before
                           ? (confirmed ? "re-checked" : "kept, the re-check inconclusive:")
                       : won || choice <= CT_ADAPT_AA ? "chose"
                       : l->v.kind == CT_VERDICT_STANDS ? "kept, no candidate can beat it:"
                                                        : "kept, no candidate won:";
    log_decision(ctx, l, what);
}

/* The duel that opens the calls between rounds (ct_judge_plan_duel), and
 * what runs apart from it. */
static void plan_duel(ct_learner *l)
{
    l->best = ct_judge_plan_duel(&l->v, l->nslots, l->favour, standing_of(l), l->recheck, l->duel);
    l->duel_seen[0] = l->duel_seen[1] = 0;
}

/* The calls of the best candidate so far to run before the next round, so
 * that the rounds stay within COLTUNE_ADAPT_SHARE of the collective's time
 * (the time the other calls would take is estimated from their rounds),
 * rounded to a grid of calls (ct_judge_next_round): learners of
 * communicators that call together (an FFT's row and column communicators,
 * as many calls on each) and whose rounds have as many turns then start
 * their rounds at the same calls, though their agreed times, and so their
 * wants, differ a little. Each round then measures what a choice does when
 * all of them make it, as a whole run does: on 16 ranks and 2 cores, 8
 * learners of 4 ranks out of step rated shm 1.1-1.3x over pmpi, whole runs
 * 1.75x. A round started up to half a grid step early or late is made up
 * for by the next want, which counts every call since the first round. */
static void pace(ct_learner *l)
{
    const double share = share_of(l);
    plan_duel(l); /* l->best: what runs, and what the calls are estimated at */
    double sum = 0;
    int n = 0;
    for (int r = 0; r < l->nrounds; r++)
        if (l->t[r * l->nslots + l->best] > 0) {
            sum += l->t[r * l->nslots + l->best];
            n++;
        }
    l->best_time = n > 0 ? sum / n : 0;
    if (settings()->adapt_share < 100 && l->best_time > 0) {
        const double rounds = l->explore_time - l->first_time; /* see end_round */
        const double others = rounds * (1.0 - share) / share - l->exploit_time;
        const long want = others > 0 ? (long)ceil(others / l->best_time) : 0;
        l->exploit_left = ct_judge_next_round(l->calls, want, (long)l->nturns * l->burst,
                                              settings()->adapt_share);
    }
    if (l->exploit_left < 4 * DUEL_CALLS) { /* too few calls for a duel */
        l->duel[0] = l->best;
        l->duel[1] = -1;
    }
    if (l->duel[1] < 0) /* no duel: what stands lost none in a row now */
        l->lost = 0;
}

/* The communicator's identity in the records, as its rank 0 computes it:
 * that rank's world rank and context serial. */
static double leader_of(const ct_ctx *ctx)
{
    return (double)(ct_state_get()->log_rank + 1) * 1048576.0 + (double)ctx->serial;
}

/* A persistent request's learner keeps the times of what ended (kind: a
 * round or a duel) for its next start to agree on (ct_adapt_agree_post). */
static void defer(ct_learner *l, int kind, const double *buf, int n)
{
    memcpy(l->pend, buf, (size_t)n * sizeof *buf);
    l->npend = n;
    l->pending = kind;
    l->posted = 0;
}

/* The round is over: agree on its times, judge, and plan what follows. */
static int end_round(ct_ctx *ctx, ct_learner *l)
{
    double buf[CT_ADAPT_MAX_SLOTS + 3];
    const int n = l->nslots;
    memcpy(buf, l->local, (size_t)n * sizeof *buf);
    /* The communicator's identity, for the records: its rank 0's. */
    buf[n] = ctx->decide_rank == 0 ? leader_of(ctx) : -1.0;
    /* What the round cost: the slowest rank's time from leaving its first
     * call to leaving its last, every iteration counted (the turns'
     * first calls too, whose switch from one algorithm to the next the
     * judged medians leave out: counted by their medians, the rounds of
     * pencil_fft's learners took twice the calls the share allows). */
    buf[n + 1] = l->elapsed;
    /* The learners exploring in a process share its budget: each one's
     * iterations hold the others' calls, so that each alone would count the
     * whole loop as its collective's time (pencil_fft: a row and a column
     * learner per rank gave rounds twice the share). How many share it: the
     * exploring learners' calls per call of this one since its last round
     * (2 for pencil_fft's; a learner no longer called does not count), the
     * most any rank had. */
    const long own = l->calls - l->calls_mark;
    const unsigned long all =
        __atomic_load_n(&ct_state_get()->learner_calls, __ATOMIC_RELAXED) - l->crowd_mark;
    buf[n + 2] = own > 0 ? (double)all / (double)own : 1.0;
    if (l->own) {
        defer(l, PEND_ROUND, buf, n + 3);
        return MPI_SUCCESS;
    }
    const int rc = agree(ctx, l, buf, n + 3);
    if (rc != MPI_SUCCESS)
        return rc;
    return judge_round(ctx, l, buf);
}

/* The round's agreed times (end_round): judge, and plan what follows. */
static int judge_round(ct_ctx *ctx, ct_learner *l, double *buf)
{
    const int n = l->nslots;
    crowd_mark(l);
    l->leader = buf[n];
    l->crowd = buf[n + 2] > 1.0 ? buf[n + 2] : 1.0;
    l->explore_time += buf[n + 1];
    if (!l->warm) {
        /* The first round made each algorithm's state and touched it (a
         * shared window's first calls page it in): it is not judged, and,
         * being paid once whatever the choice, not counted against the share. */
        l->warm = 1;
        l->first_time = buf[n + 1];
        plan_round(l);
        sync_record(l, ctx, 0);
        return MPI_SUCCESS;
    }
    memcpy(&l->t[l->nrounds * n], buf, (size_t)n * sizeof *buf);
    l->nrounds++;
    if (l->lead > 0 && buf[l->prior] > 0) /* the incumbent's calls before it */
        l->exploit_time += (double)l->lead * buf[l->prior];
    l->lead = 0;
    log_round(ctx, l, buf);
    const int out_of_budget = l->explore_calls - l->explore_start >= settings()->adapt_calls;
    const ct_judge_knobs kn = knobs(l->nrounds, out_of_budget);
    /* Halving spares the favourite (the last duel's winner, the prior
     * before any) while the last verdict kept it: a duel's 16 consecutive
     * iterations a side rank two candidates better than the medians of the
     * first rounds, which, on 16 ranks and 2 cores, put shm in the slower
     * half of some learners of pencil_fft after two rounds (its first-round
     * turn measured 176 us against 122-151 for point-to-point candidates,
     * 109 against 118-132 in the second), and the learner then ran a
     * point-to-point exchange until it decided. */
    const uint64_t favoured =
        l->favour > CT_ADAPT_AA && (l->v.alive >> l->favour & 1u) ? (uint64_t)1 << l->favour : 0;
    const ct_judge_input in = {l->t, l->nrounds, n, l->alive, favoured, standing_of(l)};
    ct_judge(&in, &kn, &l->v);
    if (l->v.kind != CT_VERDICT_OPEN) {
        decide(ctx, l);
    } else {
        l->alive = l->v.alive;
        plan_round(l);
        pace(l);
    }
    sync_record(l, ctx, 0);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The learner's interface                                             */
/* ------------------------------------------------------------------ */

/* The slot the next call will run, as ct_adapt_next finds it (read only). */
static int next_slot(const ct_learner *l)
{
    if (l->pending) /* until the agreement is judged: what runs between rounds */
        return l->best;
    /* just before a re-check, its first call: pmpi's turn opens its
     * screening round (plan_round) */
    if (l->ph == PHASE_DECIDED)
        return l->next_check >= 0 && l->calls + 1 >= l->next_check ? CT_ADAPT_BASE : l->choice;
    if (l->exploit_left > 0)
        return l->duel[1] >= 0 ? l->duel[l->duel_seen[0] < DUEL_CALLS ? 0 : 1] : l->best;
    return l->order[l->pos / l->burst];
}

/* Publishes l's answer to questions (ct_learner.answer). */
static void publish(ct_learner *l) { __atomic_store_n(&l->answer, next_slot(l), __ATOMIC_RELEASE); }

/* Sets up a zeroed learner for its first call: its slots, its incumbent and
 * its first exploration, without its rounds' times, record or list. */
static void learner_init(ct_learner *l, ct_coll coll, int cls, const ct_rule *rule,
                         const ct_adapt_cand *cands, int ncands, int prior)
{
    if (ncands > CT_ADAPT_MAX_SLOTS - 2)
        ncands = CT_ADAPT_MAX_SLOTS - 2;
    l->coll = coll;
    l->cls = cls;
    l->rule = rule;
    l->rule_line = rule != NULL ? rule->line : 0;
    l->nslots = 2 + ncands;
    l->prior = prior >= 0 && prior < l->nslots && prior != CT_ADAPT_AA ? prior : -1;
    l->slot[CT_ADAPT_BASE].alg = l->slot[CT_ADAPT_AA].alg = ct_algorithm_fallback(coll);
    memcpy(&l->slot[2], cands, (size_t)ncands * sizeof *cands);
    l->record = -1;
    l->check_gap = settings()->adapt_recheck;
    /* The first exploration's slots: each algorithm's first (its defaults)
     * and the incumbent, whatever its parameters. */
    l->firsts = 3u | (l->prior > CT_ADAPT_AA ? (uint64_t)1 << l->prior : 0);
    for (int k = 2; k < l->nslots; k++) {
        int first = 1;
        for (int j = 2; j < k; j++)
            first = first && l->slot[j].alg != l->slot[k].alg;
        if (first)
            l->firsts |= (uint64_t)1 << k;
    }
    explore(l, l->firsts, 0);
    if (ncands == 0) { /* nothing to learn: pmpi */
        l->ph = PHASE_DECIDED;
        l->next_check = -1;
    } else if (l->prior >= 0 && settings()->adapt_share < 100) {
        l->best = l->prior; /* it runs until the first round */
        l->exploit_left = l->lead = first_wait(l);
    }
    publish(l);
}

/* A new learner (adapt.h, ct_adapt_create), own set for a persistent
 * request's; NULL when out of memory. */
static ct_learner *learner_new(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule,
                               const ct_adapt_cand *cands, int ncands, int prior, int own)
{
    ct_learner *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->own = own;
    learner_init(l, coll, cls, rule, cands, ncands, prior);
    l->t = malloc((size_t)ct_judge_knobs_default().max_rounds * (size_t)l->nslots *
                  sizeof *l->t);
    if (l->t == NULL) {
        free(l);
        return NULL;
    }
    ct_cache_records((long long)learner_bytes(l));
    /* A learner that waits for its first round, which agrees the leader,
     * has a record on its rank 0, which knows it: COLTUNE_STATS and
     * COLTUNE_ADAPT_OUT show it should the run end before that round. */
    if (l->lead > 0 && ctx->decide_rank == 0) {
        l->leader = leader_of(ctx);
        sync_record(l, ctx, 0);
    }
    return l;
}

/* Frees a learner, keeping its counts since its last round. */
static void learner_free(ct_learner *l)
{
    if (l->record >= 0)
        sync_record(l, NULL, 1);
    ct_cache_records(-(long long)learner_bytes(l));
    free(l->t);
    free(l);
}

struct ct_learner *ct_adapt_create(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule,
                                   const ct_adapt_cand *cands, int ncands, int prior)
{
    ct_learner **p = slot_of(ctx, coll, cls, 1);
    if (p == NULL)
        return NULL;
    ct_learner *l = learner_new(ctx, coll, cls, rule, cands, ncands, prior, 0);
    if (l == NULL)
        return NULL;
    l->next = *p;
    __atomic_store_n(p, l, __ATOMIC_RELEASE); /* see ct_adapt_find */
    return l;
}

struct ct_learner *ct_adapt_create_own(ct_ctx *ctx, ct_coll coll, int cls, const ct_rule *rule,
                                       const ct_adapt_cand *cands, int ncands, int prior)
{
    return learner_new(ctx, coll, cls, rule, cands, ncands, prior, 1);
}

void ct_adapt_release(struct ct_learner *l)
{
    if (l != NULL)
        learner_free(l);
}

int ct_adapt_slots(const struct ct_learner *l) { return l->nslots; }

const ct_adapt_cand *ct_adapt_slot(const struct ct_learner *l, int s) { return &l->slot[s]; }

int ct_adapt_agree_post(ct_ctx *ctx, struct ct_learner *l, MPI_Request *req)
{
    *req = MPI_REQUEST_NULL;
    if (l->pending == PEND_NONE || l->posted)
        return MPI_SUCCESS;
    const double t0 = PMPI_Wtime();
    const int rc = PMPI_Iallreduce(MPI_IN_PLACE, l->pend, l->npend, MPI_DOUBLE, MPI_MAX,
                                   ctx->decide_comm, req);
    l->agree_time += PMPI_Wtime() - t0;
    if (rc != MPI_SUCCESS) { /* as agree(): this rank learns no more */
        ct_log_mpi_error(rc, "MPI_Iallreduce", __FILE__, __LINE__);
        l->pending = PEND_NONE;
        l->ph = PHASE_DECIDED;
        l->choice = CT_ADAPT_BASE;
        l->next_check = -1;
        publish(l);
        return rc;
    }
    l->posted = 1;
    return MPI_SUCCESS;
}

int ct_adapt_agreed(ct_ctx *ctx, struct ct_learner *l)
{
    int rc = MPI_SUCCESS;
    const int kind = l->pending;
    if (kind == PEND_NONE || !l->posted)
        return MPI_SUCCESS;
    l->pending = PEND_NONE;
    l->posted = 0;
    if (kind == PEND_ROUND)
        rc = judge_round(ctx, l, l->pend);
    else
        judge_duel(ctx, l, l->pend);
    publish(l);
    return rc;
}

void ct_adapt_first(ct_coll coll, const ct_adapt_cand *cands, int ncands, int prior,
                    ct_adapt_cand *out)
{
    ct_learner l;
    ct_adapt_turn turn;
    memset(&l, 0, sizeof l);
    learner_init(&l, coll, -1, NULL, cands, ncands, prior);
    ct_adapt_next(&l, 0, &turn, out);
}

void ct_adapt_next(struct ct_learner *l, int advance, ct_adapt_turn *turn, ct_adapt_cand *out)
{
    int s;
    turn->learner = l;
    turn->timed = 0;
    turn->duel = -1;
    if (!advance) { /* a question, maybe from another thread: the published answer */
        turn->slot = __atomic_load_n(&l->answer, __ATOMIC_ACQUIRE);
        *out = l->slot[turn->slot];
        return;
    }
    if (l->lead > 0 && l->calls == l->lead) /* the wait is over: count from here */
        crowd_mark(l);
    l->calls++;
    __atomic_fetch_add(&ct_state_get()->learner_seen, 1, __ATOMIC_RELAXED);
    /* Only exploring learners share the budget. */
    if (l->ph == PHASE_EXPLORE && l->calls > l->lead)
        __atomic_fetch_add(&ct_state_get()->learner_calls, 1, __ATOMIC_RELAXED);
    if (l->ph == PHASE_DECIDED && l->next_check >= 0 && l->calls >= l->next_check)
        explore(l, l->choice > CT_ADAPT_AA
                       ? (1u << CT_ADAPT_BASE) | (1u << CT_ADAPT_AA) | ((uint64_t)1 << l->choice)
                       : l->firsts,
                1);
    if (l->pending) { /* a persistent request's agreement is on its way */
        s = l->best;
    } else if (l->ph == PHASE_DECIDED) {
        s = l->choice;
    } else if (l->exploit_left > 0) {
        if (l->duel[1] >= 0) { /* the duel: its first side, then its second */
            turn->duel = l->duel_seen[0] < DUEL_CALLS ? 0 : 1;
            turn->timed = 1;
        }
        s = turn->duel >= 0 ? l->duel[turn->duel] : l->best;
        l->exploit_left--;
        l->exploit_time += l->best_time;
    } else {
        s = l->order[l->pos / l->burst];
        turn->timed = 1;
    }
    turn->slot = s;
    *out = l->slot[s];
    publish(l);
}

/* The tests' hooks, in a round's timed call of slot s (tests/mpi/adapt.sh):
 *  - COLTUNE_TEST_ADAPT_DELAY: the last rank of every communicator sleeps a
 *    random time up to that many microseconds;
 *  - COLTUNE_TEST_ADAPT_PHASE=n: the application changes phase at the
 *    learner's call n: before it every rank sleeps 1 ms in pmpi's calls (a
 *    candidate wins), from it on in every other algorithm's (the choice loses
 *    its re-check, is demoted, and relearning keeps pmpi). */
static void test_delay(const ct_ctx *ctx, const ct_learner *l, int s)
{
    const int us = settings()->test_adapt_delay, phase = settings()->test_adapt_phase;
    long ns = 0;
    if (us > 0 && ctx->decide_rank == ctx->shape.P - 1) {
        /* a hash of the call's place in the learner: no state, varies per call */
        unsigned x = (unsigned)l->explore_calls * 2654435761u ^ (unsigned)l->nrounds * 40503u;
        x ^= x >> 13;
        ns += (long)(x % (unsigned)us) * 1000L;
    }
    if (phase > 0 && (s <= CT_ADAPT_AA) == (l->calls < phase))
        ns += 1000000L;
    if (ns > 0) {
        const struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
        nanosleep(&ts, NULL);
    }
}

/* A duel call's iteration, on side h (the first DUEL_SKIP calls of a side
 * are the switch); after the second side's last, one allreduce agrees the
 * two sides' slowest-rank times, and the faster runs until the next round. */
static int duel_record(ct_ctx *ctx, ct_learner *l, int h, double gap, int alone)
{
    const int i = l->duel_seen[h]++ - DUEL_SKIP;
    if (i >= 0) {
        l->duel_gap[h][i] = gap;
        l->duel_alone[h][i] = (unsigned char)alone;
    }
    if (h == 0 || l->duel_seen[1] < DUEL_CALLS)
        return MPI_SUCCESS;
    double t[2];
    for (int k = 0; k < 2; k++)
        t[k] = ct_judge_turn(l->duel_gap[k], l->duel_alone[k], DUEL_CALLS - DUEL_SKIP);
    if (l->own) {
        defer(l, PEND_DUEL, t, 2);
        return MPI_SUCCESS;
    }
    const int rc = agree(ctx, l, t, 2);
    if (rc != MPI_SUCCESS)
        return rc;
    judge_duel(ctx, l, t);
    return MPI_SUCCESS;
}

/* The duel's agreed times: the faster side runs until the next round. */
static void judge_duel(ct_ctx *ctx, ct_learner *l, const double *t)
{
    log_duel(ctx, l, t);
    /* The duel's cost beyond the faster side's is exploration's (the share):
     * pace counts it with the rounds' when it plans the next gap. */
    l->explore_time += ct_judge_duel_cost(t, DUEL_CALLS);
    l->favour = l->best = ct_judge_duel(l->duel, t, l->best, standing_of(l), &l->lost);
    l->duel[0] = l->duel[1] = -1;
}

static int record(ct_ctx *ctx, ct_learner *l, const ct_adapt_turn *turn);

int ct_adapt_record(ct_ctx *ctx, const ct_adapt_turn *turn)
{
    ct_learner *l = turn->learner;
    if (l == NULL || !turn->timed)
        return MPI_SUCCESS;
    const int rc = record(ctx, l, turn);
    publish(l); /* a round or a duel may have ended: what runs next changed */
    return rc;
}

/* A timed call's time, into its turn or duel (ct_adapt_record). */
static int record(ct_ctx *ctx, ct_learner *l, const ct_adapt_turn *turn)
{
    if (turn->duel < 0)
        test_delay(ctx, l, turn->slot);
    const double exit = PMPI_Wtime();
    const unsigned long count = __atomic_load_n(&ct_state_get()->learner_seen, __ATOMIC_RELAXED);
    const double gap = exit - l->last_exit;
    const int alone = count - l->last_count == 1; /* this call alone */
    l->last_exit = exit;
    l->last_count = count;
    if (turn->duel >= 0)
        return duel_record(ctx, l, turn->duel, gap, alone);
    if (!l->announced) {
        l->announced = 1;
        log_explore(ctx, l);
    }
    l->explore_calls++;
    if (l->pos > 0) /* the first call's gap began before the round */
        l->elapsed += gap;
    const int in_turn = l->pos % l->burst;
    l->gap[in_turn] = gap; /* [0] is not judged */
    l->alone[in_turn] = (unsigned char)alone;
    if (in_turn == l->burst - 1) /* the turn's last call */
        l->local[turn->slot] = ct_judge_turn(l->gap + 1, l->alone + 1, l->burst - 1);
    if (++l->pos < l->nturns * l->burst)
        return MPI_SUCCESS;
    return end_round(ctx, l);
}

/* ------------------------------------------------------------------ */
/* At MPI_Finalize: what every learner of the job found                */
/* ------------------------------------------------------------------ */

static int cmp_learned(const void *a, const void *b)
{
    const learned *x = a, *y = b;
    const long kx[] = {x->coll, x->persistent, x->P, x->N, x->Q, x->cls};
    const long ky[] = {y->coll, y->persistent, y->P, y->N, y->Q, y->cls};
    for (int i = 0; i < 6; i++)
        if (kx[i] != ky[i])
            return (kx[i] > ky[i]) - (kx[i] < ky[i]);
    if (x->leader != y->leader)
        return (x->leader > y->leader) - (x->leader < y->leader);
    return (x->calls < y->calls) - (x->calls > y->calls); /* most calls first */
}

static int same_cell(const learned *x, const learned *y)
{
    return x->coll == y->coll && x->persistent == y->persistent && x->P == y->P &&
           x->N == y->N && x->Q == y->Q && x->cls == y->cls;
}

/* One record per learner (the ranks of a communicator hold the same one):
 * sorted, the first of each (cell, leader) kept, with the largest agreement
 * time any rank spent. (A record is made when a learner's first round ends,
 * with the leader that round agreed, and, on its rank 0, when a learner that
 * waits for that round is made.) Returns the new count. */
static int unique_learners(learned *r, int n)
{
    int m = 0;
    qsort(r, (size_t)n, sizeof *r, cmp_learned);
    for (int i = 0; i < n; i++) {
        if (m > 0 && same_cell(&r[m - 1], &r[i]) && r[m - 1].leader == r[i].leader) {
            r[m - 1].agree_time = fmax(r[m - 1].agree_time, r[i].agree_time);
            continue;
        }
        r[m++] = r[i];
    }
    return m;
}

static void size_range(const learned *r, int cls_hi, char *buf, size_t len)
{
    if (r->cls < 0)
        snprintf(buf, len, "*");
    else
        snprintf(buf, len, "%ld-%ld", r->cls == 0 ? 0 : 1L << (r->cls - 1),
                 (1L << cls_hi) - 1);
}

/* The choice of a cell (the learners of one collective, shape and size
 * class): of its decided learners, the spec with the most calls. NULL when
 * none decided. */
static const learned *cell_choice(const learned *r, int n, long *calls, int *ncomms)
{
    const learned *best = NULL;
    long best_calls = -1;
    *ncomms = n;
    for (int i = 0; i < n; i++) {
        if (!r[i].decided)
            continue;
        long c = 0;
        for (int j = 0; j < n; j++)
            if (r[j].decided && strcmp(r[j].spec, r[i].spec) == 0)
                c += r[j].calls;
        if (c > best_calls) {
            best = &r[i];
            best_calls = c;
        }
    }
    *calls = best_calls;
    return best;
}

/* The rule of r's cell that runs r's choice; size: its msg_size range (of
 * the classes that share the choice), written where r has a class. */
static void write_rule(FILE *f, const learned *r, const char *size)
{
    fprintf(f, "%-16s comm_size=%ld nodes=%ld ppn=%ld", ct_coll_name((ct_coll)r->coll), r->P,
            r->N, r->Q);
    if (r->cls >= 0)
        fprintf(f, " msg_size=%s", size);
    if (r->persistent)
        fprintf(f, " persistent=1");
    fprintf(f, "  %s\n", r->spec);
}

/* A comment on r's cell, whose learners learned no rule: why. */
static void write_unlearned(FILE *f, const learned *r, const char *size, const char *why)
{
    fprintf(f, "# %s comm_size=%ld nodes=%ld ppn=%ld msg_size=%s: %s\n",
            ct_coll_name((ct_coll)r->coll), r->P, r->N, r->Q, size, why);
}

static void write_rules(FILE *f, const learned *r, int n)
{
    time_t now = time(NULL);
    char when[64] = "";
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
    fprintf(f, "# coltune rules learned online (COLTUNE_ADAPT) on %s, written at MPI_Finalize.\n"
               "# Use it as COLTUNE_RULES (without COLTUNE_ADAPT) to run these choices with no\n"
               "# exploration; calls no rule matches run pmpi. Speedups are over pmpi, the\n"
               "# median of paired rounds with its 95%% interval; the choice of a shape that\n"
               "# several communicators learned is the one with the most calls.\n",
            when);
    for (int i = 0; i < n;) {
        int j = i + 1, ncomms;
        long calls;
        while (j < n && same_cell(&r[i], &r[j]))
            j++;
        const learned *c = cell_choice(&r[i], j - i, &calls, &ncomms);
        /* Next classes with the same choice join this rule's msg_size range. */
        int k = j, cls_hi = r[i].cls;
        while (c != NULL && r[i].cls >= 0 && k < n && r[k].coll == r[i].coll &&
               r[k].persistent == r[i].persistent && r[k].P == r[i].P && r[k].N == r[i].N &&
               r[k].Q == r[i].Q && r[k].cls == cls_hi + 1) {
            int e = k + 1, nc2;
            long calls2;
            while (e < n && same_cell(&r[k], &r[e]))
                e++;
            const learned *c2 = cell_choice(&r[k], e - k, &calls2, &nc2);
            if (c2 == NULL || strcmp(c2->spec, c->spec) != 0)
                break;
            cls_hi++;
            k = e;
        }
        char size[64];
        size_range(&r[i], cls_hi, size, sizeof size);
        /* The cell's learners still waiting for their first round (with
         * one rules' choice, alike) and its still exploring one with the
         * most calls. */
        int waiting = 0, alike = 1;
        long all = 0;
        const learned *exploring = NULL;
        for (int e = i; e < j; e++) {
            if (r[e].waits > 0) {
                waiting++;
                all += r[e].calls;
                alike = alike && strcmp(r[e].spec, r[i].spec) == 0;
            } else if (exploring == NULL || r[e].calls > exploring->calls) {
                exploring = &r[e];
            }
        }
        if (c == NULL && waiting == ncomms && alike) {
            /* The rules' choice ran every call: kept, so the file reproduces the run. */
            fprintf(f, "# not learned: the run ended before call %ld, the first round; the "
                       "rules' choice, which ran %ld calls on %d communicator(s)\n",
                    r[i].waits, all, ncomms);
            write_rule(f, &r[i], size);
        } else if (c == NULL && exploring == NULL) {
            write_unlearned(f, &r[i], size,
                            "not learned, the run ended before the first round (the rules "
                            "gave its communicators different choices)");
        } else if (c == NULL && exploring->nrounds == 0) {
            write_unlearned(f, &r[i], size, "still learning at MPI_Finalize, no round judged yet");
        } else if (c == NULL) {
            /* What ran between the rounds: reused, the file runs what the
             * run ran, not pmpi. */
            fprintf(f, "# still learning at MPI_Finalize (%d round%s of %d candidates): the "
                       "best so far, which ran between the rounds, of the communicator with "
                       "the most calls (%ld) of %d\n",
                    exploring->nrounds, exploring->nrounds == 1 ? "" : "s", exploring->ncands,
                    exploring->calls, ncomms);
            write_rule(f, exploring, size);
        } else {
            if (c->est.n > 0)
                fprintf(f, "# %.2fx [%.2f, %.2f] over pmpi (noise %.0f%%), %d rounds of %d "
                           "candidates, %ld calls on %d communicator(s)\n",
                        c->est.point, c->est.lo, c->est.hi, 100.0 * c->noise, c->nrounds,
                        c->ncands, calls, ncomms);
            else
                fprintf(f, "# no candidate beat pmpi (noise %.0f%%, %d rounds of %d candidates), "
                           "%ld calls on %d communicator(s)\n",
                        100.0 * c->noise, c->nrounds, c->ncands, calls, ncomms);
            write_rule(f, c, size);
        }
        i = k > j ? k : j;
    }
}

static void print_stats(const learned *r, int n)
{
    printf("coltune adaptive tuning (one row per learner; exploring: calls and slowest-rank "
           "time in rounds; agreeing: allreduce time, max over ranks)\n");
    printf("%-16s %5s %5s %4s %-13s %9s %9s %12s %11s  %s\n", "collective", "P", "nodes", "ppn",
           "msg_size", "calls", "exploring", "explore [s]", "agree [s]", "choice");
    for (int i = 0; i < n; i++) {
        char size[64], speed[64], state[64] = "";
        size_range(&r[i], r[i].cls, size, sizeof size);
        ct_judge_format(&r[i].est, speed, sizeof speed);
        if (r[i].waits > 0)
            snprintf(state, sizeof state, " (the rules' choice; learning from call %ld)",
                     r[i].waits);
        else if (!r[i].decided)
            snprintf(state, sizeof state, " (still learning)");
        printf("%-16s %5ld %5ld %4ld %-13s %9ld %9ld %12.6f %11.6f  %s%s%s%s\n",
               ct_coll_name((ct_coll)r[i].coll), r[i].P, r[i].N, r[i].Q, size, r[i].calls,
               r[i].explore_calls, r[i].explore_time, r[i].agree_time, r[i].spec,
               speed[0] != '\0' ? " " : "", speed, state);
    }
    fflush(stdout);
}

int ct_adapt_finish(MPI_Comm comm, const char *path, int stats)
{
    int rc = MPI_SUCCESS, rank, size, n;
    int *counts = NULL, *displs = NULL;
    learned *all = NULL;
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    for (int i = 0; i < the_learned.n; i++)
        if (the_learned.live[i] != NULL)
            fill_record(the_learned.live[i], NULL, &the_learned.r[i]);
    ct_state_unlock(st);
    CT_CALL(PMPI_Comm_rank(comm, &rank));
    CT_CALL(PMPI_Comm_size(comm, &size));
    long long bytes = (long long)the_learned.n * (long long)sizeof(learned), sum;
    CT_CALL(PMPI_Allreduce(&bytes, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm));
    /* Past what one Gatherv carries (some 4 million learners): rank 0's alone. */
    const int mine = sum <= INT_MAX || rank == 0 ? (int)bytes : 0;
    if (rank == 0) {
        CT_ALLOC(counts, (size_t)size * sizeof *counts);
        CT_ALLOC(displs, (size_t)size * sizeof *displs);
    }
    CT_CALL(PMPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm));
    long total = 0;
    if (rank == 0) {
        for (int i = 0; i < size; i++) {
            displs[i] = (int)total;
            total += counts[i];
        }
        CT_ALLOC(all, total > 0 ? (size_t)total : 1);
    }
    CT_CALL(PMPI_Gatherv(the_learned.r, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, comm));
    if (rank != 0 || total == 0)
        goto out;
    n = unique_learners(all, (int)(total / (long)sizeof(learned)));
    if (stats)
        print_stats(all, n);
    if (path != NULL) {
        FILE *f = fopen(path, "w");
        if (f == NULL) {
            ct_log("COLTUNE_ADAPT_OUT=%s: cannot write: %s", path, strerror(errno));
        } else {
            write_rules(f, all, n);
            if (fclose(f) != 0)
                ct_log("COLTUNE_ADAPT_OUT=%s: cannot write: %s", path, strerror(errno));
        }
    }
out:
    free(counts);
    free(displs);
    free(all);
    return rc;
}

void ct_adapt_free(void)
{
    free(the_learned.r);
    free(the_learned.live);
    memset(&the_learned, 0, sizeof the_learned);
}
