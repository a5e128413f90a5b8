/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nbc.c - the nonblocking all-to-all (MPI_Ialltoallv, MPI_Ialltoall)
 * and coltune's requests (core/request.h, src/shim/request.c).
 *
 *  - every algorithm that splits, at every parameter value it accepts at
 *    this P, through coltune_ialltoallv / coltune_ialltoall, checked byte
 *    for byte against PMPI_Alltoallv / PMPI_Alltoall: random counts with
 *    zeros, shuffled displacements with gaps, three datatype cases (one
 *    freed by the application before the wait), MPI_IN_PLACE;
 *  - the intercepted MPI_Ialltoallv (whatever COLTUNE_IALLTOALLV chooses)
 *    completed by every completion call, in arrays that mix it with
 *    point-to-point requests and MPI_REQUEST_NULL, statuses checked;
 *  - two on different communicators completed in the opposite order, 32 in
 *    flight on one communicator, 24 on two while rank 0 waits in MPI_Recv
 *    for the others to complete the last, a communicator freed while its
 *    call is pending, and wrong use (MPI_Request_free, MPI_Cancel of an active one)
 *    answered with MPI_ERR_REQUEST and nothing lost.
 *
 * Run by tests/mpi/nbc.sh at many P. TEST_SEED as in test_alltoallv.
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
/* One call's layout: counts in elements, shuffled displacements, gaps  */
/* ------------------------------------------------------------------ */

typedef struct layout {
    int *scount, *sdispl, *rcount, *rdispl;
    size_t sext, rext; /* elements each buffer spans */
} layout;

/* The count rank a sends rank b in call `call`: zero in about one of four. */
static int count_of(uint64_t seed, int call, int a, int b, int most)
{
    th_rng r = th_rng_make(seed ^ (uint64_t)call * 0x9e3779b9u, (uint64_t)a * 1000003u + (uint64_t)b);
    return th_below(&r, 4) == 0 ? 0 : 1 + (int)th_below(&r, most);
}

/* Displacements of P blocks in a shuffled order, with a gap after each. */
static size_t place(th_rng *r, int P, const int *count, int *displ)
{
    int *order = malloc((size_t)P * sizeof *order);
    size_t at = 0;
    assert_non_null(order);
    for (int j = 0; j < P; j++)
        order[j] = j;
    for (int j = P - 1; j > 0; j--) {
        int k = (int)th_below(r, j + 1), t = order[j];
        order[j] = order[k];
        order[k] = t;
    }
    for (int j = 0; j < P; j++) {
        displ[order[j]] = (int)at;
        at += (size_t)count[order[j]] + (size_t)th_below(r, 3);
    }
    free(order);
    return at;
}

static void layout_make(layout *l, uint64_t seed, int call, int P, int me, int most)
{
    th_rng r = th_rng_make(seed, (uint64_t)call * 7919u + (uint64_t)me);
    for (int j = 0; j < P; j++) {
        l->scount[j] = count_of(seed, call, me, j, most);
        l->rcount[j] = count_of(seed, call, j, me, most);
    }
    l->sext = place(&r, P, l->scount, l->sdispl);
    l->rext = place(&r, P, l->rcount, l->rdispl);
}

static layout layout_alloc(int P)
{
    layout l;
    l.scount = malloc(4 * (size_t)P * sizeof(int));
    assert_non_null(l.scount);
    l.sdispl = l.scount + P;
    l.rcount = l.scount + 2 * P;
    l.rdispl = l.scount + 3 * P;
    return l;
}

/* ------------------------------------------------------------------ */
/* Datatypes                                                           */
/* ------------------------------------------------------------------ */

typedef struct type_case {
    const char *name;
    int derived; /* made here: freed by the application right after the start */
} type_case;

static const type_case type_cases[] = {{"MPI_INT", 0}, {"vector(2,1,3) of int", 1},
                                       {"struct {int; gap; double}", 1}};
#define NTYPES ((int)(sizeof type_cases / sizeof type_cases[0]))

static MPI_Datatype type_make(int t)
{
    MPI_Datatype type = MPI_INT;
    if (t == 1)
        MPI_Type_vector(2, 1, 3, MPI_INT, &type);
    if (t == 2) {
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, 8};
        MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Type_create_struct(2, bl, disp, ts, &type);
    }
    if (t != 0)
        MPI_Type_commit(&type);
    return type;
}

static size_t extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return (size_t)ext;
}

static void fill(unsigned char *buf, size_t n, uint64_t seed, int me)
{
    th_rng r = th_rng_make(seed, 77u + (uint64_t)me);
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)th_next(&r);
}

/* ------------------------------------------------------------------ */
/* Every algorithm that splits                                         */
/* ------------------------------------------------------------------ */

/* Whether the direct API has the persistent forms here (the MPI library's
 * persistent collectives: MPI 4, or Open MPI's MPIX_). */
#if defined(CT_HAVE_PCOLL_MPIX) || defined(CT_HAVE_PCOLL_MPI4)
#define HAVE_INIT 1
#else
#define HAVE_INIT 0
#endif

/* The forms the direct API is checked in: one nonblocking call, or a
 * persistent request started twice with new data (coltune_alltoallv_init). */
enum { FORM_NB, FORM_PERSISTENT };
#define STARTS 2

/* Starts and completes req (form FORM_PERSISTENT: MPI_Start first). */
static int start_wait(MPI_Request *req, int form)
{
    int rc = form == FORM_PERSISTENT ? MPI_Start(req) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? MPI_Wait(req, MPI_STATUS_IGNORE) : rc;
}

/* What a completed request must look like: gone (nonblocking), there and
 * inactive (persistent), which is freed here. */
static int request_after(MPI_Request *req, int form)
{
    if (form != FORM_PERSISTENT)
        return *req == MPI_REQUEST_NULL;
    if (*req == MPI_REQUEST_NULL)
        return 0;
    MPI_Request_free(req);
    return *req == MPI_REQUEST_NULL;
}

/* One spec, one datatype case, in place or not, in one form: against
 * PMPI_Alltoallv on the same input (each start's own). Returns 1 when it
 * matched on every rank. */
static int check_alltoallv(const char *spec, int t, int inplace, int call, int form, int most)
{
    const int P = th_size(), me = th_rank();
    const uint64_t seed = th_seed();
    const int starts = form == FORM_PERSISTENT ? STARTS : 1;
    layout l = layout_alloc(P);
    MPI_Datatype type = type_make(t);
    const size_t ext = extent_of(type);
    MPI_Request req = MPI_REQUEST_NULL;
    char what[256];
    layout_make(&l, seed, call, P, me, most);
    if (inplace) { /* the send side is the receive side: symmetric counts */
        for (int j = 0; j < P; j++)
            l.rcount[j] = count_of(seed, call, j < me ? j : me, j < me ? me : j, most);
        th_rng r = th_rng_make(seed, 99u + (uint64_t)me);
        l.rext = place(&r, P, l.rcount, l.rdispl);
    }
    const size_t sbytes = (l.sext + 1) * ext, rbytes = (l.rext + 1) * ext;
    unsigned char *sb = malloc(sbytes), *rb = malloc(rbytes);
    /* each start's input (send and receive buffers) and expected result */
    unsigned char *in_s = malloc(STARTS * sbytes), *in_r = malloc(STARTS * rbytes),
                  *ref = malloc(STARTS * rbytes);
    assert_true(sb && rb && in_s && in_r && ref);
    for (int k = 0; k < starts; k++) {
        unsigned char *ks = in_s + k * sbytes, *kr = in_r + k * rbytes, *kref = ref + k * rbytes;
        fill(ks, sbytes, seed + (uint64_t)call + 5000u * (uint64_t)k, me);
        fill(kr, rbytes, seed + 1000u + (uint64_t)call + 5000u * (uint64_t)k, me);
        memcpy(kref, kr, rbytes);
        if (inplace)
            PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, type, kref, l.rcount, l.rdispl, type,
                           MPI_COMM_WORLD);
        else
            PMPI_Alltoallv(ks, l.scount, l.sdispl, type, kref, l.rcount, l.rdispl, type,
                           MPI_COMM_WORLD);
    }
    memcpy(sb, in_s, sbytes);
    memcpy(rb, in_r, rbytes);
    const void *send = inplace ? MPI_IN_PLACE : sb;
    int rc = form == FORM_PERSISTENT
                 ? coltune_alltoallv_init(spec, send, l.scount, l.sdispl, type, rb, l.rcount,
                                          l.rdispl, type, MPI_COMM_WORLD, MPI_INFO_NULL, &req)
                 : coltune_ialltoallv(spec, send, l.scount, l.sdispl, type, rb, l.rcount,
                                      l.rdispl, type, MPI_COMM_WORLD, &req);
    /* coltune's request keeps its own datatypes; Open MPI 4.1's persistent
     * collectives (pmpi) read the application's at every start */
    const int keep_type = form == FORM_PERSISTENT && strcmp(spec, "pmpi") == 0;
    if (type_cases[t].derived && !keep_type)
        MPI_Type_free(&type);
    int ok = rc == MPI_SUCCESS;
    for (int k = 0; k < starts && rc == MPI_SUCCESS; k++) {
        if (k > 0) { /* the first start's input is in place already */
            memcpy(sb, in_s + k * sbytes, sbytes);
            memcpy(rb, in_r + k * rbytes, rbytes);
        }
        rc = start_wait(&req, form);
        snprintf(what, sizeof what, "%s %s, %s%s, P=%d, call %d, start %d, seed %llu",
                 form == FORM_PERSISTENT ? "alltoallv_init" : "ialltoallv", spec,
                 type_cases[t].name, inplace ? ", MPI_IN_PLACE" : "", P, call, k,
                 (unsigned long long)seed);
        ok &= rc == MPI_SUCCESS && th_same_bytes(rb, ref + k * rbytes, rbytes, what);
    }
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "%s %s: returned %d\n", form == FORM_PERSISTENT ? "alltoallv_init"
                                                                        : "ialltoallv", spec, rc);
    ok &= request_after(&req, form);
    if (type_cases[t].derived && keep_type)
        MPI_Type_free(&type);
    free(sb);
    free(rb);
    free(in_s);
    free(in_r);
    free(ref);
    free(l.scount);
    return th_all(ok, MPI_COMM_WORLD);
}

/* Uniform blocks of count elements of MPI_INT (zero included), in one form. */
static int check_alltoall(const char *spec, int count, int inplace, int form)
{
    const int P = th_size(), me = th_rank();
    const int starts = form == FORM_PERSISTENT ? STARTS : 1;
    const size_t n = (size_t)P * (size_t)(count > 0 ? count : 1);
    int *sb = malloc(n * sizeof(int)), *rb = malloc(n * sizeof(int)),
        *ref = malloc(n * sizeof(int));
    MPI_Request req = MPI_REQUEST_NULL;
    char what[160];
    assert_true(sb && rb && ref);
    int rc = form == FORM_PERSISTENT
                 ? coltune_alltoall_init(spec, inplace ? MPI_IN_PLACE : sb, count, MPI_INT, rb,
                                         count, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req)
                 : MPI_SUCCESS;
    int ok = rc == MPI_SUCCESS;
    for (int k = 0; k < starts && rc == MPI_SUCCESS; k++) {
        for (size_t i = 0; i < n; i++) {
            sb[i] = me * 100000 + k * 1000 + (int)i;
            rb[i] = ref[i] = inplace ? sb[i] : -1;
        }
        PMPI_Alltoall(inplace ? MPI_IN_PLACE : sb, count, MPI_INT, ref, count, MPI_INT,
                      MPI_COMM_WORLD);
        if (form != FORM_PERSISTENT)
            rc = coltune_ialltoall(spec, inplace ? MPI_IN_PLACE : sb, count, MPI_INT, rb, count,
                                   MPI_INT, MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS)
            rc = start_wait(&req, form);
        snprintf(what, sizeof what, "%s %s, count %d%s, P=%d, start %d",
                 form == FORM_PERSISTENT ? "alltoall_init" : "ialltoall", spec, count,
                 inplace ? ", MPI_IN_PLACE" : "", P, k);
        ok &= rc == MPI_SUCCESS && th_same_bytes(rb, ref, n * sizeof(int), what);
    }
    ok &= request_after(&req, form);
    free(sb);
    free(rb);
    free(ref);
    return th_all(ok, MPI_COMM_WORLD);
}

/* Under MPICH, whose progress engine does not call coltune's, the algorithms
 * whose later rounds start as earlier ones complete do not serve the
 * nonblocking forms (restriction progress, coltune(7)). */
static int refused_here(const char *spec)
{
#ifdef MPICH_VERSION
    static const char *const names[] = {"pairwise", "scattered", "multipair_", "tuna",
                                        "node_aware"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(spec, names[i], strlen(names[i])) == 0)
            return 1;
#else
    (void)spec;
#endif
    return 0;
}

/* Such a spec, forced under COLTUNE_FALLBACK=error: the call returns
 * MPI_ERR_ARG on every rank and makes no request. */
static int check_refused(const char *spec)
{
    const int P = th_size();
    int *sb = calloc((size_t)P, sizeof(int)), *rb = calloc((size_t)P, sizeof(int));
    MPI_Request req = MPI_REQUEST_NULL;
    int cls = MPI_SUCCESS;
    assert_true(sb && rb);
    const int rc = coltune_ialltoall(spec, sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    const int ok = cls == MPI_ERR_ARG && req == MPI_REQUEST_NULL;
    if (!ok)
        fprintf(stderr, "ialltoall %s under MPICH: returned %d, not refused\n", spec, rc);
    free(sb);
    free(rb);
    return th_all(ok, MPI_COMM_WORLD);
}

static void test_every_algorithm(void **state)
{
    (void)state;
    char **specs;
    int Q, N, call = 0, checked = 0;
    th_topology(&Q, &N);
    const int n = th_algorithm_specs("ialltoallv", th_size(), Q, N, &specs);
    if (getenv("TEST_ALGS") == NULL)
        assert_true(n >= 12); /* pmpi and the eleven that split */
    for (int s = 0; s < n; s++) {
        /* Open MPI 4.1's own MPI_Ialltoallv in place (libnbc) leaves a rank
         * whose only block is its own hanging in its next nonblocking
         * all-to-all: pmpi is the library, not tested in place here. */
        const int pmpi = strcmp(specs[s], "pmpi") == 0;
        if (refused_here(specs[s])) {
            assert_true(check_refused(specs[s]));
            checked++;
            continue;
        }
        for (int form = FORM_NB; form <= (HAVE_INIT ? FORM_PERSISTENT : FORM_NB); form++) {
            for (int t = 0; t < NTYPES; t++)
                for (int inplace = 0; inplace < 2 - pmpi; inplace++, checked++)
                    assert_true(check_alltoallv(specs[s], t, inplace, call++, form, 5));
            for (int count = 0; count <= 3; count += 3)
                for (int inplace = 0; inplace < 2; inplace++, checked++)
                    assert_true(check_alltoall(specs[s], count, inplace, form));
        }
    }
    if (th_rank() == 0)
        printf("nbc: %d cases over %d specs checked\n", checked, n);
    th_specs_free(specs, n);
}

/* Blocks of up to 80 KB (up to 20000 MPI_INT, a vector type too): TuNA's
 * rounds beyond 64 KiB send their sizes and their data apart, the shared
 * window runs in rounds and sends large blocks point-to-point. Every
 * algorithm that splits, at every parameter value, in each form. */
static void test_large_blocks(void **state)
{
    (void)state;
    char **specs;
    int Q, N, call = 1000, checked = 0;
    th_topology(&Q, &N);
    const int n = th_algorithm_specs("ialltoallv", th_size(), Q, N, &specs);
    for (int s = 0; s < n; s++) {
        if (refused_here(specs[s]))
            continue;
        for (int form = FORM_NB; form <= (HAVE_INIT ? FORM_PERSISTENT : FORM_NB); form++)
            for (int t = 0; t < NTYPES; t++, checked++)
                assert_true(check_alltoallv(specs[s], t, 0, call++, form, 20000));
    }
    if (th_rank() == 0)
        printf("nbc: %d cases of large blocks over %d specs checked\n", checked, n);
    th_specs_free(specs, n);
}

/* ------------------------------------------------------------------ */
/* The completion calls                                                */
/* ------------------------------------------------------------------ */

/* A ring exchange of one int to the right, as point-to-point requests
 * beside the collective. */
typedef struct ring {
    int out, in;
} ring;

static void ring_start(ring *g, MPI_Request *send, MPI_Request *recv, int tag)
{
    const int P = th_size(), me = th_rank();
    g->out = me * 10 + tag;
    g->in = -1;
    MPI_Irecv(&g->in, 1, MPI_INT, (me - 1 + P) % P, tag, MPI_COMM_WORLD, recv);
    MPI_Isend(&g->out, 1, MPI_INT, (me + 1) % P, tag, MPI_COMM_WORLD, send);
}

static int ring_ok(const ring *g, int tag)
{
    const int P = th_size(), me = th_rank();
    return g->in == ((me - 1 + P) % P) * 10 + tag;
}

/* Does coltune serve MPI_Ialltoallv here (COLTUNE_IALLTOALLV), or the MPI
 * library (pmpi)? */
static int coltune_serves(void)
{
    char spec[64];
    coltune_decision(MPI_COMM_WORLD, "ialltoallv", 0, spec, sizeof spec);
    return strncmp(spec, "pmpi", 4) != 0;
}

/* The empty status (MPI 4.0 section 3.7.3): what an MPI_REQUEST_NULL entry
 * gets, and what coltune gives a collective's request. */
static int empty_status(const MPI_Status *st)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    return count == 0 && st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG;
}

/* A collective's status: MPI leaves it undefined (section 6.12; MPICH does
 * not write it), so only coltune's is checked. */
static int collective_status(const MPI_Status *st)
{
    return !coltune_serves() || empty_status(st);
}

static int recv_status(const MPI_Status *st, int tag)
{
    const int P = th_size(), me = th_rank();
    return st->MPI_SOURCE == (me - 1 + P) % P && st->MPI_TAG == tag;
}

/* One all-to-all through the intercepted MPI_Ialltoallv, with its input,
 * expected output and buffers. */
typedef struct a2a {
    layout l;
    unsigned char *sb, *rb, *ref;
    size_t rbytes;
} a2a;

/* Its layout, input and expected output. */
static void a2a_prepare(a2a *x, MPI_Comm comm, int call)
{
    const int P = th_size(), me = th_rank();
    x->l = layout_alloc(P);
    layout_make(&x->l, th_seed(), call, P, me, 300);
    x->rbytes = x->l.rext * sizeof(int);
    x->sb = malloc(x->l.sext * sizeof(int) + 1);
    x->rb = calloc(1, x->rbytes + 1);
    x->ref = calloc(1, x->rbytes + 1);
    assert_true(x->sb && x->rb && x->ref);
    fill(x->sb, x->l.sext * sizeof(int), th_seed() + (uint64_t)call, me);
    PMPI_Alltoallv(x->sb, x->l.scount, x->l.sdispl, MPI_INT, x->ref, x->l.rcount, x->l.rdispl,
                   MPI_INT, comm);
}

/* Starts a prepared one. */
static void a2a_post(a2a *x, MPI_Comm comm, MPI_Request *req)
{
    assert_int_equal(MPI_Ialltoallv(x->sb, x->l.scount, x->l.sdispl, MPI_INT, x->rb,
                                    x->l.rcount, x->l.rdispl, MPI_INT, comm, req),
                     MPI_SUCCESS);
}

/* Runs a prepared one through the intercepted blocking MPI_Alltoallv. */
static void a2a_blocking(a2a *x, MPI_Comm comm)
{
    assert_int_equal(MPI_Alltoallv(x->sb, x->l.scount, x->l.sdispl, MPI_INT, x->rb,
                                   x->l.rcount, x->l.rdispl, MPI_INT, comm),
                     MPI_SUCCESS);
}

static void a2a_start(a2a *x, MPI_Comm comm, int call, MPI_Request *req)
{
    a2a_prepare(x, comm, call);
    a2a_post(x, comm, req);
}

/* Checks and frees it. */
static int a2a_done(a2a *x, const char *how)
{
    char what[128];
    snprintf(what, sizeof what, "all-to-all completed by %s, P=%d, seed %llu", how,
             th_size(), (unsigned long long)th_seed());
    const int ok = th_same_bytes(x->rb, x->ref, x->rbytes, what);
    free(x->sb);
    free(x->rb);
    free(x->ref);
    free(x->l.scount);
    return ok;
}

enum { C_WAIT, C_TEST, C_GET_STATUS, C_WAITALL, C_TESTALL, C_WAITANY, C_TESTANY, C_WAITSOME,
       C_TESTSOME, NCOMPLETIONS };
static const char *const completion_names[NCOMPLETIONS] = {
    "MPI_Wait", "MPI_Test", "MPI_Request_get_status", "MPI_Waitall", "MPI_Testall",
    "MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"};

/* Completes the array {NULL, recv, collective, send, NULL} with one kind of
 * completion call, checking each status; returns 1 when all is right. */
static int complete_with(int how, MPI_Request reqs[5], int tag)
{
    MPI_Status st[5];
    int ok = 1, flag = 0, left = 3, idx, out, indices[5];
    switch (how) {
    case C_WAIT:
    case C_TEST:
    case C_GET_STATUS:
        for (int i = 0; i < 5; i++) {
            if (how == C_GET_STATUS && reqs[i] != MPI_REQUEST_NULL) {
                do
                    MPI_Request_get_status(reqs[i], &flag, &st[i]);
                while (!flag);
                ok &= i != 2 || collective_status(&st[i]);
            }
            if (how == C_TEST)
                do
                    MPI_Test(&reqs[i], &flag, &st[i]);
                while (!flag);
            else
                MPI_Wait(&reqs[i], &st[i]);
        }
        ok &= collective_status(&st[2]) && recv_status(&st[1], tag) && empty_status(&st[0]);
        break;
    case C_WAITALL:
        ok &= MPI_Waitall(5, reqs, st) == MPI_SUCCESS;
        ok &= collective_status(&st[2]) && recv_status(&st[1], tag) && empty_status(&st[4]);
        break;
    case C_TESTALL:
        do
            ok &= MPI_Testall(5, reqs, &flag, st) == MPI_SUCCESS;
        while (!flag);
        ok &= collective_status(&st[2]) && recv_status(&st[1], tag);
        break;
    case C_WAITANY:
    case C_TESTANY:
        while (left > 0) {
            MPI_Status s;
            if (how == C_WAITANY)
                MPI_Waitany(5, reqs, &idx, &s);
            else {
                MPI_Testany(5, reqs, &idx, &flag, &s);
                if (!flag)
                    continue;
            }
            ok &= idx == 1 || idx == 2 || idx == 3;
            ok &= idx != 2 || collective_status(&s);
            ok &= idx != 1 || recv_status(&s, tag);
            left--;
        }
        MPI_Waitany(5, reqs, &idx, MPI_STATUS_IGNORE); /* all null now */
        ok &= idx == MPI_UNDEFINED;
        break;
    default: /* C_WAITSOME, C_TESTSOME */
        while (left > 0) {
            if (how == C_WAITSOME)
                MPI_Waitsome(5, reqs, &out, indices, st);
            else
                MPI_Testsome(5, reqs, &out, indices, st);
            ok &= out != MPI_UNDEFINED;
            for (int k = 0; ok && k < out; k++) {
                ok &= indices[k] != 2 || collective_status(&st[k]);
                ok &= indices[k] != 1 || recv_status(&st[k], tag);
            }
            left -= out;
        }
        MPI_Waitsome(5, reqs, &out, indices, st);
        ok &= out == MPI_UNDEFINED;
        break;
    }
    for (int i = 0; i < 5; i++)
        ok &= reqs[i] == MPI_REQUEST_NULL;
    return ok;
}

static void test_req_completion_calls(void **state)
{
    (void)state;
    for (int how = 0; how < NCOMPLETIONS; how++) {
        MPI_Request reqs[5] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                               MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        ring g;
        a2a x;
        ring_start(&g, &reqs[3], &reqs[1], how);
        a2a_start(&x, MPI_COMM_WORLD, 100 + how, &reqs[2]);
        int ok = complete_with(how, reqs, how);
        if (!ok)
            fprintf(stderr, "%s: a request or status is wrong, P=%d\n", completion_names[how],
                    th_size());
        ok &= ring_ok(&g, how) && a2a_done(&x, completion_names[how]);
        assert_true(th_all(ok, MPI_COMM_WORLD));
    }
}

/* Two on different communicators, completed in the opposite order (on
 * every rank, then on alternate ranks); then 32 in flight on one
 * communicator. */
static void test_req_reverse_and_many(void **state)
{
    (void)state;
    MPI_Comm c1, c2;
    MPI_Request r[32];
    a2a x[32];
    int ok = 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    a2a_start(&x[0], c1, 200, &r[0]);
    a2a_start(&x[1], c2, 201, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    ok &= a2a_done(&x[0], "MPI_Wait, second of two") && a2a_done(&x[1], "MPI_Wait, first");
    /* Odd ranks complete them in the other order: a rank blocked in one
     * still serves its peers' rounds of the other. */
    a2a_start(&x[0], c1, 202, &r[0]);
    a2a_start(&x[1], c2, 203, &r[1]);
    const int first = th_rank() % 2;
    MPI_Wait(&r[first], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1 - first], MPI_STATUS_IGNORE);
    ok &= a2a_done(&x[0], "MPI_Wait, ranks in different orders") &&
          a2a_done(&x[1], "MPI_Wait, ranks in different orders");
    for (int i = 0; i < 32; i++)
        a2a_start(&x[i], c1, 300 + i, &r[i]);
    MPI_Waitall(32, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 32; i++)
        ok &= a2a_done(&x[i], "MPI_Waitall of 32 in flight");
    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* More in flight than coltune's progress takes in one batch (16): 16 on one
 * communicator, then 8 on another. Every rank but 0 waits for the last one
 * first (through the shared window: a wait that advances only its own
 * window's calls), while rank 0 sits in a blocking MPI_Recv, where only
 * the library's progress engine, and coltune's hook in it, advances its
 * calls, until rank 1 has completed that last one: rank 0 must advance
 * calls past the first 16 there, which the others do not serve. (Each
 * pass of coltune's progress once advanced only the first 16 pending; this
 * order of waits did not hang with it, as a call that completes makes room
 * for the next, but every pending call is now advanced in every pass.) */
static void test_req_many_served_while_blocked(void **state)
{
    (void)state;
    enum { N = 24, FIRST = 20 };
    MPI_Comm c[2];
    MPI_Request r[N];
    a2a x[N];
    int ok = 1, token = 0;
    const int P = th_size(), me = th_rank();
    MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &c[1]);
    /* every input and reference first (PMPI_Alltoallv, in which the
     * library's progress would complete the calls started before) */
    for (int i = 0; i < N; i++)
        a2a_prepare(&x[i], c[i < FIRST ? 0 : 1], 700 + i);
    for (int i = 0; i < N; i++)
        a2a_post(&x[i], c[i < FIRST ? 0 : 1], &r[i]);
    if (me == 0 && P > 1) {
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r[N - 1], MPI_STATUS_IGNORE);
        if (me == 1)
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Waitall(N, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++)
        ok &= a2a_done(&x[i], "rank 0 in MPI_Recv, the others waiting for the last of 24");
    MPI_Comm_free(&c[0]);
    MPI_Comm_free(&c[1]);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* MPI's progress rule across the library's operations and coltune's: the
 * even ranks wait for the library's MPI_Ibarrier and MPI_Iallreduce (on
 * another communicator; each needs every rank's progress at P > 2) before
 * they start the all-to-all that the odd ranks, having started it, already
 * wait for. The odd ranks' wait must run the library's progress engine:
 * where it waited in the shared window alone (shm, node_aware), every
 * rank waited forever (MPICH's coll/nonblocking3 found it). */
static void test_req_library_served_while_waiting(void **state)
{
    (void)state;
    enum { N = 16384 };
    MPI_Comm c;
    MPI_Request r, lib[2];
    a2a x;
    int *in = malloc(N * sizeof *in), *sum = malloc(N * sizeof *sum), ok = 1;
    const int P = th_size(), me = th_rank();
    assert_true(in != NULL && sum != NULL);
    for (int i = 0; i < N; i++)
        in[i] = me + i;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    /* a first call sets up what the communicator's calls keep (its context,
     * a window), collectively: the odd ranks' start below then enters no
     * collective of the library's */
    a2a_start(&x, c, 649, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ok &= a2a_done(&x, "the first call on a new communicator");
    a2a_prepare(&x, c, 650);
    MPI_Ibarrier(MPI_COMM_WORLD, &lib[0]);
    MPI_Iallreduce(in, sum, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &lib[1]);
    if (me % 2 == 1) {
        a2a_post(&x, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Waitall(2, lib, MPI_STATUSES_IGNORE);
    } else {
        MPI_Waitall(2, lib, MPI_STATUSES_IGNORE);
        a2a_post(&x, c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < N; i++)
        ok &= sum[i] == P * i + P * (P - 1) / 2;
    if (!ok)
        fprintf(stderr, "MPI_Iallreduce beside the all-to-all: a wrong sum, P=%d\n", P);
    ok &= a2a_done(&x, "odd ranks waiting while the even ones wait for the library's calls");
    free(in);
    free(sum);
    MPI_Comm_free(&c);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* A blocking MPI_Alltoallv on the communicator between nonblocking ones
 * still pending (shm: the blocking call completes those before it on the
 * window they share), and one started after it, completed in reverse. */
static void test_req_blocking_between(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Request r[3];
    a2a x[3], y;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    a2a_start(&x[0], c, 600, &r[0]);
    a2a_start(&x[1], c, 601, &r[1]);
    a2a_prepare(&y, c, 602);
    a2a_blocking(&y, c);
    a2a_start(&x[2], c, 603, &r[2]);
    for (int i = 2; i >= 0; i--)
        MPI_Wait(&r[i], MPI_STATUS_IGNORE);
    int ok = a2a_done(&y, "a blocking MPI_Alltoallv between nonblocking ones");
    for (int i = 0; i < 3; i++)
        ok &= a2a_done(&x[i], "MPI_Wait in reverse, a blocking call between");
    MPI_Comm_free(&c);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* The communicator freed while its call is pending: the call completes. */
static void test_req_comm_freed_pending(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Request r;
    a2a x;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    a2a_start(&x, c, 400, &r);
    MPI_Comm_free(&c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    assert_true(th_all(a2a_done(&x, "MPI_Wait after MPI_Comm_free"), MPI_COMM_WORLD));
}

/* MPI_Request_free and MPI_Cancel of an active collective request are
 * erroneous (MPI 4.0 sections 3.7.3 and 6.12): MPI_ERR_REQUEST, and the
 * request still completes. */
static void test_req_wrong_use(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Request r, kept;
    a2a x;
    int cls = 0, ok = 1;
    if (!coltune_serves())
        skip(); /* the MPI library's request: its own answer to wrong use */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    a2a_start(&x, c, 500, &r);
    kept = r;
    const int same_handler = MPI_Request_free(&r);
    MPI_Error_class(same_handler, &cls);
    ok &= cls == MPI_ERR_REQUEST && r == kept;
    MPI_Error_class(MPI_Cancel(&r), &cls);
    ok &= cls == MPI_ERR_REQUEST;
    ok &= MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && r == MPI_REQUEST_NULL;
    ok &= a2a_done(&x, "MPI_Wait after a refused MPI_Request_free");
    MPI_Comm_free(&c);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

/* ------------------------------------------------------------------ */
/* Persistent: MPI_Alltoallv_init (MPI 4) or MPIX_Alltoallv_init       */
/* ------------------------------------------------------------------ */

#if defined(CT_HAVE_PCOLL_MPIX)
#include <mpi-ext.h>
#define ALLTOALLV_INIT MPIX_Alltoallv_init
#elif defined(CT_HAVE_PCOLL_MPI4)
#define ALLTOALLV_INIT MPI_Alltoallv_init
#endif

#ifdef ALLTOALLV_INIT
/* Checks recv against PMPI_Alltoallv of send, for start number k. */
static int persistent_ok(const layout *l, const int *sb, const int *rb, int inplace, int k)
{
    const size_t n = l->rext + 1;
    int *ref = malloc(n * sizeof(int));
    char what[128];
    assert_non_null(ref);
    if (inplace) { /* sb holds what rb held before the start */
        memcpy(ref, sb, n * sizeof(int));
        PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, ref, l->rcount, l->rdispl, MPI_INT,
                       MPI_COMM_WORLD);
    } else {
        memcpy(ref, rb, n * sizeof(int)); /* the gaps */
        PMPI_Alltoallv(sb, l->scount, l->sdispl, MPI_INT, ref, l->rcount, l->rdispl, MPI_INT,
                       MPI_COMM_WORLD);
    }
    snprintf(what, sizeof what, "persistent Alltoallv%s, start %d, P=%d", inplace ? " in place" : "",
             k, th_size());
    const int ok = th_same_bytes(rb, ref, n * sizeof(int), what);
    free(ref);
    return ok;
}
#endif

/* A persistent request's window stays while the request lives. Three
 * communicators whose windows the cache limit does not hold together
 * (nbc.sh: COLTUNE_CACHE=80k, COLTUNE_SHM_WINDOW=16k, shm forced) take
 * blocking calls in turn, so each asks the least recently used window
 * back; the first holds a persistent request, started between them and
 * checked each time. */
static void test_req_persistent_window_kept(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    const int P = th_size(), me = th_rank();
    MPI_Comm c[3];
    MPI_Request req;
    layout l = layout_alloc(P);
    a2a y;
    int ok = 1;
    for (int j = 0; j < 3; j++)
        MPI_Comm_dup(MPI_COMM_WORLD, &c[j]);
    layout_make(&l, th_seed(), 670, P, me, 300);
    const size_t sn = l.sext + 1, rn = l.rext + 1;
    int *sb = calloc(sn, sizeof(int)), *rb = calloc(rn, sizeof(int));
    assert_true(sb && rb);
    assert_int_equal(ALLTOALLV_INIT(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                    MPI_INT, c[0], MPI_INFO_NULL, &req),
                     MPI_SUCCESS);
    for (int k = 0; k < 8 && ok; k++) {
        for (size_t i = 0; i < sn; i++)
            sb[i] = k * 1000 + me * 100 + (int)i;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        ok &= persistent_ok(&l, sb, rb, 0, k);
        for (int j = 0; j < 3; j++) {
            a2a_prepare(&y, c[j], 671 + 3 * k + j);
            a2a_blocking(&y, c[j]);
            ok &= a2a_done(&y, "blocking calls on three communicators in turn");
        }
    }
    MPI_Request_free(&req);
    for (int j = 0; j < 3; j++)
        MPI_Comm_free(&c[j]);
    free(sb);
    free(rb);
    free(l.scount);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/* A persistent request whose communicator the application frees before
 * starting it (MPI lets it: the request keeps the communicator), started
 * three times with new data, then freed, with a second communicator's
 * window made and freed meanwhile. The MPI library's own request may not
 * survive it (Open MPI 4.1's does not): only where coltune serves. */
static void test_req_persistent_comm_freed(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    if (!coltune_serves())
        skip();
    const int P = th_size(), me = th_rank();
    MPI_Comm c, d;
    MPI_Request req;
    layout l = layout_alloc(P);
    a2a y;
    int ok = 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    layout_make(&l, th_seed(), 690, P, me, 300);
    const size_t sn = l.sext + 1, rn = l.rext + 1;
    int *sb = calloc(sn, sizeof(int)), *rb = calloc(rn, sizeof(int));
    assert_true(sb && rb);
    assert_int_equal(ALLTOALLV_INIT(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                    MPI_INT, c, MPI_INFO_NULL, &req),
                     MPI_SUCCESS);
    MPI_Comm_free(&c);
    for (int k = 0; k < 3 && ok; k++) {
        for (size_t i = 0; i < sn; i++)
            sb[i] = k * 1000 + me * 100 + (int)i;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        ok &= persistent_ok(&l, sb, rb, 0, k);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        a2a_prepare(&y, d, 691 + k);
        a2a_blocking(&y, d);
        ok &= a2a_done(&y, "a blocking call on another communicator");
        MPI_Comm_free(&d);
    }
    MPI_Request_free(&req);
    free(sb);
    free(rb);
    free(l.scount);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/* A persistent request started 1000 times with new data, in MPI_Startall
 * beside the library's persistent requests, started while active (wrong
 * use: MPI_ERR_REQUEST where coltune serves), in place, then freed, then
 * its communicator freed. */
static void test_req_persistent(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    const int P = th_size(), me = th_rank();
    MPI_Comm c;
    MPI_Request reqs[3];
    layout l = layout_alloc(P);
    int ok = 1, ring_in = -1, ring_out = me, cls = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    layout_make(&l, th_seed(), 600, P, me, 7);
    const size_t sn = l.sext + 1, rn = l.rext + 1;
    int *sb = calloc(sn > rn ? sn : rn, sizeof(int)), *rb = calloc(rn, sizeof(int));
    assert_true(sb && rb);
    assert_int_equal(ALLTOALLV_INIT(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                    MPI_INT, c, MPI_INFO_NULL, &reqs[0]),
                     MPI_SUCCESS);
    MPI_Recv_init(&ring_in, 1, MPI_INT, (me - 1 + P) % P, 9, MPI_COMM_WORLD, &reqs[1]);
    MPI_Send_init(&ring_out, 1, MPI_INT, (me + 1) % P, 9, MPI_COMM_WORLD, &reqs[2]);
    for (int k = 0; k < 1000 && ok; k++) {
        for (size_t i = 0; i < sn; i++)
            sb[i] = k * 1000 + me * 100 + (int)i;
        ring_out = me * 1000 + k;
        if (k % 2)
            MPI_Startall(3, reqs);
        else
            MPI_Start(&reqs[0]);
        if (k == 1 && coltune_serves()) { /* active: starting it again is wrong */
            MPI_Error_class(MPI_Start(&reqs[0]), &cls);
            ok &= cls == MPI_ERR_REQUEST;
        }
        MPI_Waitall(k % 2 ? 3 : 1, reqs, MPI_STATUSES_IGNORE);
        ok &= reqs[0] != MPI_REQUEST_NULL; /* persistent: still there */
        ok &= k % 2 == 0 || ring_in == ((me - 1 + P) % P) * 1000 + k;
        if (k % 97 == 0 || k == 999)
            ok &= persistent_ok(&l, sb, rb, 0, k);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    MPI_Request_free(&reqs[2]);
    ok &= reqs[0] == MPI_REQUEST_NULL;
    /* In place: symmetric counts, three starts with new data. */
    for (int j = 0; j < P; j++)
        l.rcount[j] = count_of(th_seed(), 601, j < me ? j : me, j < me ? me : j, 7);
    th_rng r = th_rng_make(th_seed(), 602u + (uint64_t)me);
    l.rext = place(&r, P, l.rcount, l.rdispl);
    int *rb2 = calloc(l.rext + 1, sizeof(int)), *before = calloc(l.rext + 1, sizeof(int));
    assert_true(rb2 && before);
    assert_int_equal(ALLTOALLV_INIT(MPI_IN_PLACE, NULL, NULL, MPI_INT, rb2, l.rcount, l.rdispl,
                                    MPI_INT, c, MPI_INFO_NULL, &reqs[0]),
                     MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < l.rext + 1; i++)
            before[i] = rb2[i] = k * 7000 + me * 100 + (int)i;
        MPI_Start(&reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        ok &= persistent_ok(&l, before, rb2, 1, k);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Comm_free(&c);
    free(sb);
    free(rb);
    free(rb2);
    free(before);
    free(l.scount);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/*
 * The persistent form decided apart from the nonblocking one on the same
 * communicator: nonblocking calls first (under nbc.sh's rules they go to the
 * library, which lets the shim forward later ones at once), then the
 * persistent call, which a rule of its own (persistent=1) gives to coltune;
 * nbc.sh checks the log. Its starts must give the PMPI_ result.
 */
static void test_req_persistent_apart(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    const int P = th_size(), me = th_rank();
    MPI_Comm c;
    MPI_Request req;
    layout l = layout_alloc(P);
    int ok = 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    layout_make(&l, th_seed(), 700, P, me, 5);
    const size_t sn = l.sext + 1, rn = l.rext + 1;
    int *sb = calloc(sn, sizeof(int)), *rb = calloc(rn, sizeof(int));
    assert_true(sb && rb);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(MPI_Ialltoallv(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                        MPI_INT, c, &req),
                         MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    assert_int_equal(ALLTOALLV_INIT(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                    MPI_INT, c, MPI_INFO_NULL, &req),
                     MPI_SUCCESS);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < sn; i++)
            sb[i] = k * 1000 + me * 100 + (int)i;
        assert_int_equal(MPI_Start(&req), MPI_SUCCESS);
        assert_int_equal(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        ok &= persistent_ok(&l, sb, rb, 0, k);
    }
    MPI_Request_free(&req);
    MPI_Comm_free(&c);
    free(sb);
    free(rb);
    free(l.scount);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/*
 * A persistent request that learns (nbc.sh sets COLTUNE_ADAPT=1): its starts
 * run the learner's candidates, pmpi's among them, one after another, and
 * its rounds agree by a nonblocking allreduce that the request's completion
 * waits for. Every start's result must equal PMPI_'s, completed by MPI_Wait,
 * by an MPI_Test loop and by MPI_Waitall beside a point-to-point exchange;
 * nbc.sh checks in the log and the learned rules that it decided.
 * TEST_STARTS: how many starts (default 600).
 */
static void test_persistent_learns(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    const int P = th_size(), me = th_rank();
    const char *env = getenv("TEST_STARTS");
    const int starts = env != NULL ? atoi(env) : 600;
    MPI_Comm c;
    MPI_Request reqs[3];
    layout l = layout_alloc(P);
    int ok = 1, ring_in = -1, ring_out = me;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    layout_make(&l, th_seed(), 800, P, me, 5);
    const size_t sn = l.sext + 1, rn = l.rext + 1;
    int *sb = calloc(sn, sizeof(int)), *rb = calloc(rn, sizeof(int));
    assert_true(sb && rb);
    assert_int_equal(ALLTOALLV_INIT(sb, l.scount, l.sdispl, MPI_INT, rb, l.rcount, l.rdispl,
                                    MPI_INT, c, MPI_INFO_NULL, &reqs[0]),
                     MPI_SUCCESS);
    for (int k = 0; k < starts; k++) { /* every rank every start, whatever it found */
        for (size_t i = 0; i < sn; i++)
            sb[i] = k * 1000 + me * 100 + (int)i;
        assert_int_equal(MPI_Start(&reqs[0]), MPI_SUCCESS);
        if (k % 3 == 0) {
            int flag = 0;
            while (!flag)
                assert_int_equal(MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else if (k % 3 == 1) {
            assert_int_equal(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            ring_out = me * 1000 + k;
            MPI_Irecv(&ring_in, 1, MPI_INT, (me - 1 + P) % P, 9, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(&ring_out, 1, MPI_INT, (me + 1) % P, 9, MPI_COMM_WORLD, &reqs[2]);
            assert_int_equal(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            ok &= ring_in == ((me - 1 + P) % P) * 1000 + k;
        }
        ok &= persistent_ok(&l, sb, rb, 0, k);
    }
    MPI_Request_free(&reqs[0]);
    MPI_Comm_free(&c);
    free(sb);
    free(rb);
    free(l.scount);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/* The tags coltune counts a communicator's calls modulo: 16384 nonblocking
 * and 8192 persistent ones, or both COLTUNE_TEST_TAGS (nbc.sh sets it, so
 * that the counts wrap after a few calls). */
static int tags_of(int persistent)
{
    const char *v = getenv("COLTUNE_TEST_TAGS");
    return v != NULL ? atoi(v) : persistent ? 8192 : 16384;
}

#ifdef ALLTOALLV_INIT
/* Two calls' buffers for the tag tests: one int to every rank, call i's
 * data (i + 1) * 1000000 + rank * 1000 + destination, on a duplicate of
 * MPI_COMM_WORLD. */
typedef struct two_calls {
    int P;
    int *cnt, *dsp, *snd[2], *rcv[2], *ref;
    MPI_Comm comm;
} two_calls;

static void two_calls_make(two_calls *t)
{
    const int P = th_size(), me = th_rank();
    const size_t n = (size_t)P * sizeof(int);
    t->P = P;
    t->cnt = malloc(n);
    t->dsp = malloc(n);
    t->ref = malloc(n);
    for (int i = 0; i < 2; i++) {
        t->snd[i] = malloc(n);
        t->rcv[i] = malloc(n);
    }
    assert_true(t->cnt && t->dsp && t->ref && t->snd[0] && t->snd[1] && t->rcv[0] && t->rcv[1]);
    for (int j = 0; j < P; j++) {
        t->cnt[j] = 1;
        t->dsp[j] = j;
        for (int i = 0; i < 2; i++)
            t->snd[i][j] = (i + 1) * 1000000 + me * 1000 + j;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &t->comm);
}

/* Call i's persistent request. */
static void two_calls_init(two_calls *t, int i, MPI_Request *req)
{
    assert_int_equal(ALLTOALLV_INIT(t->snd[i], t->cnt, t->dsp, MPI_INT, t->rcv[i], t->cnt, t->dsp,
                                    MPI_INT, t->comm, MPI_INFO_NULL, req),
                     MPI_SUCCESS);
}

/* Does call i's result equal PMPI_'s? */
static int two_calls_check(two_calls *t, int i, const char *what)
{
    PMPI_Alltoallv(t->snd[i], t->cnt, t->dsp, MPI_INT, t->ref, t->cnt, t->dsp, MPI_INT,
                   MPI_COMM_WORLD);
    return th_same_bytes(t->rcv[i], t->ref, (size_t)t->P * sizeof(int), what);
}

static void two_calls_free(two_calls *t)
{
    MPI_Comm_free(&t->comm);
    free(t->cnt);
    free(t->dsp);
    free(t->ref);
    for (int i = 0; i < 2; i++) {
        free(t->snd[i]);
        free(t->rcv[i]);
    }
}
#endif

/*
 * TEST_TAG_WRAP=1 (nbc.sh): a persistent request that outlives N - 1
 * nonblocking calls on its communicator, then starts beside the next one:
 * coltune counts its nonblocking calls' tags modulo N (tags_of), so that
 * call's tag would be the request's if the persistent calls shared the
 * count. Both results must equal PMPI_'s.
 */
static void test_req_persistent_tags(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    two_calls t; /* 0: the persistent call, 1: the nonblocking ones */
    MPI_Request reqs[2];
    int ok = 1;
    two_calls_make(&t);
    two_calls_init(&t, 0, &reqs[0]);
    for (int k = 0; k < tags_of(0); k++) {
        assert_int_equal(MPI_Ialltoallv(t.snd[1], t.cnt, t.dsp, MPI_INT, t.rcv[1], t.cnt, t.dsp,
                                        MPI_INT, t.comm, &reqs[1]),
                         MPI_SUCCESS);
        if (k < tags_of(0) - 1)
            assert_int_equal(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    assert_int_equal(MPI_Start(&reqs[0]), MPI_SUCCESS);
    assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ok &= two_calls_check(&t, 0, "the persistent call");
    ok &= two_calls_check(&t, 1, "the nonblocking call beside it");
    MPI_Request_free(&reqs[0]);
    two_calls_free(&t);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/*
 * TEST_TAG_WRAP=1 (nbc.sh), too: a persistent request that outlives N - 1
 * persistent requests made and freed on its communicator, then starts beside
 * the next one made: coltune counts the persistent calls' tags modulo N
 * (tags_of), so that one's tag would be the first's unless a tag still held
 * is passed over. Both results must equal PMPI_'s, at every start.
 */
static void test_req_persistent_tag_reuse(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    two_calls t; /* 0: the long-lived request, 1: the others */
    MPI_Request reqs[2];
    int ok = 1;
    two_calls_make(&t);
    two_calls_init(&t, 0, &reqs[0]);
    for (int k = 0; k < tags_of(1); k++) {
        two_calls_init(&t, 1, &reqs[1]);
        if (k < tags_of(1) - 1)
            assert_int_equal(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
    }
    for (int start = 0; start < 3; start++) {
        assert_int_equal(MPI_Startall(2, reqs), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        ok &= two_calls_check(&t, 0, "the long-lived request");
        ok &= two_calls_check(&t, 1, "the (N + 1)th request beside it");
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    two_calls_free(&t);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/*
 * TEST_TAGS_HELD=1 (nbc.sh, with COLTUNE_TEST_TAGS=4): four live
 * persistent requests hold every tag, so the fifth goes to the MPI library;
 * once the second is freed, the sixth takes its tag, the fourth's count
 * having wrapped. Every live request started at once, twice, each result
 * equal to PMPI_'s.
 */
static void test_req_persistent_tags_held(void **state)
{
    (void)state;
#ifndef ALLTOALLV_INIT
    th_skip("the MPI library has no persistent collectives (MPI 4 or Open MPI's MPIX_)");
#else
    enum { NREQ = 5 }; /* live at the end: five of the six made */
    const int P = th_size(), me = th_rank();
    int *cnt = malloc((size_t)P * sizeof(int)), *dsp = malloc((size_t)P * sizeof(int));
    int *snd = malloc((size_t)6 * P * sizeof(int)), *rcv = malloc((size_t)6 * P * sizeof(int));
    const int data[NREQ] = {0, 5, 2, 3, 4}; /* each live request's buffers */
    int *ref = malloc((size_t)P * sizeof(int)), ok = 1;
    MPI_Request reqs[NREQ];
    MPI_Comm c;
    assert_true(cnt && dsp && snd && rcv && ref);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int j = 0; j < P; j++) {
        cnt[j] = 1;
        dsp[j] = j;
        for (int q = 0; q < 6; q++)
            snd[q * P + j] = (q + 1) * 1000000 + me * 1000 + j;
    }
    for (int q = 0; q < 6; q++) {
        const int slot = q < NREQ ? q : 1;
        if (q == NREQ) /* the second's tag given back, its slot the sixth's */
            assert_int_equal(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
        assert_int_equal(ALLTOALLV_INIT(snd + q * P, cnt, dsp, MPI_INT, rcv + q * P, cnt, dsp,
                                        MPI_INT, c, MPI_INFO_NULL, &reqs[slot]),
                         MPI_SUCCESS);
    }
    for (int start = 0; start < 2; start++) {
        memset(rcv, 0, (size_t)6 * P * sizeof(int));
        assert_int_equal(MPI_Startall(NREQ, reqs), MPI_SUCCESS);
        assert_int_equal(MPI_Waitall(NREQ, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        for (int q = 0; q < NREQ; q++) {
            const int *sq = snd + data[q] * P;
            PMPI_Alltoallv(sq, cnt, dsp, MPI_INT, ref, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
            ok &= th_same_bytes(rcv + data[q] * P, ref, (size_t)P * sizeof(int),
                                "a live request");
        }
    }
    for (int q = 0; q < NREQ; q++)
        MPI_Request_free(&reqs[q]);
    MPI_Comm_free(&c);
    free(cnt);
    free(dsp);
    free(snd);
    free(rcv);
    free(ref);
    assert_true(th_all(ok, MPI_COMM_WORLD));
#endif
}

/* ------------------------------------------------------------------ */
/* shm's runs without the window, in every form                        */
/* ------------------------------------------------------------------ */

/* Call c of test_shm_runs: the bytes rank i sends rank j (shm:large=64:
 * blocks under 64 bytes go through the window, the others point-to-point). */
static int run_bytes(int c, int i, int j)
{
    if (c < 500) /* empty: runs of 16 to 256 calls; one call of window blocks in a run */
        return c == 250 ? 40 : 0;
    if (c < 800) /* window blocks: the run under way carries the first, the next call
                    through the window ends it */
        return 40;
    if (c < 860) /* every block point-to-point: runs again, begun by a blocking call */
        return 100;
    if (c < 960) /* window blocks again */
        return 40;
    switch (c % 4) { /* a mix: some calls of both kinds of block go through the window */
    case 0: return 0;
    case 3: return 100;
    default: return (i + j + c) % 3 ? 40 : 100;
    }
}

enum { RUN_CALLS = 1040, RUN_SLOTS = 3, RUN_N = 100 };

/* The buffers of one call in flight. */
typedef struct run_slot {
    int *sc, *rc, *displs;
    unsigned char *sb, *rb;
    MPI_Request req;
    int call;
} run_slot;

static void run_slot_alloc(run_slot *s)
{
    const int P = th_size();
    s->sc = malloc(3 * (size_t)P * sizeof(int));
    s->sb = malloc(2 * (size_t)P * RUN_N);
    assert_true(s->sc && s->sb);
    s->rc = s->sc + P;
    s->displs = s->sc + 2 * P;
    s->rb = s->sb + (size_t)P * RUN_N;
    s->req = MPI_REQUEST_NULL;
}

static void run_slot_free(run_slot *s)
{
    free(s->sc);
    free(s->sb);
}

static void run_slot_fill(run_slot *s, int c)
{
    const int P = th_size(), me = th_rank();
    s->call = c;
    for (int j = 0; j < P; j++) {
        s->sc[j] = run_bytes(c, me, j);
        s->rc[j] = run_bytes(c, j, me);
        s->displs[j] = j * RUN_N;
        memset(s->sb + (size_t)j * RUN_N, (16 * me + j + c) & 0xff, RUN_N);
    }
    memset(s->rb, 0xff, (size_t)P * RUN_N);
}

/* Every block whole, and nothing written past it (nothing at all where the
 * call is empty). */
static int run_slot_ok(const run_slot *s)
{
    const int P = th_size(), me = th_rank(), c = s->call;
    int ok = 1;
    for (int j = 0; j < P && ok; j++)
        for (int b = 0; b < RUN_N && ok; b++)
            ok = s->rb[(size_t)j * RUN_N + b] ==
                 (b < run_bytes(c, j, me) ? (unsigned char)((16 * j + me + c) & 0xff) : 0xff);
    if (!ok)
        fprintf(stderr, "# shm runs, call %d: rank %d got a wrong block\n", c, me);
    return ok;
}

static int run_start(run_slot *s, int c)
{
    run_slot_fill(s, c);
    return coltune_ialltoallv("shm:large=64", s->sb, s->sc, s->displs, MPI_BYTE, s->rb, s->rc,
                              s->displs, MPI_BYTE, MPI_COMM_WORLD, &s->req);
}

/*
 * shm's runs without the window (alltoallv_shm.c): once an Alltoallv's
 * exchange put no byte in the window, its blocks all empty or all
 * point-to-point, the next calls skip it, in runs that double up to 256
 * calls, and a request's call in a run leaves the window's queue at once.
 * 1040 calls whose blocks change (run_bytes), as MPI_Ialltoallv, three at a
 * time now and then (completed in reverse order), blocking every eleventh
 * call, and persistent requests of empty and of point-to-point blocks
 * started beside a call of the same kind (by MPI_Waitall): every block
 * whole on every rank, nothing written where nothing was sent. Following
 * the runs as alltoallv_shm.c keeps them (the same on every P > 2): runs of
 * 16 to 256 calls; over 300 calls carry window blocks in a run (call 250 and
 * the first of 500 - 800); a blocking call begins a run (call 800); calls
 * with both kinds of block go through the window (calls 977, 978, 1029,
 * 1030). With COLTUNE_SHM_WINDOW=64 (nbc.sh) a window call at P = 4 runs in
 * two rounds (3 blocks of 40 bytes).
 */
static void test_shm_runs(void **state)
{
    (void)state;
    const int P = th_size();
    run_slot slot[RUN_SLOTS];
    int ok = 1;
    for (int k = 0; k < RUN_SLOTS; k++)
        run_slot_alloc(&slot[k]);
#if HAVE_INIT
    /* persistent requests of calls 0 (empty) and 800 (point-to-point), in
     * slots of their own */
    run_slot pers[2];
    for (int k = 0; k < 2; k++) {
        run_slot_alloc(&pers[k]);
        run_slot_fill(&pers[k], k == 0 ? 0 : 800);
        assert_int_equal(coltune_alltoallv_init("shm:large=64", pers[k].sb, pers[k].sc,
                                                pers[k].displs, MPI_BYTE, pers[k].rb,
                                                pers[k].rc, pers[k].displs, MPI_BYTE,
                                                MPI_COMM_WORLD, MPI_INFO_NULL, &pers[k].req),
                         MPI_SUCCESS);
    }
#endif
    for (int c = 0; c < RUN_CALLS;) {
        if (c % 11 == 5 || c == 800) { /* blocking */
            run_slot_fill(&slot[0], c);
            assert_int_equal(coltune_alltoallv("shm:large=64", slot[0].sb, slot[0].sc,
                                               slot[0].displs, MPI_BYTE, slot[0].rb,
                                               slot[0].rc, slot[0].displs, MPI_BYTE,
                                               MPI_COMM_WORLD),
                             MPI_SUCCESS);
            ok &= run_slot_ok(&slot[0]);
            c++;
            continue;
        }
#if HAVE_INIT
        if (c % 13 == 0 && (c < 500 || (c >= 800 && c < 860))) {
            /* a persistent request with a call of its kind beside it */
            run_slot *p = &pers[c < 500 ? 0 : 1];
            MPI_Request both[2];
            memset(p->rb, 0xff, (size_t)P * RUN_N);
            assert_int_equal(MPI_Start(&p->req), MPI_SUCCESS);
            assert_int_equal(run_start(&slot[0], c), MPI_SUCCESS);
            both[0] = p->req;
            both[1] = slot[0].req;
            assert_int_equal(MPI_Waitall(2, both, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            ok &= run_slot_ok(p) && run_slot_ok(&slot[0]);
            c++;
            continue;
        }
#endif
        const int n = c % 7 == 3 && c + RUN_SLOTS <= RUN_CALLS ? RUN_SLOTS : 1;
        for (int k = 0; k < n; k++)
            assert_int_equal(run_start(&slot[k], c + k), MPI_SUCCESS);
        for (int k = n - 1; k >= 0; k--) {
            assert_int_equal(MPI_Wait(&slot[k].req, MPI_STATUS_IGNORE), MPI_SUCCESS);
            ok &= run_slot_ok(&slot[k]) && slot[k].req == MPI_REQUEST_NULL;
        }
        c += n;
    }
#if HAVE_INIT
    for (int k = 0; k < 2; k++) {
        MPI_Request_free(&pers[k].req);
        run_slot_free(&pers[k]);
    }
#endif
    for (int k = 0; k < RUN_SLOTS; k++)
        run_slot_free(&slot[k]);
    assert_true(th_all(ok, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    th_init(&argc, &argv);
    if (getenv("TEST_TAGS_HELD") != NULL) {
        struct CMUnitTest only[] = {cmocka_unit_test(test_req_persistent_tags_held)};
        const int failed = th_run("nbc", only, 1);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    if (getenv("TEST_TAG_WRAP") != NULL) {
        struct CMUnitTest only[] = {cmocka_unit_test(test_req_persistent_tags),
                                    cmocka_unit_test(test_req_persistent_tag_reuse)};
        const int failed = th_run("nbc", only, 2);
        MPI_Finalize();
        return failed ? 1 : 0;
    }
    struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_algorithm), cmocka_unit_test(test_large_blocks),
        cmocka_unit_test(test_req_completion_calls),
        cmocka_unit_test(test_req_reverse_and_many),
        cmocka_unit_test(test_req_many_served_while_blocked),
        cmocka_unit_test(test_req_library_served_while_waiting),
        cmocka_unit_test(test_req_blocking_between),
        cmocka_unit_test(test_req_comm_freed_pending),
        cmocka_unit_test(test_req_wrong_use), cmocka_unit_test(test_req_persistent),
        cmocka_unit_test(test_req_persistent_apart),
        cmocka_unit_test(test_req_persistent_window_kept),
        cmocka_unit_test(test_req_persistent_comm_freed),
        cmocka_unit_test(test_persistent_learns), cmocka_unit_test(test_shm_runs)};
    int failed = th_run("nbc", tests, sizeof tests / sizeof tests[0]);
    MPI_Finalize();
    return failed ? 1 : 0;
}
