/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_allgather_inter.c - intercommunicator MPI_Allgather and
 * MPI_Allgatherv: every registered algorithm (but pmpi), through the direct
 * API and through the intercepted MPI_ calls, checked byte for byte against
 * PMPI_Allgather / PMPI_Allgatherv on the same inputs.
 *
 * The intercommunicators are built with MPI_Comm_split + MPI_Intercomm_create
 * from MPI_COMM_WORLD: group 0 holds world ranks [0, p), group 1 [p, p+q),
 * for each (p, q) of the list below with p + q equal to the world size (run
 * at 8, 9 and 13 ranks; the MPICH smoke run at 4, the AddressSanitizer run
 * at 4 and 7). Cases: block counts 0, 1, 7, 1000 and 250000 elements,
 * equal or different in the two groups; MPI_INT, a strided vector and
 * send/receive types that differ but match in signature; for Allgatherv
 * the count patterns of settings 5-8 of [Kang2019] (equal, arithmetic
 * sequence) plus random and zero-heavy counts, with receive displacements
 * back to back (the in-place path) or shuffled with gaps. Receive buffers
 * are pre-filled with the same random bytes for the reference and the
 * algorithm, so a stray write shows as a difference. shm's rounds across
 * calls are checked by back-to-back calls (test_shm_back_to_back).
 *
 * Run by tests/mpi/allgather_inter.sh. Environment:
 *   TEST_SEED      base seed (printed at start; every failure names it)
 *   TEST_ALGS      comma-separated algorithm names (default: all but pmpi)
 *   TEST_QUICK=1   no 250000-element blocks (the valgrind run)
 *   TEST_SPLITS=1  the direct API on the first group split alone (the
 *                  intercepted calls still run every split): the smoke
 *                  runs under MPICH and AddressSanitizer
 *   COLTUNE_ALLGATHER_INTER / COLTUNE_ALLGATHERV_INTER  what the intercepted
 *                  calls are checked with (the tests skip when unset)
 *   COLTUNE_FALLBACK=error  an algorithm that cannot serve a case returns an
 *                  error, which fails the test: these algorithms serve all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coltune.h"
#include "harness.h"

/* ------------------------------------------------------------------ */
/* Intercommunicators                                                  */
/* ------------------------------------------------------------------ */

static const int group_sizes[][2] = {{1, 7}, {2, 6}, {3, 5}, {4, 4}, {6, 3}, {7, 2}, {4, 9},
                                     /* small worlds, for the MPICH and ASan runs */
                                     {1, 3}, {2, 2}, {3, 1}, {2, 5}, {5, 2}};
#define NCONFIGS ((int)(sizeof group_sizes / sizeof group_sizes[0]))

typedef struct inter {
    MPI_Comm comm;
    int p, q;   /* sizes of group 0 and group 1 */
    int group;  /* this rank's group */
    int lrank;  /* its rank in the group */
    int n[2];   /* {p, q} */
} inter;

static void inter_create(int p, int q, inter *ic)
{
    const int me = th_rank();
    MPI_Comm local;
    ic->p = p;
    ic->q = q;
    ic->n[0] = p;
    ic->n[1] = q;
    ic->group = me < p ? 0 : 1;
    assert_int_equal(MPI_Comm_split(MPI_COMM_WORLD, ic->group, me, &local), MPI_SUCCESS);
    MPI_Comm_rank(local, &ic->lrank);
    assert_int_equal(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, ic->group ? 0 : p, 4242,
                                          &ic->comm),
                     MPI_SUCCESS);
    MPI_Comm_set_errhandler(ic->comm, MPI_ERRORS_RETURN);
    MPI_Comm_free(&local);
}

/* ------------------------------------------------------------------ */
/* Datatype cases                                                      */
/* ------------------------------------------------------------------ */

/* A block of c units is c * send_mult elements of send, c * recv_mult of recv. */
typedef struct type_case {
    const char *name;
    MPI_Datatype send, recv;
    int send_mult, recv_mult;
} type_case;

enum { NTYPES = 4 };
static type_case types[NTYPES];
static MPI_Datatype vec;

static void types_create(void)
{
    /* two ints out of every three: 8 bytes of data in a 16-byte extent */
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    types[0] = (type_case){"MPI_INT", MPI_INT, MPI_INT, 1, 1};
    types[1] = (type_case){"vector(2,1,3,int)", vec, vec, 1, 1};
    types[2] = (type_case){"int->vector", MPI_INT, vec, 2, 1};
    types[3] = (type_case){"vector->int", vec, MPI_INT, 1, 2};
}

/* ------------------------------------------------------------------ */
/* Cases                                                               */
/* ------------------------------------------------------------------ */

enum { PAT_EQUAL, PAT_ARITH, PAT_RANDOM, PAT_ZERO_HEAVY, NPATTERNS };
static const char *const pattern_names[NPATTERNS] = {"equal", "arithmetic", "random",
                                                     "zero-heavy"};

typedef struct ag_case {
    int v;              /* Allgatherv */
    const char *spec;   /* NULL: the intercepted MPI_ call */
    const type_case *type;
    long base[2];       /* block size (units) of each group; per rank for Allgatherv */
    int pattern;        /* Allgatherv counts */
    int shuffled;       /* Allgatherv: shuffled receive displacements with gaps */
    uint64_t stream;
    int large;          /* through the MPI-4 large-count forms (_c) */
    int form;           /* FORM_BLOCKING, FORM_NONBLOCKING or FORM_PERSISTENT */
} ag_case;

/* The forms of the call: MPI_Allgather(v); MPI_Iallgather(v) then MPI_Wait;
 * MPI_Allgather(v)_init (or Open MPI's MPIX_) started twice, then freed. */
enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT };
static const char *const form_names[] = {"", " nonblocking", " persistent"};

#if defined(CT_HAVE_PCOLL_MPIX)
#include <mpi-ext.h>
#define ALLGATHER_INIT MPIX_Allgather_init
#define ALLGATHERV_INIT MPIX_Allgatherv_init
#elif defined(CT_HAVE_PCOLL_MPI4)
#define ALLGATHER_INIT MPI_Allgather_init
#define ALLGATHERV_INIT MPI_Allgatherv_init
#endif

/* Units rank i of group g sends: every rank computes every rank's count. */
static long units(const ag_case *c, const inter *ic, int g, int i)
{
    long b = c->base[g];
    int n = ic->n[g];
    th_rng r = th_rng_make(th_seed(), c->stream * 7919u + (uint64_t)g * 1000u + (uint64_t)i);
    if (!c->v)
        return b;
    switch (c->pattern) {
    case PAT_ARITH: /* 0, ..., 2b: paper settings 6 and 8 */
        return n > 1 ? 2 * b * i / (n - 1) : b;
    case PAT_RANDOM:
        return th_below(&r, 2 * b + 1);
    case PAT_ZERO_HEAVY:
        return b > 0 && th_below(&r, 4) == 0 ? 1 + th_below(&r, 4 * b) : 0;
    default:
        return b; /* settings 5 and 7 */
    }
}

static void fill_random(th_rng *r, unsigned char *buf, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = th_next(r);
        memcpy(buf + i, &x, 8);
    }
    for (; i < n; i++)
        buf[i] = (unsigned char)th_next(r);
}

/* Completes a nonblocking call's request; starts a persistent one twice
 * (the second start must give the same result) and frees it. The request
 * must be MPI_REQUEST_NULL after a wait, and stay allocated (inactive) after
 * a persistent one's. */
static int complete(int rc, MPI_Request *req, int persistent)
{
    for (int start = 0; rc == MPI_SUCCESS && start < (persistent ? 2 : 1); start++) {
        if (persistent)
            rc = MPI_Start(req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(req, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && (*req == MPI_REQUEST_NULL) == persistent)
            rc = MPI_ERR_REQUEST;
    }
    if (persistent && *req != MPI_REQUEST_NULL) {
        const int rc2 = MPI_Request_free(req);
        rc = rc == MPI_SUCCESS ? rc2 : rc;
    }
    return rc;
}

#if MPI_VERSION >= 4
/* The call through MPI_Allgather(v)_c or coltune_allgather(v)_inter_c, the
 * counts and displacements widened to MPI_Count and MPI_Aint. */
static int call_coll_c(const ag_case *c, const inter *ic, const void *sb, int scount, void *rb,
                       int rcount, const int *rcounts, const int *displs)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    const int n = ic->n[1 - ic->group];
    MPI_Count *wc = malloc((size_t)n * sizeof *wc);
    MPI_Aint *wd = malloc((size_t)n * sizeof *wd);
    assert_true(wc && wd);
    for (int j = 0; j < n; j++) {
        wc[j] = rcounts[j];
        wd[j] = displs[j];
    }
    int rc;
    MPI_Request req = MPI_REQUEST_NULL;
    if (c->form == FORM_NONBLOCKING) /* the intercepted MPI_Iallgather(v)_c */
        rc = complete(c->v ? MPI_Iallgatherv_c(sb, scount, st, rb, wc, wd, rt, ic->comm, &req)
                           : MPI_Iallgather_c(sb, scount, st, rb, rcount, rt, ic->comm, &req),
                      &req, 0);
    else if (c->v)
        rc = c->spec ? coltune_allgatherv_inter_c(c->spec, sb, scount, st, rb, wc, wd, rt,
                                                  ic->comm)
                     : MPI_Allgatherv_c(sb, scount, st, rb, wc, wd, rt, ic->comm);
    else
        rc = c->spec ? coltune_allgather_inter_c(c->spec, sb, scount, st, rb, rcount, rt,
                                                 ic->comm)
                     : MPI_Allgather_c(sb, scount, st, rb, rcount, rt, ic->comm);
    free(wc);
    free(wd);
    return rc;
}
#endif

/* The nonblocking and persistent forms (never the reference). */
static int call_split(const ag_case *c, const inter *ic, const void *sb, int scount, void *rb,
                      int rcount, const int *rcounts, const int *displs)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    if (c->form == FORM_PERSISTENT) {
#ifdef ALLGATHER_INIT
        rc = c->v ? ALLGATHERV_INIT(sb, scount, st, rb, rcounts, displs, rt, ic->comm,
                                    MPI_INFO_NULL, &req)
                  : ALLGATHER_INIT(sb, scount, st, rb, rcount, rt, ic->comm, MPI_INFO_NULL,
                                   &req);
        return complete(rc, &req, 1);
#else
        return MPI_ERR_OTHER; /* not reached: the tests skip the form */
#endif
    }
    if (c->v)
        rc = c->spec ? coltune_iallgatherv_inter(c->spec, sb, scount, st, rb, rcounts, displs,
                                                 rt, ic->comm, &req)
                     : MPI_Iallgatherv(sb, scount, st, rb, rcounts, displs, rt, ic->comm, &req);
    else
        rc = c->spec ? coltune_iallgather_inter(c->spec, sb, scount, st, rb, rcount, rt,
                                                ic->comm, &req)
                     : MPI_Iallgather(sb, scount, st, rb, rcount, rt, ic->comm, &req);
    return complete(rc, &req, 0);
}

static int call_coll(const ag_case *c, const inter *ic, const void *sb, int scount, void *rb,
                     int rcount, const int *rcounts, const int *displs, int ref)
{
    MPI_Datatype st = c->type->send, rt = c->type->recv;
#if MPI_VERSION >= 4
    if (c->large && !ref)
        return call_coll_c(c, ic, sb, scount, rb, rcount, rcounts, displs);
#endif
    if (c->form != FORM_BLOCKING && !ref)
        return call_split(c, ic, sb, scount, rb, rcount, rcounts, displs);
    if (ref && c->v)
        return PMPI_Allgatherv(sb, scount, st, rb, rcounts, displs, rt, ic->comm);
    if (ref)
        return PMPI_Allgather(sb, scount, st, rb, rcount, rt, ic->comm);
    if (c->v && c->spec)
        return coltune_allgatherv_inter(c->spec, sb, scount, st, rb, rcounts, displs, rt,
                                        ic->comm);
    if (c->v)
        return MPI_Allgatherv(sb, scount, st, rb, rcounts, displs, rt, ic->comm);
    if (c->spec)
        return coltune_allgather_inter(c->spec, sb, scount, st, rb, rcount, rt, ic->comm);
    return MPI_Allgather(sb, scount, st, rb, rcount, rt, ic->comm);
}

/* Runs one case on every rank; returns 1 when every rank got the reference. */
static int run_case(const ag_case *c, const inter *ic)
{
    const int g = ic->group, other = 1 - g, nremote = ic->n[other];
    int *rcounts = malloc((size_t)nremote * sizeof(int));
    int *displs = malloc((size_t)nremote * sizeof(int));
    assert_true(rcounts && displs);
    int scount = (int)(units(c, ic, g, ic->lrank) * c->type->send_mult);
    long total = 0;
    for (int j = 0; j < nremote; j++) {
        rcounts[j] = (int)(units(c, ic, other, j) * c->type->recv_mult);
        total += rcounts[j];
    }
    th_rng lay = th_rng_make(th_seed(), c->stream * 1000003u + 500u + (uint64_t)th_rank());
    long span = c->v ? th_layout(&lay, nremote, rcounts, displs, c->shuffled) : total;
    size_t sbytes = th_span_bytes(scount, c->type->send);
    size_t rbytes = th_span_bytes(span, c->type->recv);
    unsigned char *sb = malloc(sbytes), *sb_copy = malloc(sbytes);
    unsigned char *got = malloc(rbytes), *want = malloc(rbytes);
    assert_true(sb && sb_copy && got && want);
    th_rng mine = th_rng_make(th_seed(), c->stream * 1000003u + (uint64_t)th_rank());
    fill_random(&mine, sb, sbytes);
    memcpy(sb_copy, sb, sbytes);
    fill_random(&mine, got, rbytes);
    memcpy(want, got, rbytes);
    int rcount = rcounts[0];

    int rc_ref = call_coll(c, ic, sb, scount, want, rcount, rcounts, displs, 1);
    int rc = call_coll(c, ic, sb, scount, got, rcount, rcounts, displs, 0);

    char what[512];
    snprintf(what, sizeof what,
             "%s%s%s %s p=%d q=%d (group %d rank %d) units %ld/%ld%s%s%s type %s case %llu "
             "seed %llu",
             c->v ? "allgatherv" : "allgather", c->large ? "_c" : "", form_names[c->form],
             c->spec ? c->spec : "(intercepted)", ic->p,
             ic->q, g, ic->lrank, c->base[0], c->base[1], c->v ? " pattern " : "",
             c->v ? pattern_names[c->pattern] : "",
             c->v ? (c->shuffled ? " shuffled displs" : " packed displs") : "", c->type->name,
             (unsigned long long)c->stream, (unsigned long long)th_seed());
    if (!th_all(rc_ref == MPI_SUCCESS, MPI_COMM_WORLD))
        fail_msg("the PMPI_ reference failed: %s", what);
    int ok = rc == MPI_SUCCESS;
    if (!ok)
        fprintf(stderr, "FAILED rank %d: %s: returned error %d (restricted?)\n", th_rank(), what,
                rc);
    if (!th_all(ok, MPI_COMM_WORLD)) {
        ok = 0;
    } else {
        ok = th_same_bytes(got, want, rbytes, what);
        char what2[600];
        snprintf(what2, sizeof what2, "%s: send buffer modified", what);
        ok = th_same_bytes(sb, sb_copy, sbytes, what2) && ok;
        ok = th_all(ok, MPI_COMM_WORLD);
    }
    free(rcounts);
    free(displs);
    free(sb);
    free(sb_copy);
    free(got);
    free(want);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Sweeps                                                              */
/* ------------------------------------------------------------------ */

static const long base_counts[] = {0, 1, 7, 1000, 250000};
#define NCOUNTS ((int)(sizeof base_counts / sizeof base_counts[0]))

static int quick(void)
{
    const char *q = getenv("TEST_QUICK");
    return q != NULL && strcmp(q, "1") == 0;
}

/* Every case of one collective for one spec on one intercommunicator; the
 * number of failures. Group 1's blocks are the same size as group 0's, or
 * the next size of the list (the last wraps to 0: one group sends nothing). */
static int sweep(int v, const char *spec, const inter *ic, uint64_t *stream, int *ncases,
                 int large, int form)
{
    int failures = 0;
    /* The nonblocking forms' schedules are the blocking direct's: their
     * large blocks are checked there. */
    const int small = quick() || form != FORM_BLOCKING;
    for (int k = 0; k < NCOUNTS; k++) {
        if (small && base_counts[k] > 1000)
            continue;
        for (int mix = 0; mix < 2; mix++) {
            long b1 = base_counts[mix ? (k + 1) % NCOUNTS : k];
            if (small && b1 > 1000)
                continue;
            for (int t = 0; t < NTYPES; t++) {
                /* The mixed send/receive types only at moderate sizes. */
                if (t >= 2 && (base_counts[k] > 1000 || b1 > 1000))
                    continue;
                int npat = v ? NPATTERNS : 1;
                for (int pat = 0; pat < npat; pat++) {
                    /* The nonblocking Allgatherv: the irregular patterns only. */
                    if (v && form != FORM_BLOCKING && (pat == PAT_EQUAL || pat == PAT_ARITH))
                        continue;
                    /* Blocks of many segments: the uneven patterns only
                     * (equal counts are the Allgather's case). */
                    if (v && (base_counts[k] > 1000 || b1 > 1000) &&
                        (pat == PAT_EQUAL || pat == PAT_RANDOM))
                        continue;
                    for (int sh = v ? 0 : 1; sh <= 1; sh++) {
                        /* Back-to-back displacements: the contiguous in-place path. */
                        if (v && !sh && t != 0)
                            continue;
                        ag_case c = {v,  spec, &types[t], {base_counts[k], b1}, pat, sh,
                                     (*stream)++, large, form};
                        failures += !run_case(&c, ic);
                        (*ncases)++;
                    }
                }
            }
        }
    }
    return failures;
}

/* The configurations that fit the world size. */
static int configs(inter *out)
{
    int n = 0;
    for (int i = 0; i < NCONFIGS; i++)
        if (group_sizes[i][0] + group_sizes[i][1] == th_size())
            inter_create(group_sizes[i][0], group_sizes[i][1], &out[n++]);
    return n;
}

/* How many of the nic configurations a form runs: the large-count forms
 * (_c) differ from the others only in how the shim reads the counts, not in
 * the algorithms, so they run on the first group split alone. */
static int large_configs(int nic, int large)
{
    return large && nic > 1 ? 1 : nic;
}

/* How many configurations the direct API runs: all, or the first alone
 * under TEST_SPLITS=1. */
static int api_configs(int nic, int large)
{
    const char *s = getenv("TEST_SPLITS");
    return s != NULL && strcmp(s, "1") == 0 && nic > 1 ? 1 : large_configs(nic, large);
}

static void free_configs(inter *ics, int n)
{
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&ics[i].comm);
}

/* Under MPICH, whose progress engine does not call coltune's, the
 * algorithms of several rounds do not serve the nonblocking forms
 * (restriction progress, coltune(7)): segmented. */
static int refused_here(const char *spec, int form)
{
#ifdef MPICH_VERSION
    return form != FORM_BLOCKING && strncmp(spec, "segmented", 9) == 0;
#else
    (void)spec;
    (void)form;
    return 0;
#endif
}

/* Every registered algorithm but pmpi through the direct API (large: its
 * large-count form; form: the nonblocking one, whose algorithms are those
 * that split). */
static void every_algorithm(int v, int large, int form)
{
    const char *coll = form != FORM_BLOCKING ? (v ? "iallgatherv_inter" : "iallgather_inter")
                                             : (v ? "allgatherv_inter" : "allgather_inter");
    inter ics[NCONFIGS];
    int nic = configs(ics), failures = 0, ncases = 0;
    if (nic == 0) {
        skip(); /* no group sizes for this world size */
    }
    char **specs;
    int nspecs = th_algorithm_specs(coll, th_size(), th_size(), 1, &specs);
    uint64_t stream = v ? 1000000 : 1;
    for (int s = 0; s < nspecs; s++) {
        if (strcmp(specs[s], "pmpi") == 0 || refused_here(specs[s], form))
            continue;
        for (int i = 0; i < api_configs(nic, large); i++) {
            int before = ncases;
            failures += sweep(v, specs[s], &ics[i], &stream, &ncases, large, form);
            if (th_rank() == 0)
                printf("# %s%s %s p=%d q=%d: %d cases\n", coll, large ? " (_c)" : "", specs[s],
                       ics[i].p, ics[i].q, ncases - before);
        }
    }
    th_specs_free(specs, nspecs);
    free_configs(ics, nic);
    assert_int_equal(failures, 0);
    assert_true(ncases > 0);
}

/* The intercepted MPI_ call under what the script set in the environment
 * (form: the nonblocking or persistent one, under COLTUNE_IALLGATHER(V)_INTER). */
static void intercepted(int v, int large, int form)
{
    const char *var = form != FORM_BLOCKING
                          ? (v ? "COLTUNE_IALLGATHERV_INTER" : "COLTUNE_IALLGATHER_INTER")
                          : (v ? "COLTUNE_ALLGATHERV_INTER" : "COLTUNE_ALLGATHER_INTER");
    inter ics[NCONFIGS];
    if (getenv(var) == NULL && getenv("TEST_RULES_PATH") == NULL) {
        if (th_rank() == 0)
            printf("# %s unset: intercepted %s not checked\n", var,
                   v ? "MPI_Allgatherv" : "MPI_Allgather");
        skip();
    }
    int nic = configs(ics), failures = 0, ncases = 0;
    if (nic == 0) {
        skip();
    }
    uint64_t stream = v ? 3000000 : 2000000;
    for (int i = 0; i < large_configs(nic, large); i++)
        failures += sweep(v, NULL, &ics[i], &stream, &ncases, large, form);
    if (th_rank() == 0)
        printf("# intercepted %s%s%s: %d cases\n", v ? "MPI_Allgatherv" : "MPI_Allgather",
               large ? "_c" : "", form_names[form], ncases);
    free_configs(ics, nic);
    assert_int_equal(failures, 0);
    assert_true(ncases > 0);
}

static void test_allgather_api(void **state)
{
    (void)state;
    every_algorithm(0, 0, FORM_BLOCKING);
}

static void test_allgatherv_api(void **state)
{
    (void)state;
    every_algorithm(1, 0, FORM_BLOCKING);
}

static void test_allgather_intercepted(void **state)
{
    (void)state;
    intercepted(0, 0, FORM_BLOCKING);
}

static void test_allgatherv_intercepted(void **state)
{
    (void)state;
    intercepted(1, 0, FORM_BLOCKING);
}

/* The nonblocking forms: every algorithm that splits through
 * coltune_iallgather(v)_inter, and the intercepted MPI_Iallgather(v) and
 * persistent MPI_Allgather(v)_init, each against PMPI_Allgather(v). */
static void test_iallgather_api(void **state)
{
    (void)state;
    every_algorithm(0, 0, FORM_NONBLOCKING);
    every_algorithm(1, 0, FORM_NONBLOCKING);
}

static void test_iallgather_intercepted(void **state)
{
    (void)state;
    intercepted(0, 0, FORM_NONBLOCKING);
    intercepted(1, 0, FORM_NONBLOCKING);
}

static void test_iallgather_init_intercepted(void **state)
{
    (void)state;
#ifdef ALLGATHER_INIT
    intercepted(0, 0, FORM_PERSISTENT);
    intercepted(1, 0, FORM_PERSISTENT);
#else
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#endif
}

/* The MPI-4 large-count entry points, where the library has them: every
 * algorithm through coltune_allgather(v)_inter_c, and the intercepted
 * MPI_Allgather(v)_c and MPI_Iallgather(v)_c, against PMPI_Allgather(v) on
 * the same inputs. */
static void test_large_count(void **state)
{
    (void)state;
#if MPI_VERSION >= 4
    every_algorithm(0, 1, FORM_BLOCKING);
    every_algorithm(1, 1, FORM_BLOCKING);
    if (getenv("COLTUNE_ALLGATHER_INTER") != NULL)
        intercepted(0, 1, FORM_BLOCKING);
    if (getenv("COLTUNE_ALLGATHERV_INTER") != NULL)
        intercepted(1, 1, FORM_BLOCKING);
    if (getenv("COLTUNE_IALLGATHER_INTER") != NULL)
        intercepted(0, 1, FORM_NONBLOCKING);
    if (getenv("COLTUNE_IALLGATHERV_INTER") != NULL)
        intercepted(1, 1, FORM_NONBLOCKING);
#else
    th_skip("the MPI library has no MPI-4 large-count routines");
#endif
}

/* The direct API's argument checks: an intra-communicator and a spec that
 * does not parse are errors (the communicator's handler returns them). */
static void test_api_errors(void **state)
{
    (void)state;
    int x = 0, y[64] = {0}, counts[64] = {0}, displs[64] = {0};
    assert_int_equal(coltune_allgather_inter("segmented", &x, 1, MPI_INT, y, 1, MPI_INT,
                                             MPI_COMM_WORLD),
                     MPI_ERR_COMM);
    assert_int_equal(coltune_allgatherv_inter("segmented", &x, 1, MPI_INT, y, counts, displs,
                                              MPI_INT, MPI_COMM_WORLD),
                     MPI_ERR_COMM);
    inter ics[NCONFIGS];
    int nic = configs(ics);
    if (nic == 0) {
        skip();
    }
    assert_int_equal(coltune_allgather_inter("no_such_algorithm", &x, 1, MPI_INT, y, 1, MPI_INT,
                                             ics[0].comm),
                     MPI_ERR_ARG);
    assert_int_equal(coltune_allgatherv_inter("segmented:radix=2", &x, 1, MPI_INT, y, counts,
                                              displs, MPI_INT, ics[0].comm),
                     MPI_ERR_ARG);
    free_configs(ics, nic);
}

/*
 * MPI_Alltoall and MPI_Alltoallv on an intercommunicator are not coltune's:
 * the shim forwards them, so they must give exactly PMPI_'s result (each rank
 * sends block j to remote rank j), whatever COLTUNE_ALLTOALL(V) forces.
 */
static void test_alltoall_inter_forwarded(void **state)
{
    (void)state;
    inter ics[NCONFIGS];
    int nic = configs(ics), failures = 0;
    if (nic == 0) {
        skip();
    }
    for (int i = 0; i < nic; i++) {
        const int nr = ics[i].n[1 - ics[i].group], me = th_rank();
        int *sb = malloc((size_t)nr * 2 * sizeof(int)), *got = malloc((size_t)nr * 2 * sizeof(int));
        int *want = malloc((size_t)nr * 2 * sizeof(int)), *c = malloc((size_t)nr * sizeof(int));
        int *d = malloc((size_t)nr * sizeof(int));
        assert_true(sb && got && want && c && d);
        for (int j = 0; j < nr; j++) {
            sb[2 * j] = 1000 * me + j;
            sb[2 * j + 1] = -(1000 * me + j);
            c[j] = 2;
            d[j] = 2 * j;
        }
        memset(got, 0xff, (size_t)nr * 2 * sizeof(int));
        memset(want, 0xff, (size_t)nr * 2 * sizeof(int));
        assert_int_equal(PMPI_Alltoall(sb, 2, MPI_INT, want, 2, MPI_INT, ics[i].comm),
                         MPI_SUCCESS);
        assert_int_equal(MPI_Alltoall(sb, 2, MPI_INT, got, 2, MPI_INT, ics[i].comm), MPI_SUCCESS);
        int ok = th_same_bytes(got, want, (size_t)nr * 2 * sizeof(int),
                               "MPI_Alltoall on an intercommunicator");
        memset(got, 0xff, (size_t)nr * 2 * sizeof(int));
        assert_int_equal(MPI_Alltoallv(sb, c, d, MPI_INT, got, c, d, MPI_INT, ics[i].comm),
                         MPI_SUCCESS);
        ok = th_same_bytes(got, want, (size_t)nr * 2 * sizeof(int),
                           "MPI_Alltoallv on an intercommunicator") && ok;
        failures += !th_all(ok, MPI_COMM_WORLD);
        free(sb);
        free(got);
        free(want);
        free(c);
        free(d);
    }
    free_configs(ics, nic);
    assert_int_equal(failures, 0);
}

/*
 * MPI_IN_PLACE has no meaning for Allgather on an intercommunicator (MPI
 * 4.0 section 6.7): the shim and the API hand it to the MPI library as is.
 * Open MPI rejects such a call with an error class; the test checks that
 * the intercepted call and the API (whatever spec it is given) return
 * exactly what PMPI_ returns and write nothing. MPICH 4.0 does not check
 * and the erroneous call never completes, so there is nothing to compare
 * it with there.
 */
static void test_in_place_forwarded(void **state)
{
    (void)state;
#ifndef OMPI_MAJOR_VERSION
    th_skip("Open MPI only: MPICH never completes the erroneous call");
#else
    int y[64], counts[64], displs[64];
    inter ics[NCONFIGS];
    const int nic = configs(ics);
    for (int j = 0; j < 64; j++) {
        counts[j] = 1;
        displs[j] = j;
        y[j] = -7;
    }
    for (int i = 0; i < nic; i++) {
        MPI_Comm c = ics[i].comm;
        const int ref = PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 1, MPI_INT, c);
        const int refv = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, counts, displs,
                                         MPI_INT, c);
        assert_int_not_equal(ref, MPI_SUCCESS);
        assert_int_not_equal(refv, MPI_SUCCESS);
        assert_int_equal(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 1, MPI_INT, c),
                         ref);
        assert_int_equal(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, counts, displs,
                                        MPI_INT, c),
                         refv);
        for (const char *const *spec = (const char *const[]){"segmented", "direct", NULL};
             *spec; spec++) {
            assert_int_equal(coltune_allgather_inter(*spec, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                                                     y, 1, MPI_INT, c),
                             ref);
            assert_int_equal(coltune_allgatherv_inter(*spec, MPI_IN_PLACE, 0,
                                                      MPI_DATATYPE_NULL, y, counts, displs,
                                                      MPI_INT, c),
                             refv);
        }
    }
    for (int j = 0; j < 64; j++)
        assert_int_equal(y[j], -7);
    free_configs(ics, nic);
#endif
}

/* ------------------------------------------------------------------ */
/* shm: rounds across calls                                            */
/* ------------------------------------------------------------------ */

/*
 * shm copies blocks through a window in rounds of 1 MiB and alternates the
 * window's halves across calls (allgather_inter_shm.c). Six calls run back
 * to back on one communicator with nothing in between, then each result is
 * compared with its PMPI_ reference:
 *   0  3 rounds: every third rank sends nothing, the others 2 MiB + 4 B to
 *      2.8 MB (MPI_INT)
 *   1  1 round, one int each
 *   2  1 round in which nothing is sent
 *   3  1 round of exactly 1 MiB each, as an Allgather
 *   4  2 rounds: one rank sends 1 MiB + 4 B, all others nothing
 *   5  2 rounds of the strided vector type (8 bytes of data per 16-byte
 *      element): 1 MiB + 8 B to 2 MiB each, packed and unpacked
 */
enum { B2B_CALLS = 6, B2B_CHUNK_INTS = 262144 };

/* Elements of call k's type that rank i of group g sends. */
static int b2b_units(int k, int g, int i)
{
    th_rng r = th_rng_make(th_seed(), 9000000u + (uint64_t)k * 100000u + (uint64_t)g * 1000u +
                                          (uint64_t)i);
    switch (k) {
    case 0:
        return i % 3 == 0 ? 0 : 2 * B2B_CHUNK_INTS + 1 + (int)th_below(&r, 175712);
    case 1:
        return 1;
    case 2:
        return 0;
    case 3:
        return B2B_CHUNK_INTS;
    case 4:
        return g == 1 && i == 0 ? B2B_CHUNK_INTS + 1 : 0;
    default: /* vector elements of 8 data bytes: 131073 to 262144 */
        return B2B_CHUNK_INTS / 2 + 1 + (int)th_below(&r, B2B_CHUNK_INTS / 2);
    }
}

typedef struct b2b_call {
    MPI_Datatype type;
    int scount, *rcounts, *displs;
    unsigned char *send, *got, *want;
    size_t sbytes, rbytes; /* buffer sizes */
} b2b_call;

static void b2b_prepare(const inter *ic, int k, b2b_call *c)
{
    const int other = 1 - ic->group, nremote = ic->n[other];
    th_rng fill = th_rng_make(th_seed(), 9500000u + (uint64_t)k * 1000u + (uint64_t)th_rank());
    long relems = 0;
    c->type = k == 5 ? vec : MPI_INT;
    c->scount = b2b_units(k, ic->group, ic->lrank);
    c->rcounts = malloc((size_t)nremote * sizeof(int));
    c->displs = malloc((size_t)nremote * sizeof(int));
    assert_true(c->rcounts && c->displs);
    for (int j = 0; j < nremote; j++) {
        c->rcounts[j] = b2b_units(k, other, j);
        c->displs[j] = (int)relems;
        relems += c->rcounts[j];
    }
    c->sbytes = th_span_bytes(c->scount, c->type);
    c->rbytes = th_span_bytes(relems, c->type);
    c->send = malloc(c->sbytes);
    c->got = malloc(c->rbytes);
    c->want = malloc(c->rbytes);
    assert_true(c->send && c->got && c->want);
    fill_random(&fill, c->send, c->sbytes);
    fill_random(&fill, c->got, c->rbytes);
    memcpy(c->want, c->got, c->rbytes);
}

static int b2b_call_one(b2b_call *c, int k, MPI_Comm comm, int ref)
{
    if (k == 3) /* every block the same size: an Allgather */
        return ref ? PMPI_Allgather(c->send, c->scount, c->type, c->want, c->rcounts[0],
                                    c->type, comm)
                   : coltune_allgather_inter("shm", c->send, c->scount, c->type, c->got,
                                             c->rcounts[0], c->type, comm);
    return ref ? PMPI_Allgatherv(c->send, c->scount, c->type, c->want, c->rcounts, c->displs,
                                 c->type, comm)
               : coltune_allgatherv_inter("shm", c->send, c->scount, c->type, c->got,
                                          c->rcounts, c->displs, c->type, comm);
}

static void test_shm_back_to_back(void **state)
{
    (void)state;
    inter ics[NCONFIGS];
    int nic = configs(ics), failures = 0;
    if (nic == 0) {
        skip();
    }
    for (int i = 0; i < nic; i++) {
        b2b_call calls[B2B_CALLS];
        int rc[B2B_CALLS];
        for (int k = 0; k < B2B_CALLS; k++) {
            b2b_prepare(&ics[i], k, &calls[k]);
            assert_int_equal(b2b_call_one(&calls[k], k, ics[i].comm, 1), MPI_SUCCESS);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < B2B_CALLS; k++)
            rc[k] = b2b_call_one(&calls[k], k, ics[i].comm, 0);
        for (int k = 0; k < B2B_CALLS; k++) {
            char what[160];
            snprintf(what, sizeof what, "shm back-to-back call %d p=%d q=%d seed %llu", k,
                     ics[i].p, ics[i].q, (unsigned long long)th_seed());
            int ok = rc[k] == MPI_SUCCESS &&
                     th_same_bytes(calls[k].got, calls[k].want, calls[k].rbytes, what);
            if (rc[k] != MPI_SUCCESS)
                fprintf(stderr, "FAILED rank %d: %s: returned error %d\n", th_rank(), what,
                        rc[k]);
            failures += !th_all(ok, MPI_COMM_WORLD);
            free(calls[k].rcounts);
            free(calls[k].displs);
            free(calls[k].send);
            free(calls[k].got);
            free(calls[k].want);
        }
    }
    free_configs(ics, nic);
    assert_int_equal(failures, 0);
}

/*
 * A persistent intercommunicator Allgatherv that learns (allgather_inter.sh
 * sets COLTUNE_ADAPT=1): its starts run its learner's candidates (direct,
 * and pmpi as the library's persistent request), every start with new data
 * and blocks of rank-dependent sizes, each against PMPI_Allgatherv; the
 * script checks that the learner decided. TEST_STARTS: starts (default 300
 * under COLTUNE_ADAPT, else 20).
 */
static void test_iallgatherv_init_learns(void **state)
{
    (void)state;
#ifndef ALLGATHER_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    inter ics[NCONFIGS];
    const int nic = configs(ics);
    if (nic == 0) {
        skip();
    }
    const inter *ic = &ics[0];
    const char *env = getenv("TEST_STARTS");
    /* without a learner (the strict runs force direct), a few starts */
    const int starts = env != NULL ? atoi(env) : getenv("COLTUNE_ADAPT") != NULL ? 300 : 20;
    const int remote = ic->n[1 - ic->group];
    int *counts = malloc((size_t)remote * sizeof(int));
    int *displs = malloc((size_t)remote * sizeof(int));
    assert_true(counts && displs);
    int total = 0;
    for (int j = 0; j < remote; j++) { /* block sizes 0..4 ints, known to every rank */
        counts[j] = (j * 3 + (1 - ic->group)) % 5;
        displs[j] = total;
        total += counts[j];
    }
    const int mine = (ic->lrank * 3 + ic->group) % 5;
    int *sb = malloc(((size_t)mine + 1) * sizeof(int));
    int *rb = malloc(((size_t)total + 1) * sizeof(int));
    int *ref = malloc(((size_t)total + 1) * sizeof(int));
    assert_true(sb && rb && ref);
    MPI_Request req;
    assert_int_equal(ALLGATHERV_INIT(sb, mine, MPI_INT, rb, counts, displs, MPI_INT, ic->comm,
                                     MPI_INFO_NULL, &req),
                     MPI_SUCCESS);
    int ok = 1;
    for (int k = 0; k < starts; k++) { /* every rank every start, whatever it found */
        for (int i = 0; i < mine; i++)
            sb[i] = k * 10000 + th_rank() * 100 + i;
        assert_int_equal(PMPI_Allgatherv(sb, mine, MPI_INT, ref, counts, displs, MPI_INT,
                                         ic->comm),
                         MPI_SUCCESS);
        memset(rb, 0xff, ((size_t)total + 1) * sizeof(int));
        assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        char what[96];
        snprintf(what, sizeof what, "persistent Allgatherv learning, start %d", k);
        ok &= th_same_bytes(rb, ref, (size_t)total * sizeof(int), what);
    }
    MPI_Request_free(&req);
    free(counts);
    free(displs);
    free(sb);
    free(rb);
    free(ref);
    free_configs(ics, nic);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    types_create();
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_allgather_api),
        cmocka_unit_test(test_allgatherv_api),
        cmocka_unit_test(test_allgather_intercepted),
        cmocka_unit_test(test_allgatherv_intercepted),
        cmocka_unit_test(test_large_count),
        cmocka_unit_test(test_iallgather_api),
        cmocka_unit_test(test_iallgather_intercepted),
        cmocka_unit_test(test_iallgather_init_intercepted),
        cmocka_unit_test(test_in_place_forwarded),
        cmocka_unit_test(test_alltoall_inter_forwarded),
        cmocka_unit_test(test_shm_back_to_back),
        cmocka_unit_test(test_iallgatherv_init_learns),
    };
    int failed = th_run("allgather_inter", tests, sizeof tests / sizeof tests[0]);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return failed ? 1 : 0;
}
