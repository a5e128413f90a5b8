/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_tuna_hier.c - the part of hierarchical TuNA_l^g ([Fan2024]
 * section IV-A) that its staggered and coalesced variants share: node
 * tables, and the intra-node phase.
 *
 * Intra-node phase (IV-A a, the "implicit" strategy of Fig. 4b): the Q ranks
 * of a node run one TuNA among themselves (ct_tuna_exchange) on bundles: the
 * bundle a rank sends through local member l holds its blocks for every rank
 * l handles on every node (tuna_hier.h). Blocks for this node land in the
 * receive buffer; blocks for other nodes land in G, one M-byte block per
 * (destination, local source), ready for the inter-node phase of the variant
 * (alltoallv_tuna_hier_staggered.c, alltoallv_tuna_hier_coalesced.c).
 *
 * The inter-node phase of each variant is described as rounds of a
 * schedule (core/sched.h), one per batch, once the intra-node phase has
 * filled G: the sizes it forwards are known only then. The blocking call
 * runs it at once; a request (ct_tuna_hier_build) takes the intra-node
 * TuNA on without blocking (ct_tuna_run), then builds the batches into
 * memory it keeps and runs them as its tests and waits find them complete.
 *
 * Memory: G holds about (N - 1) Q blocks of M bytes (M: the largest block of
 * the call, which the decision's allreduce provides), the intra-node T at
 * most (Q - K - 1) N blocks; the node tables are O(P) integers.
 */
#include "alltoallv/tuna_hier.h"

#include <stdlib.h>
#include <string.h>


static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Block c of the bundle this rank sends through local member j. */
static const char *hier_source(void *arg, int j, int c, size_t *bytes)
{
    const ct_tuna_hier *H = arg;
    const int m = H->pos_node[c], l = j + H->pos_k[c] * H->Qn;
    if (l >= H->node_size[m]) { /* member j handles no rank there */
        *bytes = 0;
        return NULL;
    }
    const int d = ct_tuna_hier_rank(H, m, l);
    *bytes = (size_t)ct_vec_at(&H->a->sendcounts, d);
    return (const char *)H->a->sendbuf + ct_vec_at(&H->a->sdispls, d);
}

/* Block c of the bundle from local member j, arrived at this rank. */
static char *hier_target(void *arg, int j, int c, size_t bytes)
{
    ct_tuna_hier *H = arg;
    if (c == H->known_c) { /* for this rank itself */
        const int src = ct_tuna_hier_rank(H, H->n, j);
        return bytes <= (size_t)ct_vec_at(&H->a->recvcounts, src)
                   ? (char *)H->a->recvbuf + ct_vec_at(&H->a->rdispls, src)
                   : NULL;
    }
    const int d = H->pos_d[c];
    if (d < 0 || bytes > H->M)
        return NULL;
    H->gsz[d * H->Qn + j] = (int)bytes; /* <= M, which fits an int (CT_R_INT_OFFSETS) */
    return ct_tuna_hier_gblock(H, d, j);
}

/* Bytes of the block from local member j for this rank itself. */
static size_t hier_known(void *arg, int j, int c)
{
    const ct_tuna_hier *H = arg;
    (void)c; /* known_c */
    return (size_t)ct_vec_at(&H->a->recvcounts, ct_tuna_hier_rank(H, H->n, j));
}

/* The largest block (bytes) any rank sends in the call, for G: from the
 * decision's allreduce (which CT_R_INT_OFFSETS makes happen), else one of
 * its own. */
static int max_block(const ct_alltoallv_args *a, ct_ctx *ctx, size_t *M)
{
    int rc = MPI_SUCCESS;
    long local = 0, global;
    if (a->msg_size >= 0) {
        *M = (size_t)a->msg_size;
        return MPI_SUCCESS;
    }
    for (int j = 0; j < ctx->size; j++)
        if (ct_vec_at(&a->sendcounts, j) > local)
            local = (long)ct_vec_at(&a->sendcounts, j);
    CT_CALL(PMPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_MAX, ctx->comm));
    *M = (size_t)global;
out:
    return rc;
}

/* Counts C and nd, then carves the tables from base (NULL: only measures). */
static size_t hier_layout(ct_tuna_hier *H, char *base, int P)
{
    size_t off = 0;
    H->C = H->nd = 0;
    for (int m = 0; m < H->N; m++) {
        const int Qm = H->node_size[m];
        H->C += ceil_div(Qm, H->Qn);
        if (m != H->n && H->h < Qm)
            H->nd += ceil_div(Qm - H->h, H->Qn); /* l' = h, h + Qn, ... below Qm */
    }
    CT_CARVE(base, off, H->node_start, int, H->N + 1);
    CT_CARVE(base, off, H->rank_at, int, P);
    CT_CARVE(base, off, H->pos_node, int, H->C);
    CT_CARVE(base, off, H->pos_k, int, H->C);
    CT_CARVE(base, off, H->pos_d, int, H->C);
    CT_CARVE(base, off, H->d_rank, int, H->nd);
    CT_CARVE(base, off, H->d_first, int, H->N + 1);
    CT_CARVE(base, off, H->gsz, int, (size_t)H->nd * H->Qn);
    CT_CARVE(base, off, H->tot, size_t, H->nd);
    CT_CARVE(base, off, H->blens, int, H->Q);
    CT_CARVE(base, off, H->displs, MPI_Aint, H->Q);
    CT_CARVE(base, off, H->rtypes, MPI_Datatype, H->N);
    CT_CARVE(base, off, H->G, char, (size_t)H->nd * H->Qn * H->M);
    return off;
}

/* Fills the node-ordered ranks, bundle positions and D. */
static void hier_tables(ct_tuna_hier *H, int P)
{
    const ct_topo *topo = &H->ctx->topo;
    int c = 0;
    H->node_start[0] = 0;
    for (int m = 0; m < H->N; m++)
        H->node_start[m + 1] = H->node_start[m] + H->node_size[m];
    for (int r = 0; r < P; r++)
        H->rank_at[H->node_start[topo->node_of[r]] + topo->local_of[r]] = r;
    H->nd = 0;
    for (int m = 0; m < H->N; m++) {
        H->d_first[m] = H->nd;
        for (int k = 0; k < ceil_div(H->node_size[m], H->Qn); k++, c++) {
            const int l = H->h + k * H->Qn; /* the rank of node m this rank handles */
            H->pos_node[c] = m;
            H->pos_k[c] = k;
            H->pos_d[c] = -1;
            if (m == H->n)
                H->known_c = c; /* k = 0 only: this node has Qn ranks */
            else if (l < H->node_size[m]) {
                H->pos_d[c] = H->nd;
                H->d_rank[H->nd++] = ct_tuna_hier_rank(H, m, l);
            }
        }
    }
    H->d_first[H->N] = H->nd;
    memset(H->gsz, 0, (size_t)H->nd * H->Qn * sizeof(int));
    for (int m = 0; m < H->N; m++)
        H->rtypes[m] = MPI_DATATYPE_NULL;
}

void ct_tuna_hier_free_types(ct_tuna_hier *H)
{
    for (int m = 0; m < H->N; m++)
        if (H->rtypes[m] != MPI_DATATYPE_NULL)
            (void)PMPI_Type_free(&H->rtypes[m]);
}

int ct_tuna_hier_begin(ct_tuna_hier *H, const ct_alltoallv_args *a, ct_ctx *ctx, size_t *own)
{
    int rc;
    *H = (ct_tuna_hier){.a = a, .ctx = ctx};
    *own = 0;
    CT_CALL(max_block(a, ctx, &H->M));
    if (H->M == 0) /* every block is empty, as every rank knows */
        return MPI_SUCCESS;
    H->N = ctx->topo.N;
    H->n = ctx->topo.node;
    H->h = ctx->topo.local_rank;
    H->Q = ctx->topo.Q;
    H->node_size = ctx->topo.node_size;
    H->Qn = H->node_size[H->n];
    *own = hier_layout(H, NULL, ctx->size);
out:
    return rc;
}

void ct_tuna_hier_tables(ct_tuna_hier *H, char *scratch)
{
    hier_layout(H, scratch, H->ctx->size);
    hier_tables(H, H->ctx->size);
}

/* The intra-node group: this node's ranks in local order (IV-A a), for
 * H's tables (rank_of is set once they are filled). */
static ct_tuna_group hier_group(ct_tuna_hier *H)
{
    return (ct_tuna_group){.arg = H, .source = hier_source, .target = hier_target,
                           .known = hier_known, .size = H->Qn, .index = H->h, .C = H->C,
                           .known_n = 1};
}

static void hier_group_ranks(const ct_tuna_hier *H, ct_tuna_group *grp)
{
    grp->rank_of = H->rank_at + H->node_start[H->n];
    grp->known_c = H->known_c;
}

int ct_tuna_hier_inter_run(ct_tuna_hier *H, int block_count, ct_tuna_inter_fn inter)
{
    int rc;
    ct_sched s;
    ct_sched_prepare(&s, H->ctx, CT_TAG_ALLTOALLV, 0);
    rc = inter(H, block_count, &s);
    if (rc == MPI_SUCCESS)
        rc = ct_sched_run(&s);
    ct_tuna_hier_free_types(H);
    return rc;
}

int ct_tuna_hier_run(const ct_alltoallv_args *a, ct_ctx *ctx, int radix, int block_count,
                     ct_tuna_inter_fn inter)
{
    int rc;
    ct_tuna_hier H;
    size_t own, bytes;
    char *scratch;
    CT_CALL(ct_tuna_hier_begin(&H, a, ctx, &own));
    if (H.M == 0)
        return MPI_SUCCESS;
    ct_tuna_group grp = hier_group(&H);
    bytes = own + ct_tuna_scratch_bytes(&grp, radix);
    scratch = ct_ctx_scratch(ctx, bytes);
    if (scratch == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ctx->call_extra += bytes;
    ct_tuna_hier_tables(&H, scratch);
    hier_group_ranks(&H, &grp);
    /* A block too long for this rank's buffer is its error alone: it still
     * takes part in the inter-node phase, so that no other node waits. */
    rc = ct_tuna_exchange(&grp, ctx, radix, scratch + own);
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE) && H.N > 1) {
        const int inter_rc = ct_tuna_hier_inter_run(&H, block_count, inter);
        rc = rc != MPI_SUCCESS ? rc : inter_rc;
    }
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms: one step                      */
/* ------------------------------------------------------------------ */

/* A request's call: its own copy of the description, tables and G, the
 * intra-node run, and the inter-node rounds (their memory kept). */
typedef struct hier_call {
    ct_alltoallv_args args;
    ct_tuna_hier H;
    char *tables;        /* H's tables and G */
    ct_tuna_run *run;
    ct_sched inter;
    ct_tuna_inter_fn build;
    int block_count;
    int intra_done;
    int intra_rc;        /* MPI_ERR_TRUNCATE: returned once the inter-node phase ends */
} hier_call;

static int step_start(void *state)
{
    hier_call *c = state;
    ct_tuna_hier *H = &c->H;
    memset(H->gsz, 0, (size_t)H->nd * H->Qn * sizeof(int));
    c->intra_done = 0;
    c->intra_rc = MPI_SUCCESS;
    return ct_tuna_run_start(c->run);
}

/* Takes the call on: the intra-node TuNA, then the inter-node rounds, built
 * once G is filled. */
static int step_advance(hier_call *c, int block, int *done)
{
    int rc;
    if (!c->intra_done) {
        rc = ct_tuna_run_advance(c->run, block, done);
        /* a block too long for its buffer is this rank's error alone: it
         * still takes part in the inter-node phase (see ct_tuna_hier_run) */
        if (!*done || (rc != MPI_SUCCESS && rc != MPI_ERR_TRUNCATE))
            return rc;
        c->intra_done = 1;
        c->intra_rc = rc;
        if (c->H.N > 1) {
            CT_CALL(c->build(&c->H, c->block_count, &c->inter));
            CT_CALL(ct_sched_start(&c->inter));
        }
    }
    if (block) {
        *done = 1;
        rc = ct_sched_wait(&c->inter);
    } else {
        rc = ct_sched_test(&c->inter, done);
    }
    return rc == MPI_SUCCESS && *done ? c->intra_rc : rc;
out:
    *done = 1;
    return rc;
}

static int step_test(void *state, int *done) { return step_advance(state, 0, done); }

static int step_wait(void *state)
{
    int done;
    return step_advance(state, 1, &done);
}

static void step_free(void *state)
{
    hier_call *c = state;
    if (c->tables != NULL)
        ct_tuna_hier_free_types(&c->H);
    ct_tuna_run_free(c->run);
    ct_sched_free(&c->inter);
    free(c->tables);
    free(c);
}

static const ct_step hier_step = {step_start, step_test, step_wait, step_free};

/*
 * What moves when: at the start, the own block and the intra-node TuNA's
 * first digit; at each test or wait, its later digits as their messages
 * arrive, then, once G holds what this rank forwards, the inter-node
 * batches, each posted when the one before has completed; at completion,
 * the last batch. M (the largest block, for G) is the decision's, agreed in
 * the call (CT_R_INT_OFFSETS), or asked here, at the init.
 */
int ct_tuna_hier_build(const ct_alltoallv_args *a, ct_ctx *ctx, int radix, int block_count,
                       ct_tuna_inter_fn inter, ct_sched *s)
{
    int rc;
    size_t own;
    hier_call *c = calloc(1, sizeof *c);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->args = *a;
    c->build = inter;
    c->block_count = block_count;
    ct_sched_prepare(&c->inter, ctx, s->tag, 1);
    CT_CALL(ct_tuna_hier_begin(&c->H, &c->args, ctx, &own));
    if (c->H.M == 0) { /* every block empty on every rank: nothing to do */
        step_free(c);
        return ct_sched_reserve(s, 1, 1);
    }
    ct_tuna_group grp = hier_group(&c->H);
    c->tables = malloc(own > 0 ? own : 1);
    if (c->tables == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ct_tuna_hier_tables(&c->H, c->tables);
    hier_group_ranks(&c->H, &grp);
    CT_CALL(ct_tuna_run_new(&grp, s->comm, radix, s->tag, &c->run));
    CT_CALL(ct_sched_reserve(s, 1, 1));
    ct_sched_step(s, &hier_step, c, sizeof *c + own + ct_tuna_run_bytes(c->run));
    return MPI_SUCCESS;
out:
    step_free(c);
    return rc;
}
