/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_registry.h - the registry entries of the Alltoallv algorithms,
 * included twice by src/algorithms.c: once with CT_A2A_COLL defined as
 * CT_COLL_ALLTOALLV and once as CT_COLL_ALLTOALL. Every Alltoallv algorithm
 * also serves MPI_Alltoall (uniform blocks are a special case of its input)
 * under the same name, parameters and restrictions; the two collectives keep
 * separate entries so rules, statistics and logs tell them apart.
 * No include guard: that is the point.
 */
#ifndef CT_A2A_COLL
#error "define CT_A2A_COLL before including alltoallv_registry.h"
#endif
    {
        .name = "pmpi",
        .coll = CT_A2A_COLL,
        .summary = "forward to the MPI library's own routine for the call (PMPI_Alltoallv, "
                   "PMPI_Alltoall or their large-count forms)",
        .run.alltoallv = ct_alltoallv_pmpi,
    },
    {
        .name = "pairwise",
        .coll = CT_A2A_COLL,
        .summary = "pairwise exchange: one send and one receive per step "
                   "([Namugwanya2023] Alg. 1)",
        .run.alltoallv = ct_alltoallv_pairwise,
    },
    {
        .name = "nonblocking",
        .coll = CT_A2A_COLL,
        .summary = "all sends and receives posted in spread-out order, one Waitall "
                   "([Namugwanya2023] Alg. 2; [Fan2024] II(d))",
        .run.alltoallv = ct_alltoallv_nonblocking,
    },
    {
        .name = "linear",
        .coll = CT_A2A_COLL,
        .summary = "all sends and receives posted in ascending rank order "
                   "(Open MPI basic linear; [Fan2024] II(d))",
        .run.alltoallv = ct_alltoallv_linear,
    },
    {
        .name = "scattered",
        .coll = CT_A2A_COLL,
        .summary = "spread-out order in batches of block_count peers, waiting on each "
                   "batch (MPICH scattered; [Fan2024] II(d))",
        .nparams = 1,
        .params = {{"block_count", K(1), EXPR(P, 0), K(32),
                    "peers per batch (values above P act as P)"}},
        .run.alltoallv = ct_alltoallv_scattered,
    },
    {
        .name = "multipair_blocking",
        .coll = CT_A2A_COLL,
        .summary = "pairwise order, stride exchanges in flight, Waitall per group "
                   "([Namugwanya2023] Alg. 3)",
        .nparams = 1,
        .params = {{"stride", K(1), EXPR(P, 0), K(8), "exchanges per group"}},
        .run.alltoallv = ct_alltoallv_multipair_blocking,
    },
    {
        .name = "multipair_waitany",
        .coll = CT_A2A_COLL,
        .summary = "pairwise order, stride exchanges in flight, refilled on Waitany "
                   "([Namugwanya2023] Alg. 4)",
        .nparams = 1,
        .params = {{"stride", K(1), EXPR(P, 0), K(8), "exchanges in flight"}},
        .run.alltoallv = ct_alltoallv_multipair_waitany,
    },
    {
        .name = "multipair_testany",
        .coll = CT_A2A_COLL,
        .summary = "pairwise order, stride exchanges in flight, refilled on Testany "
                   "([Namugwanya2023] Alg. 5)",
        .nparams = 1,
        .params = {{"stride", K(1), EXPR(P, 0), K(8), "exchanges in flight"}},
        .run.alltoallv = ct_alltoallv_multipair_testany,
    },
    {
        .name = "tuna",
        .coll = CT_A2A_COLL,
        .summary = "tunable-radix non-uniform Bruck: metadata then data per round, tight "
                   "temporary buffer ([Fan2024] III, Alg. 1)",
        .nparams = 1,
        .params = {{"radix", K(2), EXPR(P, 0), K(2),
                    "Bruck radix: 2 fewest rounds, sqrt balanced, P-1 or P linear"}},
        /* none: any type, any offsets, and no collective before it (no M) */
        .run.alltoallv = ct_alltoallv_tuna,
    },
    {
        .name = "tuna_hier_coalesced",
        .coll = CT_A2A_COLL,
        .summary = "intra-node TuNA, then inter-node scattered with one message of Q blocks "
                   "per node pair ([Fan2024] IV, Alg. 3)",
        .nparams = 2,
        .params = {{"radix", K(2), EXPR(Q, 1), K(2),
                    "intra-node TuNA radix (values >= Q act as Q; Q+1 lets Q=1 run)"},
                   {"block_count", K(1), EXPR(N, 0), K(1),
                    "node pairs per batch (values above N-1 act as N-1)"}},
        .restrictions = CT_A_BYTES | CT_R_INT_OFFSETS,
        .run.alltoallv = ct_alltoallv_tuna_hier_coalesced,
    },
    {
        .name = "tuna_hier_staggered",
        .coll = CT_A2A_COLL,
        .summary = "intra-node TuNA, then inter-node scattered with one block per step "
                   "([Fan2024] IV, Alg. 2)",
        .nparams = 2,
        .params = {{"radix", K(2), EXPR(Q, 1), K(2),
                    "intra-node TuNA radix (values >= Q act as Q; Q+1 lets Q=1 run)"},
                   {"block_count", K(1), EXPR(NM1_Q, 1), K(1),
                    "blocks per batch (values above (N-1)*Q act as (N-1)*Q)"}},
        .restrictions = CT_A_BYTES | CT_R_INT_OFFSETS,
        .run.alltoallv = ct_alltoallv_tuna_hier_staggered,
    },
    {
        .name = "shm",
        .coll = CT_A2A_COLL,
        .summary = "through a shared-memory window: each rank copies its blocks in, one "
                   "synchronisation, each copies its blocks out (bounded window, rounds); "
                   "large blocks point-to-point",
        .nparams = 1,
        .params = {{"large", K(0), K(1L << 30), K(49152),
                    "blocks of at least this many bytes go point-to-point, copied once by "
                    "the MPI library instead of twice through the window (0: none)"}},
        .restrictions = CT_R_SHARED_MEMORY,
        .run.alltoallv = ct_alltoallv_shm,
    },
    {
        .name = "node_aware",
        .coll = CT_A2A_COLL,
        .summary = "each node gathers its blocks per destination through its shared-memory "
                   "window, then coalesced messages between ranks of equal local index "
                   "(every rank, or a few leaders that deliver through the window): TuNA "
                   "over the nodes ([Fan2024] III) where nodes are equal, else one message "
                   "per node pair (IV-B, Alg. 3)",
        .nparams = 3,
        .params = {{"radix", K(2), EXPR(N, 1), K(2),
                    "TuNA radix over the nodes (values >= N-1 send to every node at once; "
                    "N+1 lets N=1 run)"},
                   {"block_count", K(1), EXPR(N, 0), EXPR(N, 0),
                    "nodes of different sizes: node pairs per batch (values above N-1 act "
                    "as N-1)"},
                   {"leaders", K(1), EXPR(Q, 0), EXPR(Q, 0),
                    "equal nodes: ranks per node that exchange between nodes (Q: every "
                    "rank; fewer: they carry the others' blocks, one more synchronisation "
                    "in the node)"}},
        .restrictions = CT_A_BYTES | CT_R_NODE_SHARED_MEMORY,
        .run.alltoallv = ct_alltoallv_node_aware,
    },
