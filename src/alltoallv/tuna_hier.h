/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuna_hier.h - what the two hierarchical TuNA_l^g variants share ([Fan2024]
 * section IV): node tables, the intra-node TuNA phase, and the buffer G that
 * holds, after that phase, the blocks this rank forwards to other nodes.
 *
 * Nodes come from ctx->topo and may be of different sizes and hold
 * non-consecutive ranks: everything works on the node-ordered view
 * rank_at[node_start[m] + l] = rank with local index l on node m.
 *
 * Handlers. Rank (n, h) (node n, local index h, its node holding Qn ranks)
 * forwards to every rank (m, l') of another node with l' mod Qn == h: with
 * nodes of equal size that is the rank of equal local index (IV-A b); a
 * short node's ranks each serve several local indices of a larger node.
 * The intra-node TuNA carries, through member l, the bundle of blocks for all
 * ranks rank l handles, one position per (node m, k) with l' = l + k Qn.
 */
#ifndef CT_TUNA_HIER_H
#define CT_TUNA_HIER_H

#include "alltoallv/tuna.h"

typedef struct ct_tuna_hier {
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    size_t M;          /* global maximum block size (bytes) */
    int N, n, h, Qn, Q; /* nodes, this node, local index, its size, largest node */
    const int *node_size; /* [N] */
    int *node_start;   /* [N + 1] */
    int *rank_at;      /* [P] node-ordered ranks */
    int C, known_c;    /* bundle positions; the one for this node (k = 0) */
    int *pos_node, *pos_k; /* [C] position c is node pos_node[c], l' = l + pos_k[c] Qn */
    int *pos_d;        /* [C] index in D of the rank this rank handles there, -1: none */
    int nd;            /* D: the ranks of other nodes this rank forwards to */
    int *d_rank;       /* [nd] their ranks, in (node, k) order */
    int *d_first;      /* [N + 1] D entries on node m: d_first[m] .. d_first[m+1]-1 */
    int *gsz;          /* [nd * Qn] bytes of G block (d, j) */
    char *G;           /* nd * Qn blocks of M bytes: for D entry d, from local rank j */
    size_t *tot;       /* [nd] scratch for the inter-node phase */
    int *blens;        /* [Q] */
    MPI_Aint *displs;  /* [Q] */
    MPI_Datatype *rtypes; /* [N] coalesced: node m's message as it lands, made once (or null) */
} ct_tuna_hier;

static inline int ct_tuna_hier_rank(const ct_tuna_hier *H, int m, int l)
{
    return H->rank_at[H->node_start[m] + l];
}

/* Block of G for D entry d from local rank j of this node. */
static inline char *ct_tuna_hier_gblock(const ct_tuna_hier *H, int d, int j)
{
    return H->G + ((size_t)d * H->Qn + j) * H->M;
}

/* The inter-node phase of a variant, described once G is filled (after the
 * intra-node phase: the sizes of what it forwards are known only then) as
 * the rounds of s (core/sched.h), which it reserves: one round per batch. */
typedef int (*ct_tuna_inter_fn)(ct_tuna_hier *H, int block_count, ct_sched *s);

/* Node tables, intra-node TuNA with radix, then inter(H, block_count) run
 * to completion: the blocking call. */
int ct_tuna_hier_run(const ct_alltoallv_args *a, ct_ctx *ctx, int radix, int block_count,
                     ct_tuna_inter_fn inter);
/* The same as one step of a request's schedule s, made here once with
 * memory of its own: at each start the intra-node TuNA (ct_tuna_run), then
 * the inter-node rounds, built into a schedule whose memory is kept. */
int ct_tuna_hier_build(const ct_alltoallv_args *a, ct_ctx *ctx, int radix, int block_count,
                       ct_tuna_inter_fn inter, ct_sched *s);
/* Frees the receive types the inter-node phase made (H->rtypes). */
void ct_tuna_hier_free_types(ct_tuna_hier *H);
/* The inter-node phase alone, blocking (node_aware's lanes): built in a
 * buffer of the context and run; the receive types made for it freed. */
int ct_tuna_hier_inter_run(ct_tuna_hier *H, int block_count, ct_tuna_inter_fn inter);

/* The parts of ct_tuna_hier_run an intra-node phase of its own needs:
 * begin() finds M (H->M == 0: every block is empty, nothing to do) and the
 * bytes of the tables and G (*own); tables() lays them out at the start of
 * scratch (own bytes) and fills them. */
int ct_tuna_hier_begin(ct_tuna_hier *H, const ct_alltoallv_args *a, ct_ctx *ctx, size_t *own);
void ct_tuna_hier_tables(ct_tuna_hier *H, char *scratch);

/* The inter-node phase of coalesced TuNA_l^g (Algorithm 3), for G filled. */
int ct_tuna_hier_coalesced_inter(ct_tuna_hier *H, int block_count, ct_sched *s);

#endif
