/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coltune-bench.c - measures one collective under a list of algorithm specs.
 *
 * For every size: setup (driver), then one call per spec that checks it can
 * serve the call (with --check: compared byte for byte with PMPI_), then
 * --warmup untimed and --iters timed iterations. Within an iteration every
 * spec has one turn of --burst calls in a row (the last timed), each after a
 * barrier (--timing b2b: all of them back to back after one barrier, timed
 * together, their mean the call's time, as IMB times), in an order drawn
 * afresh each iteration
 * (from --seed, alike on every rank), so drift of the machine hits all specs
 * alike and no spec always follows the same one. The time of an iteration is
 * that of the slowest rank (one MPI_MAX reduction of all times at the end of
 * the size, so no extra collective runs between the timed calls). Rank 0
 * prints median, min and max and the speedup over pmpi (over the driver's
 * baseline where coltune has no pmpi), and for the SDDE collectives the
 * largest number of inter-node messages any rank sent in one timed call.
 * --samples writes every timed iteration's slowest-rank time (coltune-tune
 * pairs the specs' times of one iteration); --aa times the baseline twice
 * (its second copy, "pmpi#2", in the middle of the list) so the ratio of the
 * two copies shows the noise of the measurement itself.
 *
 * See bench.h for the parts and --help for the options.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ALG_OK = 0, ALG_SKIPPED, ALG_CHECK_FAILED };

/* Times kept per size (specs x iterations): one MPI_Reduce, int counts. */
#define MAX_SAMPLES (64L * 1024 * 1024)

/* Progress on stderr (rank 0): after a few seconds, then every so often. */
typedef struct progress {
    int enabled, tty, shown;
    double start, last;
    long done, total; /* iterations (every spec once) over the whole run */
} progress;

/* One run of the benchmark. */
typedef struct bench_run {
    const bench_options *o;
    const bench_driver *drv;
    bench_env env;
    bench_alglist algs;
    FILE *csv;     /* rank 0 only */
    FILE *samples; /* rank 0 only: --samples */
    int coll_width, alg_width, input_width;
    char input[48]; /* what the input is drawn from: distribution, setting, pattern */
    int mismatch;   /* --check found a difference */
    progress prog;
    int sweep_spec; /* --sweep: the spec compared with the baseline */
    /* --sweep, over the sizes measured so far: */
    int swept, below;      /* sizes with a ratio, and how many below SWEEP_SLOWER */
    double worst;          /* the smallest ratio */
    char worst_label[32];  /* at that size */
} bench_run;

/* --sweep: without --iters, sizes above SWEEP_FULL_UPTO get iters *
 * SWEEP_FULL_UPTO / S timed iterations, at least SWEEP_MIN_ITERS (IMB
 * similarly bounds the volume of one measurement). */
#define SWEEP_FULL_UPTO (64L * 1024)
#define SWEEP_MIN_ITERS 10
/* The "never slower" threshold the closing line counts against. */
#define SWEEP_SLOWER 0.97

/* One size of the run. */
typedef struct size_run {
    long S;
    int number; /* 1-based, for the progress line */
    int iters;  /* timed iterations at this size (size_iters) */
    char decided[BENCH_SPEC_LEN]; /* --sweep: what the rules run at S ("" otherwise) */
    char label[32];
    void *state;
    int *status;     /* [nalg] ALG_* */
    double *local;   /* [nalg * iters] this rank's times */
    double *slowest; /* [nalg * iters] slowest rank's times (rank 0) */
    long *msgs_local; /* [nalg] this rank's most inter-node messages in a timed call */
    long *msgs;       /* [nalg] the maximum over ranks (rank 0), -1: not counted */
    /* --overlap: each spec's computation (its median time, seconds, on every
     * rank) and the slowest rank's times of the calls around it (rank 0). */
    double *compute;
    double *overlapped; /* [nalg * iters] */
} size_run;

typedef struct stats {
    double median, min, max; /* microseconds */
} stats;

/* ------------------------------------------------------------------ */
/* The communicator                                                    */
/* ------------------------------------------------------------------ */

/* Q and N from COLTUNE_PPN ("n" or "n:cyclic"), as coltune computes them;
 * 0 when the variable is unset or invalid (coltune then ignores it too). */
static int emulated_nodes(const char *v, bench_env *e)
{
    char *end;
    if (v == NULL)
        return 0;
    errno = 0;
    long n = strtol(v, &end, 10);
    int cyclic = strcmp(end, ":cyclic") == 0;
    if (errno != 0 || end == v || n < 1 || n > (1L << 30) || (*end != '\0' && !cyclic))
        return 0;
    e->N = (int)((e->P + n - 1) / n);
    e->Q = cyclic ? (e->P + e->N - 1) / e->N : (int)(n < e->P ? n : e->P);
    for (int r = 0; r < e->P; r++)
        e->node_of[r] = cyclic ? r % e->N : r / (int)n;
    return 1;
}

/* Q, N and the nodes of the ranks from the shared-memory nodes (numbered
 * by their lowest rank). */
static int shared_nodes(bench_env *e)
{
    MPI_Comm node = MPI_COMM_NULL;
    int rc, lsize, low, frc;
    BENCH_CALL(MPI_Comm_split_type(e->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    BENCH_CALL(MPI_Comm_size(node, &lsize));
    BENCH_CALL(MPI_Allreduce(&e->rank, &low, 1, MPI_INT, MPI_MIN, node));
    BENCH_CALL(MPI_Allgather(&low, 1, MPI_INT, e->node_of, 1, MPI_INT, e->comm));
    BENCH_CALL(MPI_Allreduce(&lsize, &e->Q, 1, MPI_INT, MPI_MAX, e->comm));
    e->N = 0;
    for (int r = 0; r < e->P; r++) /* a node's lowest rank comes before its others */
        e->node_of[r] = e->node_of[r] == r ? e->N++ : e->node_of[e->node_of[r]];
out:
    if (node != MPI_COMM_NULL && (frc = MPI_Comm_free(&node)) != MPI_SUCCESS) {
        bench_mpi_error(frc, "MPI_Comm_free(&node)", __FILE__, __LINE__);
        rc = rc == MPI_SUCCESS ? frc : rc;
    }
    return rc;
}

static int env_init(bench_env *e)
{
    int rc;
    e->comm = MPI_COMM_NULL;
    BENCH_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &e->comm));
    BENCH_CALL(MPI_Comm_set_errhandler(e->comm, MPI_ERRORS_RETURN));
    BENCH_CALL(MPI_Comm_rank(e->comm, &e->rank));
    BENCH_CALL(MPI_Comm_size(e->comm, &e->P));
    e->node_of = malloc((size_t)e->P * sizeof *e->node_of);
    if (e->node_of == NULL) { /* alone: the other ranks go on to collectives */
        fprintf(stderr, "coltune-bench: rank %d: out of memory\n", e->rank);
        MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_RUNTIME);
    }
    if (!emulated_nodes(getenv("COLTUNE_PPN"), e))
        BENCH_CALL(shared_nodes(e));
out:
    return rc;
}

/* first[i] = the lowest rank where flags[i] holds, or -1, for n <= 2 flags
 * (collective: one allreduce). */
static int agree_first(const bench_env *e, const int *flags, int *first, int n)
{
    int mine[2] = {0, 0}, low[2], rc;
    for (int i = 0; i < n; i++)
        mine[i] = flags[i] ? e->rank : e->P;
    BENCH_CALL(MPI_Allreduce(mine, low, n, MPI_INT, MPI_MIN, e->comm));
    for (int i = 0; i < n; i++)
        first[i] = low[i] < e->P ? low[i] : -1;
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Progress                                                            */
/* ------------------------------------------------------------------ */

/* Timed iterations at size S (see SWEEP_FULL_UPTO). */
static int size_iters(const bench_options *o, long S)
{
    if (!o->sweep || o->iters_given || S <= SWEEP_FULL_UPTO)
        return o->iters;
    long n = (long)o->iters * SWEEP_FULL_UPTO / S;
    return n > SWEEP_MIN_ITERS ? (int)n : SWEEP_MIN_ITERS;
}

static void progress_init(progress *p, const bench_run *r)
{
    const bench_options *o = r->o;
    memset(p, 0, sizeof *p);
    p->enabled = o->progress && r->env.rank == 0;
    p->tty = isatty(STDERR_FILENO);
    p->start = p->last = MPI_Wtime();
    p->total = 0;
    for (int i = 0; i < o->nsizes; i++)
        p->total += 1 + o->warmup + size_iters(o, o->sizes[i]);
}

static void progress_tick(progress *p, const size_run *sr, int nsizes, const char *phase,
                          int it, int of)
{
    const double first_after = 3.0, every = p->tty ? 0.5 : 10.0;
    if (!p->enabled)
        return;
    double now = MPI_Wtime(), frac = (double)++p->done / (double)p->total;
    if (now - p->start < first_after || now - p->last < every)
        return;
    p->last = now;
    fprintf(stderr, "%scoltune-bench: size %s (%d/%d) %s %d/%d, %.0f%% done, about %.0f s left%s",
            p->tty ? "\r" : "", sr->label, sr->number, nsizes, phase, it, of, 100.0 * frac,
            (now - p->start) * (1.0 - frac) / frac, p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->shown = 1;
}

/* Clears the progress line before output goes to the same terminal. */
static void progress_clear(progress *p)
{
    if (p->enabled && p->tty && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = 0;
    }
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

/* The algorithm speedups are relative to. */
static const char *baseline_of(const bench_driver *d)
{
    return d->baseline != NULL ? d->baseline : "pmpi";
}

static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The algorithm and params columns: the A/A copy is "<baseline>#2", no params. */
static void csv_alg(FILE *f, const bench_alg *alg)
{
    csv_field(f, alg->aa ? alg->label : alg->name);
    fputc(',', f);
    csv_field(f, alg->aa ? "" : alg->params);
}

/* How a turn is timed: --timing. */
static const char *timing_of(const bench_options *o)
{
    return o->b2b ? "b2b" : "barrier";
}

/* --sweep: the table's header. */
static void print_sweep_header(const bench_run *r)
{
    const bench_options *o = r->o;
    const char *rules = getenv("COLTUNE_RULES");
    char full[32];
    bench_format_size(SWEEP_FULL_UPTO, full, sizeof full);
    printf("# coltune-bench --sweep %s: P=%d nodes=%d ppn=%d input=%s seed=%lu warmup=%d "
           "burst=%d timing=%s check=%s\n", o->coll, r->env.P, r->env.N, r->env.Q, r->input,
           o->seed, o->warmup, o->burst, timing_of(o), o->check ? "yes" : "no");
    if (o->iters_given)
        printf("# iters=%d at every size\n", o->iters);
    else
        printf("# iters=%d up to %s, above it %d*%s/size (at least %d)\n", o->iters, full,
               o->iters, full, SWEEP_MIN_ITERS);
    printf("# native = %s, coltune = %s; COLTUNE_RULES=%s\n", baseline_of(r->drv),
           r->algs.v[r->sweep_spec].label, rules != NULL ? rules : "(unset: the installed rules)");
    printf("# ratio = median(native) / median(coltune): below 1, coltune is slower\n");
    printf("%-8s  %12s  %12s  %7s  %s\n", "# size", "native_us", "coltune_us", "ratio",
           "algorithm");
    fflush(stdout);
}

static void print_header(const bench_run *r)
{
    const bench_options *o = r->o;
    if (o->sweep) {
        print_sweep_header(r);
    } else {
        printf("# coltune-bench %s%s: P=%d nodes=%d ppn=%d input=%s seed=%lu iters=%d warmup=%d "
           "burst=%d timing=%s specs=%d check=%s speedup-over=%s\n",
           o->coll, o->persistent ? " (persistent: made once, started per call)" : "",
           r->env.P, r->env.N, r->env.Q, r->input, o->seed, o->iters, o->warmup, o->burst,
           timing_of(o), r->algs.n, o->check ? "yes" : "no", baseline_of(r->drv));
        printf("%-*s  %-*s  %5s  %5s  %4s  %6s  %-*s  %10s  %10s  %10s  %7s  %9s\n",
               r->coll_width, "coll", r->alg_width, "alg", "P", "nodes", "ppn", "size",
               r->input_width, "input", "median_us", "min_us", "max_us", "speedup",
               "internode");
        fflush(stdout);
    }
    /* "distribution" holds the input name (a distribution, setting or pattern) */
    if (r->csv != NULL)
        fputs("collective,algorithm,params,P,nodes,ppn,size,distribution,seed,iters,warmup,"
              "median_us,min_us,max_us,speedup,internode_msgs,status\n", r->csv);
    if (r->samples != NULL)
        fputs("collective,algorithm,params,P,nodes,ppn,size,slot,iteration,time_us\n",
              r->samples);
}

static const char *status_name(int status)
{
    return status == ALG_OK ? "ok" : status == ALG_SKIPPED ? "skipped" : "check-failed";
}

static void print_row(const bench_run *r, const size_run *sr, int a, const stats *st,
                      double speedup)
{
    const bench_env *e = &r->env;
    char msgs[24] = "-";
    if (sr->status[a] == ALG_OK && sr->msgs[a] >= 0)
        snprintf(msgs, sizeof msgs, "%ld", sr->msgs[a]);
    printf("%-*s  %-*s  %5d  %5d  %4d  %6s  %-*s  ", r->coll_width, r->o->coll, r->alg_width,
           r->algs.v[a].label, e->P, e->N, e->Q, sr->label, r->input_width, r->input);
    if (sr->status[a] != ALG_OK)
        printf("%10s  %10s  %10s  %7s  %9s\n", "-", "-", "-",
               sr->status[a] == ALG_SKIPPED ? "skipped" : "FAILED", "-");
    else if (speedup > 0)
        printf("%10.2f  %10.2f  %10.2f  %7.2f  %9s\n", st->median, st->min, st->max, speedup,
               msgs);
    else
        printf("%10.2f  %10.2f  %10.2f  %7s  %9s\n", st->median, st->min, st->max, "-", msgs);
}

static void csv_row(const bench_run *r, const size_run *sr, int a, const stats *st,
                    double speedup)
{
    FILE *f = r->csv;
    const bench_env *e = &r->env;
    const bench_options *o = r->o;
    csv_field(f, o->coll);
    fputc(',', f);
    csv_alg(f, &r->algs.v[a]);
    fprintf(f, ",%d,%d,%d,%ld,", e->P, e->N, e->Q, sr->S);
    csv_field(f, r->input);
    fprintf(f, ",%lu,%d,%d,", o->seed, sr->iters, o->warmup);
    if (sr->status[a] == ALG_OK)
        fprintf(f, "%.3f,%.3f,%.3f,", st->median, st->min, st->max);
    else
        fputs(",,,", f);
    if (sr->status[a] == ALG_OK && speedup > 0)
        fprintf(f, "%.4f", speedup);
    fputc(',', f);
    if (sr->status[a] == ALG_OK && sr->msgs[a] >= 0)
        fprintf(f, "%ld", sr->msgs[a]);
    fprintf(f, ",%s\n", status_name(sr->status[a]));
}

/* ------------------------------------------------------------------ */
/* Statistics                                                          */
/* ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of t[0..n) seconds, in microseconds; sorts t. */
static stats summarize(double *t, int n)
{
    stats s;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.median = 1e6 * (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2);
    s.min = 1e6 * t[0];
    s.max = 1e6 * t[n - 1];
    return s;
}

/* Rank 0, --samples: the slowest rank's time of every timed iteration of
 * every spec that ran (before summarize sorts them). */
static void samples_rows(const bench_run *r, const size_run *sr)
{
    const bench_env *e = &r->env;
    const int iters = sr->iters;
    for (int a = 0; a < r->algs.n; a++) {
        if (sr->status[a] != ALG_OK)
            continue;
        for (int it = 0; it < iters; it++) {
            csv_field(r->samples, r->o->coll);
            fputc(',', r->samples);
            csv_alg(r->samples, &r->algs.v[a]);
            fprintf(r->samples, ",%d,%d,%d,%ld,%d,%d,%.3f\n", e->P, e->N, e->Q, sr->S, a, it,
                    1e6 * sr->slowest[(size_t)a * (size_t)iters + (size_t)it]);
        }
    }
    fflush(r->samples);
}

/* Rank 0, --sweep: the line of one size (native against the one spec). */
static void sweep_line(bench_run *r, const size_run *sr, const stats *st, int ref)
{
    const int a = r->sweep_spec;
    const char *alg = sr->decided[0] != '\0' ? sr->decided : r->algs.v[a].label;
    if (ref < 0 || sr->status[a] != ALG_OK) {
        const char *why = ref < 0 ? "native skipped"
                          : sr->status[a] == ALG_SKIPPED ? "skipped" : "FAILED";
        printf("%8s  %12s  %12s  %7s  %s (%s)\n", sr->label, "-", "-", "-", alg, why);
        return;
    }
    double ratio = st[a].median > 0 ? st[ref].median / st[a].median : 0.0;
    printf("%8s  %12.2f  %12.2f  %7.2f  %s\n", sr->label, st[ref].median, st[a].median, ratio,
           alg);
    if (r->swept == 0 || ratio < r->worst) {
        r->worst = ratio;
        snprintf(r->worst_label, sizeof r->worst_label, "%s", sr->label);
    }
    r->swept++;
    r->below += ratio < SWEEP_SLOWER;
}

/* Rank 0, --sweep: the closing line. */
static void sweep_summary(const bench_run *r)
{
    if (r->swept == 0)
        printf("# summary: no size measured\n");
    else
        printf("# summary: smallest ratio %.2f at size %s; %d of %d sizes below %.2f\n",
               r->worst, r->worst_label, r->below, r->swept, SWEEP_SLOWER);
    fflush(stdout);
}

/* Rank 0: the table rows, CSV rows and best line of one size. */
static int report_size(bench_run *r, size_run *sr)
{
    const int n = r->algs.n, iters = sr->iters;
    int rc = MPI_SUCCESS, best = -1, ref = -1;
    stats *st = NULL;
    BENCH_ALLOC(st, (size_t)n * sizeof *st);
    if (r->samples != NULL)
        samples_rows(r, sr);
    for (int a = 0; a < n; a++) {
        if (sr->status[a] != ALG_OK)
            continue;
        st[a] = summarize(sr->slowest + (size_t)a * (size_t)iters, iters);
        if (ref < 0 && strcmp(r->algs.v[a].name, baseline_of(r->drv)) == 0 &&
            r->algs.v[a].params[0] == '\0' && !r->algs.v[a].aa)
            ref = a;
        if (best < 0 || st[a].median < st[best].median)
            best = a;
    }
    progress_clear(&r->prog);
    if (r->o->sweep)
        sweep_line(r, sr, st, ref);
    for (int a = 0; a < n; a++) {
        double speedup = ref >= 0 && sr->status[a] == ALG_OK && st[a].median > 0
                             ? st[ref].median / st[a].median : -1;
        if (!r->o->sweep)
            print_row(r, sr, a, &st[a], speedup);
        if (r->csv != NULL)
            csv_row(r, sr, a, &st[a], speedup);
    }
    if (best >= 0 && !r->o->sweep)
        printf("%-*s  size %s %s: %s, median %.2f us, speedup %.2f\n", r->coll_width, "best",
               sr->label, r->input, r->algs.v[best].label, st[best].median,
               ref >= 0 && st[best].median > 0 ? st[ref].median / st[best].median : 0.0);
    fflush(stdout);
    if (r->csv != NULL)
        fflush(r->csv);
out:
    free(st);
    return rc;
}

/* ------------------------------------------------------------------ */
/* One size                                                            */
/* ------------------------------------------------------------------ */

static void size_free(const bench_run *r, size_run *sr)
{
    r->drv->teardown(sr->state);
    free(sr->status);
    free(sr->local);
    free(sr->slowest);
    free(sr->msgs_local);
    free(sr->msgs);
    free(sr->compute);
    free(sr->overlapped);
}

/* Driver setup, agreed over all ranks. Returns an MPI code, or
 * BENCH_SETUP_UNUSABLE after the first rank that cannot serve S said why. */
static int size_setup(bench_run *r, size_run *sr)
{
    const size_t n = (size_t)r->algs.n * (size_t)sr->iters;
    char err[256] = "";
    int rc, flags[2], first[2];
    rc = r->drv->setup(r->o, &r->env, sr->S, &sr->state, err, sizeof err);
    if (rc == MPI_SUCCESS) {
        sr->status = calloc((size_t)r->algs.n, sizeof *sr->status);
        sr->local = calloc(n, sizeof *sr->local);
        sr->slowest = calloc(n, sizeof *sr->slowest);
        sr->msgs_local = malloc((size_t)r->algs.n * sizeof *sr->msgs_local);
        sr->msgs = malloc((size_t)r->algs.n * sizeof *sr->msgs);
        if (r->o->overlap) {
            sr->compute = calloc((size_t)r->algs.n, sizeof *sr->compute);
            sr->overlapped = calloc(n, sizeof *sr->overlapped);
        }
        if (sr->status == NULL || sr->local == NULL || sr->slowest == NULL ||
            sr->msgs_local == NULL || sr->msgs == NULL ||
            (r->o->overlap && (sr->compute == NULL || sr->overlapped == NULL))) {
            rc = MPI_ERR_NO_MEM;
            bench_mpi_error(rc, "calloc(times)", __FILE__, __LINE__);
        } else {
            for (int a = 0; a < r->algs.n; a++)
                sr->msgs_local[a] = sr->msgs[a] = -1;
        }
    }
    flags[0] = rc == BENCH_SETUP_UNUSABLE;
    flags[1] = rc != MPI_SUCCESS && rc != BENCH_SETUP_UNUSABLE;
    int arc = agree_first(&r->env, flags, first, 2);
    if (arc != MPI_SUCCESS)
        return arc;
    if (first[1] >= 0)
        return rc != MPI_SUCCESS && rc != BENCH_SETUP_UNUSABLE ? rc : MPI_ERR_OTHER;
    if (first[0] >= 0) {
        if (r->env.rank == first[0]) {
            progress_clear(&r->prog);
            fprintf(stderr, "coltune-bench: error: --sizes: %s\n", err);
        }
        return BENCH_SETUP_UNUSABLE;
    }
    return MPI_SUCCESS;
}

static void report_mismatch(const bench_run *r, const size_run *sr, const bench_alg *alg,
                            const bench_mismatch *m)
{
    char where[192];
    if (m->what[0] != '\0')
        snprintf(where, sizeof where, "%s", m->what);
    else if (m->peer >= 0)
        snprintf(where, sizeof where, "byte %zu of the block from rank %d", m->block_offset,
                 m->peer);
    else
        snprintf(where, sizeof where, "%zu bytes past the last block", m->block_offset);
    if (m->what[0] != '\0')
        fprintf(stderr, "coltune-bench: check FAILED: %s %s (params '%s') P=%d nodes=%d "
                "ppn=%d size=%ld input=%s seed=%lu: rank %d: %s\n", r->o->coll, alg->name,
                alg->params, r->env.P, r->env.N, r->env.Q, sr->S, r->input, r->o->seed,
                r->env.rank, where);
    else
        fprintf(stderr, "coltune-bench: check FAILED: %s %s (params '%s') P=%d nodes=%d "
                "ppn=%d size=%ld input=%s seed=%lu: rank %d, receive buffer byte %zu (%s): "
                "expected 0x%02x, got 0x%02x\n", r->o->coll, alg->name, alg->params, r->env.P,
                r->env.N, r->env.Q, sr->S, r->input, r->o->seed, r->env.rank, m->offset, where,
                m->expected, m->got);
    fflush(stderr);
}

/* The spec handed to coltune: "rules" stands for no spec, i.e. coltune
 * decides as the intercepted call would (COLTUNE_RULES, environment). */
static const char *coltune_spec(const bench_alg *alg)
{
    return strcmp(alg->spec, "rules") == 0 ? NULL : alg->spec;
}

/* One call per spec: can it serve this size (and, with --check, is the
 * result right)? Specs that cannot are skipped for this size. */
static int size_probe(bench_run *r, size_run *sr)
{
    int rc = MPI_SUCCESS;
    for (int a = 0; a < r->algs.n; a++) {
        const bench_alg *alg = &r->algs.v[a];
        bench_mismatch m = {0};
        int flags[2], first[2];
        int crc = r->o->check ? r->drv->check(sr->state, coltune_spec(alg), &m)
                              : r->drv->run(sr->state, coltune_spec(alg));
        flags[0] = crc != MPI_SUCCESS;
        flags[1] = m.found;
        BENCH_CALL(agree_first(&r->env, flags, first, 2));
        if (first[0] >= 0) {
            sr->status[a] = ALG_SKIPPED;
            if (r->env.rank == first[0]) {
                char msg[MPI_MAX_ERROR_STRING] = "";
                int len;
                if (MPI_Error_string(crc, msg, &len) != MPI_SUCCESS)
                    snprintf(msg, sizeof msg, "MPI error %d", crc);
                progress_clear(&r->prog);
                fprintf(stderr, "coltune-bench: note: %s skipped at size %s: the call "
                        "returned '%s' on rank %d (coltune's message above says why)\n",
                        alg->spec, sr->label, msg, r->env.rank);
                fflush(stderr);
            }
        } else if (first[1] >= 0) {
            sr->status[a] = ALG_CHECK_FAILED;
            r->mismatch = 1;
            if (r->env.rank == first[1])
                report_mismatch(r, sr, alg, &m);
        }
    }
    progress_tick(&r->prog, sr, r->o->nsizes, r->o->check ? "check" : "probe", 1, 1);
out:
    return rc;
}

/* Keeps the most inter-node messages this rank sent in one call of spec a. */
static int count_msgs(const bench_run *r, size_run *sr, int a)
{
    long count = -1;
    int rc = r->drv->internode_msgs(sr->state, &count);
    if (rc != MPI_SUCCESS)
        bench_mpi_error(rc, "coltune_sdde_internode_msgs", __FILE__, __LINE__);
    else if (count > sr->msgs_local[a])
        sr->msgs_local[a] = count;
    return rc;
}

/* order[0..n): the specs of iteration it of a timed (or warmup) loop in a
 * random order drawn from --seed, the same on every rank. A fixed cyclic
 * order would give each spec the same predecessor every time, and what a
 * call leaves behind (caches, an unfinished progress engine) would bias its
 * successor alike in every iteration: an A/A pair (--aa) showed it. */
static void shuffle_order(const bench_run *r, const size_run *sr, int it, int timed,
                          int *order, int n)
{
    uint64_t h = bench_mix((uint64_t)r->o->seed ^ 0x0bde5eedull);
    h = bench_mix(h ^ (uint64_t)sr->S);
    h = bench_mix(h ^ ((uint64_t)(uint32_t)it << 1 | (uint64_t)(timed != 0)));
    for (int k = 0; k < n; k++)
        order[k] = k;
    for (int k = n - 1; k > 0; k--) { /* Fisher-Yates */
        h = bench_mix(h + (uint64_t)k);
        int j = (int)(h % (uint64_t)(k + 1)), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
}

/* A computation of sec seconds that calls no MPI routine (OSU's overlap
 * tests compute so): nothing but the MPI library's own threads, or
 * coltune's shared window, moves the exchange meanwhile. */
static void compute_for(double sec)
{
    const double end = MPI_Wtime() + sec;
    while (MPI_Wtime() < end)
        ;
}

/* One timed call of spec a: run it, or (--overlap's second pass, compute
 * given) start it, compute for compute[a], then wait. */
static int timed_call(bench_run *r, size_run *sr, int a, const double *compute)
{
    const char *spec = coltune_spec(&r->algs.v[a]);
    MPI_Request req;
    if (compute == NULL)
        return r->drv->run(sr->state, spec);
    int rc = r->drv->start(sr->state, spec, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    compute_for(compute[a]);
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* iters iterations of every usable spec, each after a barrier, in a fresh
 * random order each iteration; records this rank's times (and inter-node
 * messages) when timed; with compute (--overlap), the calls around it. */
static int size_loop(bench_run *r, size_run *sr, int iters, int timed, const double *compute)
{
    const int n = r->algs.n;
    int rc = MPI_SUCCESS, *order = NULL;
    BENCH_ALLOC(order, (size_t)n * sizeof *order);
    for (int it = 0; it < iters; it++) {
        shuffle_order(r, sr, it, timed, order, n);
        for (int k = 0; k < n; k++) {
            int a = order[k];
            if (sr->status[a] != ALG_OK)
                continue;
            double t0 = 0, t1 = 0;
            if (r->o->b2b) /* the whole burst back to back is timed (IMB) */
                BENCH_CALL(MPI_Barrier(r->env.comm));
            for (int b = 0; b < r->o->burst; b++) { /* else the last call is timed (OSU) */
                if (!r->o->b2b)
                    BENCH_CALL(MPI_Barrier(r->env.comm));
                if (!r->o->b2b || b == 0)
                    t0 = MPI_Wtime();
                rc = timed_call(r, sr, a, compute);
                t1 = MPI_Wtime();
                if (rc != MPI_SUCCESS) {
                    bench_mpi_error(rc, r->algs.v[a].spec, __FILE__, __LINE__);
                    goto out;
                }
            }
            if (timed)
                sr->local[(size_t)a * (size_t)iters + (size_t)it] =
                    (t1 - t0) / (r->o->b2b ? r->o->burst : 1);
            if (timed && compute == NULL && r->drv->internode_msgs != NULL)
                BENCH_CALL(count_msgs(r, sr, a));
        }
        progress_tick(&r->prog, sr, r->o->nsizes, timed ? "iteration" : "warmup", it + 1,
                      iters);
    }
out:
    free(order);
    return rc;
}

/* The message size the rules see at S: the largest block any rank sends
 * (every rank derives the whole count matrix alike). */
static long rules_msg_size(const bench_run *r, long S)
{
    long most = 0;
    if (!(r->drv->uses & BENCH_USES_DIST) || r->o->dist == BENCH_DIST_EQUAL)
        return S;
    for (int from = 0; from < r->env.P; from++)
        for (int to = 0; to < r->env.P; to++) {
            long b = bench_block_bytes(r->o->dist, r->o->seed, S, r->env.P, from, to);
            most = b > most ? b : most;
        }
    return most;
}

/* --sweep with the rules: what an intercepted call of size S runs (all
 * ranks: the query is collective on a communicator's first use). */
static void sweep_decision(const bench_run *r, size_run *sr)
{
    if (!r->o->sweep || coltune_spec(&r->algs.v[r->sweep_spec]) != NULL)
        return;
    int rc = coltune_decision(r->env.comm, r->o->coll, (MPI_Count)rules_msg_size(r, sr->S),
                              sr->decided, (int)sizeof sr->decided);
    if (rc != MPI_SUCCESS) /* the rules spec was skipped too: coltune said why */
        snprintf(sr->decided, sizeof sr->decided, "(undecided)");
}

/* --overlap: every spec's median time (of the slowest rank, rank 0's) is
 * its computation; then the timed loop again, each call around it. */
static int overlap_pass(bench_run *r, size_run *sr)
{
    int rc;
    const int n = r->algs.n, iters = sr->iters;
    double *t = NULL;
    BENCH_ALLOC(t, (size_t)iters * sizeof *t);
    for (int a = 0; a < n && r->env.rank == 0; a++) {
        if (sr->status[a] != ALG_OK)
            continue;
        memcpy(t, sr->slowest + (size_t)a * (size_t)iters, (size_t)iters * sizeof *t);
        sr->compute[a] = summarize(t, iters).median * 1e-6;
    }
    BENCH_CALL(MPI_Bcast(sr->compute, n, MPI_DOUBLE, 0, r->env.comm));
    BENCH_CALL(size_loop(r, sr, sr->iters, 1, sr->compute));
    BENCH_CALL(MPI_Reduce(sr->local, sr->overlapped, n * iters, MPI_DOUBLE, MPI_MAX, 0,
                          r->env.comm));
out:
    free(t);
    return rc;
}

/* Rank 0, --overlap: one line per spec after the size's table. */
static void overlap_lines(const bench_run *r, size_run *sr)
{
    for (int a = 0; a < r->algs.n; a++) {
        if (sr->status[a] != ALG_OK)
            continue;
        const double pure = sr->compute[a] * 1e6;
        const stats total = summarize(sr->overlapped + (size_t)a * (size_t)sr->iters, sr->iters);
        double overlap = pure > 0 ? 100.0 * (1.0 - (total.median - pure) / pure) : 0.0;
        overlap = overlap < 0 ? 0 : overlap > 100 ? 100 : overlap;
        printf("%-*s  size %s %s: %s, time %.2f us, compute %.2f us, total %.2f us, "
               "overlap %.0f%%\n", r->coll_width, "overlap", sr->label, r->input,
               r->algs.v[a].label, pure, pure, total.median, overlap);
    }
    fflush(stdout);
}

static int run_size(bench_run *r, long S, int number)
{
    size_run sr = {.S = S, .number = number, .iters = size_iters(r->o, S)};
    int rc;
    bench_format_size(S, sr.label, sizeof sr.label);
    rc = size_setup(r, &sr);
    if (rc != MPI_SUCCESS)
        goto out;
    BENCH_CALL(size_probe(r, &sr));
    BENCH_CALL(size_loop(r, &sr, r->o->warmup, 0, NULL));
    BENCH_CALL(size_loop(r, &sr, sr.iters, 1, NULL));
    BENCH_CALL(MPI_Reduce(sr.local, sr.slowest, r->algs.n * sr.iters, MPI_DOUBLE, MPI_MAX, 0,
                          r->env.comm));
    if (r->o->overlap)
        BENCH_CALL(overlap_pass(r, &sr));
    BENCH_CALL(MPI_Reduce(sr.msgs_local, sr.msgs, r->algs.n, MPI_LONG, MPI_MAX, 0, r->env.comm));
    sweep_decision(r, &sr);
    if (r->env.rank == 0)
        BENCH_CALL(report_size(r, &sr));
    if (r->env.rank == 0 && r->o->overlap)
        overlap_lines(r, &sr);
out:
    size_free(r, &sr);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The run                                                             */
/* ------------------------------------------------------------------ */

static void usage_error(int rank, const char *msg)
{
    if (rank != 0)
        return;
    fprintf(stderr, "coltune-bench: error: %s\n(run with --help for usage)\n", msg);
    fflush(stderr);
}

/* Rank 0 opens --csv and --samples; every rank learns whether it could. */
static int open_csv(bench_run *r, char *err, size_t len, int *ok)
{
    int rc;
    *ok = 1;
    if (r->o->csv == NULL && r->o->samples == NULL)
        return MPI_SUCCESS;
    if (r->env.rank == 0 && r->o->csv != NULL) {
        r->csv = fopen(r->o->csv, "w");
        *ok = r->csv != NULL;
        if (!*ok)
            snprintf(err, len, "--csv: cannot open '%s': %s", r->o->csv, strerror(errno));
    }
    if (r->env.rank == 0 && *ok && r->o->samples != NULL) {
        r->samples = fopen(r->o->samples, "w");
        *ok = r->samples != NULL;
        if (!*ok)
            snprintf(err, len, "--samples: cannot open '%s': %s", r->o->samples,
                     strerror(errno));
    }
    BENCH_CALL(MPI_Bcast(ok, 1, MPI_INT, 0, r->env.comm));
out:
    return rc;
}

static void note_ignored(const bench_run *r)
{
    const bench_options *o = r->o;
    if (o->group_p > 0 && !(r->drv->uses & BENCH_USES_GROUPS))
        bench_note(r->env.rank, "--group-sizes is ignored by %s", o->coll);
    if (o->pattern != BENCH_PATTERN_NONE && !(r->drv->uses & BENCH_USES_PATTERN))
        bench_note(r->env.rank, "--pattern is ignored by %s", o->coll);
    if (o->setting > 0 && !(r->drv->uses & BENCH_USES_SETTING))
        bench_note(r->env.rank, "--setting is ignored by %s", o->coll);
}

/* --sweep: the one spec the table compares with the baseline. */
static int find_sweep_spec(bench_run *r, char *err, size_t len)
{
    int found = 0;
    for (int a = 0; a < r->algs.n; a++) {
        const bench_alg *alg = &r->algs.v[a];
        if (alg->aa || (strcmp(alg->name, baseline_of(r->drv)) == 0 && alg->params[0] == '\0'))
            continue;
        if (found++ == 0)
            r->sweep_spec = a;
    }
    if (found == 1)
        return 0;
    snprintf(err, len, "--sweep: compares %s with one spec (default rules), but --algs "
             "'%s' gives %d", baseline_of(r->drv), r->o->algs, found);
    return -1;
}

/* Everything before the first size. Returns an exit status, or -1 to go on. */
static int prepare(bench_run *r, const char *prog)
{
    const bench_options *o = r->o;
    char err[512];
    int ok;
    if (o->help) {
        if (r->env.rank == 0)
            bench_options_usage(prog);
        return BENCH_EXIT_OK;
    }
    r->drv = bench_driver_find(o->coll);
    if (r->drv == NULL || r->drv->setup == NULL || bench_algs_registered(o->coll) == 0) {
        snprintf(err, sizeof err, "collective %s is not available in this build", o->coll);
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
#if !defined(CT_HAVE_PCOLL_MPI4) && !defined(CT_HAVE_PCOLL_MPIX)
    /* before --list: coltune-tune asks --list whether a form is there */
    if (o->persistent) {
        usage_error(r->env.rank, "--persistent: the MPI library coltune-bench was built "
                                 "against has no persistent collectives");
        return BENCH_EXIT_USAGE;
    }
#endif
    if (o->list) {
        bench_algs_list(o->coll, &r->env);
        return BENCH_EXIT_OK;
    }
    if (o->overlap && r->drv->start == NULL) {
        snprintf(err, sizeof err, "--overlap: %s is not a nonblocking collective (ialltoallv, "
                 "ialltoall, iallgather_inter, iallgatherv_inter, ineighbor_alltoallv, "
                 "ineighbor_alltoall)", o->coll);
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    if (o->persistent && !(r->drv->uses & BENCH_USES_PERSISTENT)) {
        snprintf(err, sizeof err, "--persistent: %s has no persistent form in coltune-bench "
                 "(ialltoallv, ialltoall, ineighbor_alltoallv, ineighbor_alltoall)", o->coll);
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    note_ignored(r);
    if (r->drv->validate != NULL && r->drv->validate(o, &r->env, err, sizeof err) != 0) {
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    if (bench_algs_expand(o->algs, o->coll, baseline_of(r->drv), o->aa, &r->env, &r->algs, err,
                          sizeof err) != 0) {
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    if (o->sweep && find_sweep_spec(r, err, sizeof err) != 0) {
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    if ((long)r->algs.n * o->iters > MAX_SAMPLES) {
        snprintf(err, sizeof err, "--iters: %d specs x %d iterations is more than %ld "
                 "measurements per size", r->algs.n, o->iters, MAX_SAMPLES);
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    if (open_csv(r, err, sizeof err, &ok) != MPI_SUCCESS)
        return BENCH_EXIT_RUNTIME;
    if (!ok) {
        usage_error(r->env.rank, err);
        return BENCH_EXIT_USAGE;
    }
    r->coll_width = (int)strlen(o->coll) > 4 ? (int)strlen(o->coll) : 4;
    bench_input_name(o, r->input, sizeof r->input);
    r->input_width = (int)strlen(r->input) > 8 ? (int)strlen(r->input) : 8;
    r->alg_width = 3;
    for (int a = 0; a < r->algs.n; a++)
        if ((int)strlen(r->algs.v[a].label) > r->alg_width)
            r->alg_width = (int)strlen(r->algs.v[a].label);
    return -1;
}

static int run_sizes(bench_run *r)
{
    progress_init(&r->prog, r);
    if (r->env.rank == 0)
        print_header(r);
    for (int i = 0; i < r->o->nsizes; i++) {
        int rc = run_size(r, r->o->sizes[i], i + 1);
        if (rc == BENCH_SETUP_UNUSABLE)
            return BENCH_EXIT_USAGE;
        if (rc != MPI_SUCCESS)
            return BENCH_EXIT_RUNTIME;
    }
    progress_clear(&r->prog);
    if (r->o->sweep && r->env.rank == 0)
        sweep_summary(r);
    return r->mismatch ? BENCH_EXIT_MISMATCH : BENCH_EXIT_OK;
}

static int bench(const bench_options *o, const char *prog)
{
    bench_run r = {.o = o};
    int status;
    if (env_init(&r.env) != MPI_SUCCESS) {
        free(r.env.node_of);
        return BENCH_EXIT_RUNTIME;
    }
    status = prepare(&r, prog);
    if (status < 0)
        status = run_sizes(&r);
    if (r.csv != NULL && fclose(r.csv) != 0) {
        fprintf(stderr, "coltune-bench: error: --csv: writing '%s': %s\n", o->csv,
                strerror(errno));
        status = status == BENCH_EXIT_OK ? BENCH_EXIT_RUNTIME : status;
    }
    if (r.samples != NULL && fclose(r.samples) != 0) {
        fprintf(stderr, "coltune-bench: error: --samples: writing '%s': %s\n", o->samples,
                strerror(errno));
        status = status == BENCH_EXIT_OK ? BENCH_EXIT_RUNTIME : status;
    }
    bench_alglist_free(&r.algs);
    free(r.env.node_of);
    if (status != BENCH_EXIT_RUNTIME) {
        int rc = MPI_Comm_free(&r.env.comm);
        if (rc != MPI_SUCCESS) {
            bench_mpi_error(rc, "MPI_Comm_free(&comm)", __FILE__, __LINE__);
            status = BENCH_EXIT_RUNTIME;
        }
    }
    return status;
}

int main(int argc, char **argv)
{
    bench_options o;
    char err[512] = "";
    const char *slash = strrchr(argv[0], '/');
    const char *prog = slash ? slash + 1 : argv[0];
    int rank = 0, status, rc;

    /* Before MPI_Init: coltune reads its configuration there. */
    int perr = bench_options_parse(argc, argv, &o, err, sizeof err);
    if (perr == 0 && o.ppn != NULL && setenv("COLTUNE_PPN", o.ppn, 1) != 0) {
        snprintf(err, sizeof err, "--ppn: cannot set COLTUNE_PPN: %s", strerror(errno));
        perr = -1;
    }
    if (perr == 0 && setenv("COLTUNE_FALLBACK", "error", 0) != 0) {
        snprintf(err, sizeof err, "cannot set COLTUNE_FALLBACK: %s", strerror(errno));
        perr = -1;
    }

    if ((rc = MPI_Init(&argc, &argv)) != MPI_SUCCESS) {
        fprintf(stderr, "coltune-bench: MPI_Init failed (error %d)\n", rc);
        return BENCH_EXIT_RUNTIME;
    }
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank)) != MPI_SUCCESS) {
        bench_mpi_error(rc, "MPI_Comm_rank", __FILE__, __LINE__);
        MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_RUNTIME);
    }
    if (perr != 0) {
        usage_error(rank, err);
        status = BENCH_EXIT_USAGE;
    } else {
        status = bench(&o, prog);
    }
    /* After a failed MPI call other ranks may wait in a collective forever. */
    if (status == BENCH_EXIT_RUNTIME)
        MPI_Abort(MPI_COMM_WORLD, status);
    if ((rc = MPI_Finalize()) != MPI_SUCCESS) {
        fprintf(stderr, "coltune-bench: MPI_Finalize failed (error %d)\n", rc);
        return BENCH_EXIT_RUNTIME;
    }
    return status;
}
