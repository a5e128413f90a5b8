/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.c - coltune-bench's command line.
 *
 * Parsed before MPI_Init (--ppn must reach the environment before coltune
 * reads its configuration there), so nothing here uses MPI: errors are
 * returned as a message naming the option and the value, and main prints it
 * on rank 0.
 */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SIZES "16,256,4k,64k"
#define SWEEP_SIZES "0..1m" /* 0, 1, 2, 4, ... 1 MiB: the sizes of IMB and OSU */
#define SWEEP_ITERS 100     /* up to 64 KiB; fewer above (coltune-bench.c) */

static const char *const dist_names[BENCH_DIST_COUNT] = {
    [BENCH_DIST_UNIFORM] = "uniform",   [BENCH_DIST_NORMAL] = "normal",
    [BENCH_DIST_POWERLAW] = "powerlaw", [BENCH_DIST_FFT_N1] = "fft-n1",
    [BENCH_DIST_FFT_N2] = "fft-n2",   [BENCH_DIST_EQUAL] = "equal",
};

const char *bench_dist_name(bench_dist d)
{
    return (d >= 0 && d < BENCH_DIST_COUNT) ? dist_names[d] : "?";
}

int bench_setting(const bench_options *o)
{
    if (o->setting > 0)
        return o->setting;
    return strcmp(o->coll, "allgatherv_inter") == 0 ? 5 : 1;
}

bench_pattern bench_pattern_of(const bench_options *o, int *k)
{
    *k = o->pattern == BENCH_PATTERN_NONE ? 3 : o->pattern_k;
    return o->pattern == BENCH_PATTERN_NONE ? BENCH_PATTERN_RANDOM : o->pattern;
}

void bench_input_name(const bench_options *o, char *buf, size_t len)
{
    const bench_driver *d = bench_driver_find(o->coll);
    unsigned uses = d != NULL ? d->uses : BENCH_USES_DIST;
    int k;
    if (uses & BENCH_USES_SETTING) {
        snprintf(buf, len, "setting%d", bench_setting(o));
    } else if (uses & BENCH_USES_PATTERN) {
        bench_pattern p = bench_pattern_of(o, &k);
        if (p == BENCH_PATTERN_RANDOM && o->pattern_off >= 0)
            snprintf(buf, len, "random:%d:%d", k, o->pattern_off);
        else if (p == BENCH_PATTERN_RANDOM)
            snprintf(buf, len, "random:%d", k);
        else
            snprintf(buf, len, "%s", p == BENCH_PATTERN_STENCIL2D ? "stencil2d" : "stencil3d");
    } else {
        snprintf(buf, len, "%s", bench_dist_name(o->dist));
    }
}

static int fail(char *err, size_t len, const char *fmt, ...) BENCH_PRINTF(3, 4);
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* A whole-string decimal integer in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    if (*s == '\0' || *s == ' ')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}


static int add_size(long v, long *sizes, int max, int *n, char *err, size_t len)
{
    if (v > INT_MAX)
        return fail(err, len, "--sizes: %ld bytes is larger than an int count allows", v);
    for (int i = 0; i < *n; i++)
        if (sizes[i] == v)
            return 0;
    if (*n >= max)
        return fail(err, len, "--sizes: more than %d sizes", max);
    sizes[(*n)++] = v;
    return 0;
}

/* One item of --sizes: "S" or "a..b" (a, 2a, 4a, ... up to b, plus b). */
static int parse_size_item(const char *item, size_t ilen, long *sizes, int max, int *n,
                           char *err, size_t len)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < ilen; i++)
        if (item[i] == '.' && item[i + 1] == '.') {
            dots = item + i;
            break;
        }
    long a, b;
    if (dots == NULL) {
        if (bench_parse_size(item, ilen, LONG_MAX, &a) != 0)
            return fail(err, len, "--sizes: bad size '%.*s' (expected bytes with an "
                        "optional k, m or g suffix)", (int)ilen, item);
        return add_size(a, sizes, max, n, err, len);
    }
    size_t alen = (size_t)(dots - item);
    if (bench_parse_size(item, alen, LONG_MAX, &a) != 0 ||
        bench_parse_size(dots + 2, ilen - alen - 2, LONG_MAX, &b) != 0 || a > b || b < 1)
        return fail(err, len, "--sizes: bad range '%.*s' (expected a..b with 0 <= a <= b, "
                    "b >= 1)", (int)ilen, item);
    if (a == 0) { /* 0..b: 0, then 1, 2, 4, ... b */
        if (add_size(0, sizes, max, n, err, len) != 0)
            return -1;
        a = 1;
    }
    for (long v = a; v < b; v *= 2)
        if (add_size(v, sizes, max, n, err, len) != 0)
            return -1;
    return add_size(b, sizes, max, n, err, len);
}

int bench_parse_sizes(const char *text, long *sizes, int max, int *n, char *err,
                      size_t errlen)
{
    const char *p = text;
    *n = 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
        if (parse_size_item(p, ilen, sizes, max, n, err, errlen) != 0)
            return -1;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

/* ------------------------------------------------------------------ */
/* One handler per option                                              */
/* ------------------------------------------------------------------ */

typedef int (*opt_fn)(bench_options *o, const char *v, char *err, size_t len);

static int set_coll(bench_options *o, const char *v, char *err, size_t len)
{
    char names[256];
    if (bench_driver_find(v) == NULL) {
        bench_driver_names(names, sizeof names);
        return fail(err, len, "--coll: unknown collective '%s' (known: %s)", v, names);
    }
    o->coll = v;
    return 0;
}

/* A text option that must not be empty: *dst = v, else the error empty. */
static int set_text(const char **dst, const char *v, const char *empty, char *err, size_t len)
{
    if (*v == '\0')
        return fail(err, len, "%s", empty);
    *dst = v;
    return 0;
}

static int set_algs(bench_options *o, const char *v, char *err, size_t len)
{
    o->algs_given = 1;
    return set_text(&o->algs, v, "--algs: empty list", err, len);
}

static int set_sizes(bench_options *o, const char *v, char *err, size_t len)
{
    o->sizes_given = 1;
    return bench_parse_sizes(v, o->sizes, BENCH_MAX_SIZES, &o->nsizes, err, len);
}

static int set_dist(bench_options *o, const char *v, char *err, size_t len)
{
    o->dist_given = 1;
    for (int d = 0; d < BENCH_DIST_COUNT; d++)
        if (strcmp(v, dist_names[d]) == 0) {
            o->dist = (bench_dist)d;
            return 0;
        }
    if (strcmp(v, "power-law") == 0) {
        o->dist = BENCH_DIST_POWERLAW;
        return 0;
    }
    return fail(err, len, "--dist: unknown distribution '%s' (known: uniform, normal, "
                "powerlaw, fft-n1, fft-n2, equal)", v);
}

/* An integer option in [lo, hi]: *dst = v, else an error naming it. */
static int set_int(int *dst, const char *name, const char *v, long lo, long hi, char *err,
                   size_t len)
{
    long x;
    if (parse_long(v, lo, hi, &x) != 0)
        return fail(err, len, "--%s: bad value '%s' (expected %ld..%ld)", name, v, lo, hi);
    *dst = (int)x;
    return 0;
}

static int set_iters(bench_options *o, const char *v, char *err, size_t len)
{
    o->iters_given = 1;
    return set_int(&o->iters, "iters", v, 1, 1000000, err, len);
}

static int set_warmup(bench_options *o, const char *v, char *err, size_t len)
{
    return set_int(&o->warmup, "warmup", v, 0, 1000000, err, len);
}

static int set_burst(bench_options *o, const char *v, char *err, size_t len)
{
    o->burst_given = 1;
    return set_int(&o->burst, "burst", v, 1, 1000, err, len);
}

static int set_timing(bench_options *o, const char *v, char *err, size_t len)
{
    if (strcmp(v, "barrier") != 0 && strcmp(v, "b2b") != 0)
        return fail(err, len, "--timing: bad value '%s' (barrier or b2b)", v);
    o->b2b = strcmp(v, "b2b") == 0;
    return 0;
}

static int set_seed(bench_options *o, const char *v, char *err, size_t len)
{
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 0);
    if (*v == '\0' || *v == '-' || *end != '\0' || errno != 0)
        return fail(err, len, "--seed: bad value '%s' (expected a non-negative integer)", v);
    o->seed = x;
    return 0;
}

/* "n" or "n:cyclic", as COLTUNE_PPN takes it. */
static int set_ppn(bench_options *o, const char *v, char *err, size_t len)
{
    char num[32];
    long x;
    const char *colon = strchr(v, ':');
    size_t nlen = colon ? (size_t)(colon - v) : strlen(v);
    int ok = nlen < sizeof num && (colon == NULL || strcmp(colon, ":cyclic") == 0);
    if (ok) {
        memcpy(num, v, nlen);
        num[nlen] = '\0';
        ok = parse_long(num, 1, 1L << 30, &x) == 0;
    }
    if (!ok)
        return fail(err, len, "--ppn: bad value '%s' (expected ranks per node n >= 1, "
                    "optionally n:cyclic)", v);
    o->ppn = v;
    return 0;
}

static int set_groups(bench_options *o, const char *v, char *err, size_t len)
{
    char a[32];
    long p, q;
    const char *colon = strchr(v, ':');
    size_t alen = colon ? (size_t)(colon - v) : 0;
    if (colon == NULL || alen >= sizeof a)
        return fail(err, len, "--group-sizes: bad value '%s' (expected p:q)", v);
    memcpy(a, v, alen);
    a[alen] = '\0';
    if (parse_long(a, 1, INT_MAX, &p) != 0 || parse_long(colon + 1, 1, INT_MAX, &q) != 0)
        return fail(err, len, "--group-sizes: bad value '%s' (expected p:q, both >= 1)", v);
    o->group_p = (int)p;
    o->group_q = (int)q;
    return 0;
}

static int set_pattern(bench_options *o, const char *v, char *err, size_t len)
{
    long k;
    if (strcmp(v, "stencil2d") == 0) {
        o->pattern = BENCH_PATTERN_STENCIL2D;
        return 0;
    }
    if (strcmp(v, "stencil3d") == 0) {
        o->pattern = BENCH_PATTERN_STENCIL3D;
        return 0;
    }
    if (strncmp(v, "random:", 7) == 0) {
        char kbuf[32];
        const char *colon = strchr(v + 7, ':');
        const size_t klen = colon != NULL ? (size_t)(colon - (v + 7)) : strlen(v + 7);
        long f = -1;
        if (klen < sizeof kbuf) {
            memcpy(kbuf, v + 7, klen);
            kbuf[klen] = '\0';
            if (parse_long(kbuf, 1, INT_MAX, &k) == 0 &&
                (colon == NULL || parse_long(colon + 1, 0, 100, &f) == 0)) {
                o->pattern = BENCH_PATTERN_RANDOM;
                o->pattern_k = (int)k;
                o->pattern_off = (int)f;
                return 0;
            }
        }
    }
    return fail(err, len, "--pattern: bad value '%s' (expected stencil2d, stencil3d, "
                "random:k or random:k:f, f a percentage 0-100)", v);
}

static int set_setting(bench_options *o, const char *v, char *err, size_t len)
{
    long x;
    if (parse_long(v, 1, 8, &x) != 0)
        return fail(err, len, "--setting: bad value '%s' (expected 1..8, settings of [Kang2019])",
                    v);
    o->setting = (int)x;
    return 0;
}

static int set_csv(bench_options *o, const char *v, char *err, size_t len)
{
    return set_text(&o->csv, v, "--csv: empty file name", err, len);
}

static int set_samples(bench_options *o, const char *v, char *err, size_t len)
{
    return set_text(&o->samples, v, "--samples: empty file name", err, len);
}

static int set_aa(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->aa = 1;
    return 0;
}

static int set_check(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->check = 1;
    return 0;
}

static int set_no_progress(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->progress = 0;
    return 0;
}

static int set_list(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->list = 1;
    return 0;
}

static int set_sweep(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->sweep = 1;
    return 0;
}

static int set_overlap(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->overlap = 1;
    return 0;
}

static int set_persistent(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->persistent = 1;
    return 0;
}

static int set_help(bench_options *o, const char *v, char *err, size_t len)
{
    (void)v, (void)err, (void)len;
    o->help = 1;
    return 0;
}

static const struct {
    const char *name;
    int has_arg;
    opt_fn fn;
} options[] = {
    {"coll", 1, set_coll},       {"algs", 1, set_algs},
    {"sizes", 1, set_sizes},     {"dist", 1, set_dist},
    {"iters", 1, set_iters},     {"warmup", 1, set_warmup},
    {"burst", 1, set_burst},     {"timing", 1, set_timing},
    {"seed", 1, set_seed},       {"ppn", 1, set_ppn},
    {"group-sizes", 1, set_groups}, {"pattern", 1, set_pattern},
    {"setting", 1, set_setting},
    {"csv", 1, set_csv},         {"samples", 1, set_samples},
    {"check", 0, set_check},     {"aa", 0, set_aa},
    {"no-progress", 0, set_no_progress}, {"list", 0, set_list},
    {"sweep", 0, set_sweep},     {"help", 0, set_help},
    {"overlap", 0, set_overlap}, {"persistent", 0, set_persistent},
};

/* Handles argv[*i] (and its value); advances *i past what it used. */
static int parse_one(int argc, char **argv, int *i, bench_options *o, char *err, size_t len)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "-h") == 0)
        return set_help(o, NULL, err, len);
    if (strncmp(arg, "--", 2) != 0)
        return fail(err, len, "unexpected argument '%s' (options start with --)", arg);
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        if (strlen(options[k].name) != nlen || strncmp(options[k].name, name, nlen) != 0)
            continue;
        if (!options[k].has_arg) {
            if (eq != NULL)
                return fail(err, len, "option --%s takes no value (got '%s')",
                            options[k].name, eq + 1);
            return options[k].fn(o, NULL, err, len);
        }
        if (eq != NULL)
            return options[k].fn(o, eq + 1, err, len);
        if (*i + 1 >= argc)
            return fail(err, len, "option --%s needs a value", options[k].name);
        return options[k].fn(o, argv[++*i], err, len);
    }
    return fail(err, len, "unknown option '%.*s' (see --help)", (int)(nlen + 2), arg);
}

/* --sweep: --algs rules --dist equal --sizes 0..1m, each unless given. */
/* Calls of a --timing b2b turn when --burst is not given. */
enum { B2B_BURST = 10 };

static int sweep_preset(bench_options *o, char *err, size_t len)
{
    if (strcmp(o->coll, "alltoallv") != 0 && strcmp(o->coll, "alltoall") != 0)
        return fail(err, len, "--sweep: for --coll alltoallv and alltoall only (the "
                    "collectives IMB and OSU measure), not %s", o->coll);
    if (!o->algs_given)
        o->algs = "rules";
    if (!o->dist_given)
        o->dist = BENCH_DIST_EQUAL;
    if (!o->iters_given)
        o->iters = SWEEP_ITERS;
    if (!o->sizes_given)
        return bench_parse_sizes(SWEEP_SIZES, o->sizes, BENCH_MAX_SIZES, &o->nsizes, err, len);
    return 0;
}

int bench_options_parse(int argc, char **argv, bench_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->coll = "alltoallv";
    o->algs = "all";
    o->dist = BENCH_DIST_UNIFORM;
    o->iters = 20;
    o->warmup = 3;
    o->burst = 1;
    o->seed = 1;
    o->pattern_off = -1;
    o->progress = 1;
    if (bench_parse_sizes(DEFAULT_SIZES, o->sizes, BENCH_MAX_SIZES, &o->nsizes, err,
                          errlen) != 0)
        return -1;
    for (int i = 1; i < argc; i++)
        if (parse_one(argc, argv, &i, o, err, errlen) != 0)
            return -1;
    if (o->b2b && !o->burst_given)
        o->burst = B2B_BURST;
    if (o->overlap && (o->b2b || o->sweep))
        return fail(err, errlen, "--overlap: times calls after a barrier, one per line of the "
                    "table (not with --timing b2b or --sweep)");
    return o->sweep ? sweep_preset(o, err, errlen) : 0;
}

void bench_options_usage(const char *prog)
{
    printf(
        "Usage: mpirun -np P %s [options]\n"
        "\n"
        "Measures one collective under a list of coltune algorithm specs in the same run,\n"
        "native MPI (pmpi) included. The specs are interleaved within every iteration, in\n"
        "an order drawn afresh from --seed each iteration, so that machine drift hits all\n"
        "alike and no spec always follows the same one; each call starts after a barrier\n"
        "and counts the time of the slowest rank.\n"
        "\n"
        "Options:\n"
        "  --coll NAME        alltoallv | alltoall | ialltoallv | ialltoall |\n"
        "                     allgather_inter | allgatherv_inter | iallgather_inter |\n"
        "                     iallgatherv_inter | alltoall_crs | alltoallv_crs |\n"
        "                     neighbor_alltoallv | neighbor_alltoall |\n"
        "                     ineighbor_alltoallv | ineighbor_alltoall\n"
        "                     (default alltoallv; the i... forms time the nonblocking\n"
        "                     call and its MPI_Wait)\n"
        "  --algs LIST        comma-separated algorithm specs (default all):\n"
        "                       name[:key=VALUES[,key=VALUES]]  e.g. scattered:block_count=8\n"
        "                       all     every registered algorithm at its default parameters\n"
"                       rules   the call as coltune decides it from COLTUNE_RULES and\n"
"                               the environment (what an intercepted call would run)\n"
        "                     pmpi is added when missing: it is the reference for speedup.\n"
        "  --aa               time the baseline (pmpi) twice: a second copy, shown as\n"
        "                     pmpi#2, runs in the middle of the list like any spec. The\n"
        "                     two are the same call, so their ratio (an A/A comparison)\n"
        "                     shows the noise of the measurement itself\n"
        "                     VALUES is a comma list of values and sweeps:\n"
        "                       v       an integer (k/m/g suffix allowed) or P, Q, N, sqrt\n"
        "                               (round(sqrt(P))), sqrtQ, (N-1)*Q, each with an optional\n"
        "                               +k or -k: P-1, sqrt+1\n"
        "                       a..b    doubling: a, 2a, 4a, ... while below b, then b itself\n"
        "                       a...b   every integer from a to b\n"
        "                     P is the communicator size, Q ranks per node, N nodes (from\n"
        "                     --ppn, else the shared-memory nodes). A value outside the\n"
        "                     algorithm's range at this P is dropped with a note.\n"
        "  --sizes LIST       sizes S in bytes, k/m/g suffixes; a..b doubles from a to b,\n"
        "                     0..b is 0, 1, 2, 4, ... b (default " DEFAULT_SIZES ");\n"
        "                     S bounds a block (alltoallv),\n"
        "                     a sender's block (allgather(v)_inter), a message (SDDE)\n"
        "  --dist NAME        block sizes for S ([Fan2024] V, VI-A, VI-C; default uniform):\n"
        "                       uniform   each block uniform in [0, S] bytes\n"
        "                       normal    normal, mean S*1000/1024, stddev S*240/1024 (Fig. 16\n"
        "                                 at S=1024), redrawn until within [0, S]\n"
        "                       powerlaw  floor(S * 0.95^k), k uniform in [0, P): a few large\n"
        "                                 blocks, most small or empty\n"
        "                       fft-n1    ranks below ceil(0.625 P) send S bytes to each of\n"
        "                                 the first ceil(0.78125 P) ranks, others send nothing\n"
        "                                 (S=64 is the paper's N1: 8 FP64 per block)\n"
        "                       fft-n2    every rank sends S bytes per block, the last rank\n"
        "                                 S/4 (S=512 is the paper's N2: 64 and 16 FP64)\n"
        "                       equal     every block S bytes, as IMB and OSU send\n"
        "  --seed N           seed of the block sizes, SDDE patterns and the order of the\n"
        "                     specs in each iteration (default 1); every\n"
        "                     rank derives the whole count matrix (its own messages) from\n"
        "                     it, so runs are reproducible\n"
        "  --iters N          timed iterations per spec and size (default 20)\n"
        "  --warmup N         untimed iterations first (default 3)\n"
        "  --burst N          each spec's turn in an iteration is N calls in a row, each\n"
        "                     after a barrier, of which the last is timed (default 1). The\n"
        "                     untimed ones leave the spec's own state (a shared window,\n"
        "                     the MPI library's buffers) warm, as in an application that\n"
        "                     calls it again and again, not cold from the specs before it\n"
        "  --timing MODE      barrier (default): each timed call starts after a barrier, as\n"
        "                     OSU times; b2b: a turn's --burst calls (default 10) run back\n"
        "                     to back after one barrier and their mean is the time, as\n"
        "                     IMB times (a call may start while others still finish the\n"
        "                     last one)\n"
        "  --overlap          the nonblocking collectives: after the table, each spec's\n"
        "                     overlap, as OSU measures it: every call started, then a\n"
        "                     computation (no MPI call) as long as the spec's median time,\n"
        "                     then MPI_Wait; overlap = 1 - (total - compute) / time, in %%\n"
        "                     (100: the exchange hid behind the computation)\n"
        "  --persistent       ialltoallv, ialltoall, ineighbor_alltoallv,\n"
        "                     ineighbor_alltoall: each spec's persistent request\n"
        "                     (coltune_alltoallv_init, ...), made once per size, then\n"
        "                     MPI_Start and MPI_Wait per call; pmpi is the library's own\n"
        "                     persistent call (MPI_Alltoallv_init; Open MPI 4.1: MPIX_)\n"
        "  --ppn N[:cyclic]   emulate nodes of N ranks: sets COLTUNE_PPN for coltune's\n"
        "                     topology (consecutive ranks, or dealt round-robin with :cyclic)\n"
        "  --group-sizes p:q  allgather_inter, allgatherv_inter: the intercommunicator's\n"
        "                     groups, A = world ranks [0, p), B = [p, p+q); p+q must be the\n"
        "                     world size (default P/2 : P-P/2). Built once per size.\n"
        "  --setting N        allgather_inter (1-4, default 1), allgatherv_inter (1-8,\n"
        "                     default 5): the block sizes of [Kang2019] section 5. S is\n"
        "                     the block of the largest sender, m = max(p, q):\n"
        "                       1, 2, 5, 7  every rank sends S bytes (the paper runs 1 and\n"
        "                                   5 at p = q, 2 and 7 at p:q = 25:7)\n"
        "                       3           group A sends S, group B S/4 (p:q = 25:7)\n"
        "                       4           group A sends S/4, group B S (p:q = 25:7)\n"
        "                       6, 8        arithmetic sequence: rank i of either group\n"
        "                                   sends floor(S (i+1) / m) (6: p = q; 8: 25:7)\n"
        "                     (the factor 4 of settings 3 and 4 is the one for which the\n"
        "                     paper's predicted improvements 4.21 and 6.68 hold)\n"
        "  --pattern PAT      alltoall_crs, alltoallv_crs, neighbor_alltoall(v): who sends\n"
        "                     to whom, the distributed graph of the neighbour ones (default\n"
        "                     random:3); every rank derives its own messages from --seed:\n"
        "                       random:k   k distinct destinations other than itself\n"
        "                                  (at most P-1), uniform\n"
        "                       random:k:f the same with f%% of them (rounded) on other\n"
        "                                  nodes, the rest on the rank's own (drawn\n"
        "                                  uniformly in each; where one side has too\n"
        "                                  few ranks, the other makes up the k)\n"
        "                       stencil2d  halo exchange on a px x py process grid (ranks\n"
        "                                  row-major, px >= py, as square as P allows):\n"
        "                                  one message to each of the up to 8 neighbours\n"
        "                                  (9-point stencil, not periodic)\n"
        "                       stencil3d  the same on a px x py x pz grid, up to 26\n"
        "                                  neighbours (27-point stencil)\n"
        "                     Message sizes: alltoall_crs S/4 ints (at least 1) each;\n"
        "                     alltoallv_crs 1..S/4 ints drawn uniformly per message;\n"
        "                     neighbor_alltoall S bytes per neighbour, neighbor_alltoallv\n"
        "                     1..S bytes drawn per edge.\n"
        "  --check            before timing, compare every spec's result byte for byte with\n"
        "                     the PMPI_ result on the same input\n"
        "  --csv FILE         also write one row per (collective, algorithm, parameters, P,\n"
        "                     nodes, size, distribution)\n"
        "  --samples FILE     also write every timed iteration: one row per (spec, size,\n"
        "                     iteration) with the slowest rank's time; 'slot' is the\n"
        "                     spec's place in the list, so a spec listed twice (an A/A\n"
        "                     pair: --algs pmpi,...,pmpi,...) has two distinct slots, and\n"
        "                     rows of one iteration ran side by side (coltune-tune pairs\n"
        "                     them)\n"
        "  --sweep            alltoall, alltoallv: native MPI against the call as coltune\n"
        "                     decides it, as IMB and OSU measure it: --algs rules --dist\n"
        "                     equal --sizes " SWEEP_SIZES " --iters 100, each unless given\n"
        "                     (then fewer iterations above 64k: 100*64k/S, at least 10).\n"
        "                     One line per size: medians, ratio native/coltune, and the\n"
        "                     algorithm the rules choose; a closing summary line\n"
        "  --list             list the collective's algorithms with their ranges and exit\n"
        "  --no-progress      no progress line on stderr (shown by rank 0 for runs longer\n"
        "                     than a few seconds; plain lines when stderr is not a terminal)\n"
        "  -h, --help         this text\n"
        "\n"
        "Output: a table on stdout, one row per spec and size, with the median, min and max\n"
        "over iterations in microseconds and speedup = median(pmpi) / median(spec) (> 1 is\n"
        "faster than native MPI; for alltoall_crs and alltoallv_crs, which have no native\n"
        "call, over personalized, Alg. 1 of [Geyko2023]), then a 'best' line per size. For\n"
        "the SDDE collectives, 'internode' (CSV internode_msgs) is the most messages\n"
        "carrying data that any rank sent to other nodes in one timed call (the red dots\n"
        "of [Geyko2023]; nodes as --ppn says); '-' (empty) for the other collectives.\n"
        "\n"
        "coltune-bench sets COLTUNE_FALLBACK=error unless it is already set, so a spec that\n"
        "cannot serve a call is reported and skipped rather than timed as pmpi.\n"
        "\n"
        "Exit status: 0 success, 1 --check found a mismatch, 2 usage error or collective\n"
        "not available in this build, 3 MPI or memory error.\n"
        "\n"
        "Examples:\n"
        "  mpirun -np 8 %s --algs all --sizes 16,4k --check\n"
        "  mpirun -np 64 %s --algs \"pmpi,scattered:block_count=1,2,4..P\" --dist normal\n"
        "  mpirun -np 64 %s --ppn 8 --algs \"pmpi,multipair_waitany:stride=2..P\" \\\n"
        "         --sizes 16..64k --iters 50 --csv a2av.csv\n"
        "  mpirun -np 13 %s --coll allgatherv_inter --group-sizes 10:3 --setting 8 \\\n"
        "         --algs pmpi,segmented --sizes 64k..4m\n"
        "  mpirun -np 32 %s --coll alltoall_crs --ppn 8 --pattern stencil2d --sizes 4\n",
        prog, prog, prog, prog, prog, prog);
}
