/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * algorithms.c - the one registry of coltune's algorithms.
 *
 * Adding an algorithm is one file under src/<collective>/ plus one entry here:
 * its name (as written in rules files and COLTUNE_* variables), parameters
 * with ranges and defaults, and restrictions the selector checks before the
 * algorithm ever runs.
 */
#include "algorithms.h"

#include <stdio.h>
#include <string.h>

static const char *const coll_names[CT_COLL_COUNT] = {
    [CT_COLL_ALLTOALLV] = "alltoallv",
    [CT_COLL_ALLTOALL] = "alltoall",
    [CT_COLL_ALLGATHER_INTER] = "allgather_inter",
    [CT_COLL_ALLGATHERV_INTER] = "allgatherv_inter",
    [CT_COLL_ALLTOALL_CRS] = "alltoall_crs",
    [CT_COLL_ALLTOALLV_CRS] = "alltoallv_crs",
};

const char *ct_coll_name(ct_coll coll)
{
    return (coll >= 0 && coll < CT_COLL_COUNT) ? coll_names[coll] : "?";
}

int ct_coll_msg_size_known(ct_coll coll)
{
    return coll == CT_COLL_ALLTOALL || coll == CT_COLL_ALLGATHER_INTER;
}

int ct_coll_from_name(const char *name, size_t len, ct_coll *out)
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (strlen(coll_names[c]) == len && strncmp(coll_names[c], name, len) == 0) {
            *out = (ct_coll)c;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Expressions of P, Q, N                                              */
/* ------------------------------------------------------------------ */

/* round(sqrt(x)) in integer arithmetic: the r >= 0 nearest to sqrt(x). */
static long isqrt_round(long x)
{
    if (x <= 0)
        return 0;
    long r = 0;
    while ((r + 1) * (r + 1) <= x)
        r++;
    /* r = floor(sqrt(x)); round up when x >= (r + 1/2)^2, i.e. 4x >= (2r+1)^2 */
    if (4 * x >= (2 * r + 1) * (2 * r + 1))
        r++;
    return r;
}

long ct_expr_eval(ct_expr e, const ct_shape *env)
{
    switch (e.term) {
    case CT_TERM_CONST:
        return e.offset;
    case CT_TERM_P:
        return env->P + e.offset;
    case CT_TERM_Q:
        return env->Q + e.offset;
    case CT_TERM_N:
        return env->N + e.offset;
    case CT_TERM_SQRT_P:
        return isqrt_round(env->P) + e.offset;
    case CT_TERM_SQRT_Q:
        return isqrt_round(env->Q) + e.offset;
    case CT_TERM_NM1_Q:
        return (env->N - 1) * env->Q + e.offset;
    }
    return e.offset;
}

void ct_expr_format(ct_expr e, char *buf, size_t len)
{
    static const char *const term_names[] = {
        [CT_TERM_CONST] = "",   [CT_TERM_P] = "P",          [CT_TERM_Q] = "Q",
        [CT_TERM_N] = "N",      [CT_TERM_SQRT_P] = "sqrt",  [CT_TERM_SQRT_Q] = "sqrtQ",
        [CT_TERM_NM1_Q] = "(N-1)*Q",
    };
    if (e.term == CT_TERM_CONST)
        snprintf(buf, len, "%ld", e.offset);
    else if (e.offset == 0)
        snprintf(buf, len, "%s", term_names[e.term]);
    else
        snprintf(buf, len, "%s%+ld", term_names[e.term], e.offset);
}

/* ------------------------------------------------------------------ */
/* Restrictions, by name                                               */
/* ------------------------------------------------------------------ */

static const ct_restriction_desc restriction_descs[] = {
    {CT_R_NODE_CONSECUTIVE, "node_consecutive", "the ranks of each node are consecutive"},
    {CT_R_NODE_UNIFORM, "node_uniform", "every node holds the same number of ranks"},
    {CT_R_SHARED_MEMORY, "shared_memory", "all ranks share memory (one node)"},
    {CT_R_NODE_SHARED_MEMORY, "node_shared_memory",
     "each node's ranks share memory (real nodes, or COLTUNE_PPN nodes inside one)"},
    {CT_R_CONTIG_TYPES, "contiguous_types", "send and receive datatypes are contiguous"},
    {CT_R_INT_OFFSETS, "int_offsets", "every byte offset and total fits in an int"},
    {CT_A_BYTES, "bytes", "runs on bytes: non-contiguous datatypes are packed (no restriction)"},
    {CT_A_AGREES, "agrees", "its exchange carries the validity agreement: no allreduce when "
                            "the decision needs no facts"},
};

const ct_restriction_desc *ct_restriction_at(int i)
{
    const int n = (int)(sizeof restriction_descs / sizeof restriction_descs[0]);
    return (i >= 0 && i < n) ? &restriction_descs[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* The registry                                                        */
/* ------------------------------------------------------------------ */

#define K(v) {CT_TERM_CONST, (v)}
#define EXPR(t, o) {CT_TERM_##t, (o)}

/* Shared by the Allgather and Allgatherv entries of the direct exchange. */
#define DIRECT_SUMMARY                                                                  \
    "every rank sends its block straight to every remote rank, all at once: each byte " \
    "copied once, no intra-group step (for shared memory and few nodes)"

/* Shared by the Allgather and Allgatherv entries of the shared-window exchange. */
#define SHM_SUMMARY                                                                    \
    "every rank copies its block into a shared-memory window, every rank copies the " \
    "remote blocks out, in rounds of COLTUNE_SHM_WINDOW: one node only"

/* Defaults are clamped into their range at resolve time (spec.c), so
 * block_count's default of 32 (MPICH's MPIR_CVAR_ALLTOALL_THROTTLE) means
 * min(32, P). A value given explicitly out of range is a restriction instead. */
static const ct_algorithm registry[] = {
#define CT_A2A_COLL CT_COLL_ALLTOALLV
#include "alltoallv/alltoallv_registry.h"
#undef CT_A2A_COLL
#define CT_A2A_COLL CT_COLL_ALLTOALL
#include "alltoallv/alltoallv_registry.h"
#undef CT_A2A_COLL
    {
        .name = "pmpi",
        .coll = CT_COLL_ALLGATHER_INTER,
        .summary = "forward to PMPI_Allgather (the library's root gathering, [Kang2019] "
                   "section 3.1)",
        .run.allgather = ct_allgather_inter_pmpi,
    },
    {
        .name = "pmpi",
        .coll = CT_COLL_ALLGATHERV_INTER,
        .summary = "forward to PMPI_Allgatherv (the library's root gathering, [Kang2019] "
                   "section 3.1)",
        .run.allgatherv = ct_allgatherv_inter_pmpi,
    },
    {
        .name = "segmented",
        .coll = CT_COLL_ALLGATHER_INTER,
        .summary = "larger group's blocks whole to one partner, smaller group's blocks cut "
                   "into segments over the larger group, then one intra-group allgather(v) "
                   "per group ([Kang2019] Alg. 1)",
        .nparams = 1,
        .params = {{"linear", K(0), K(1), K(0),
                    "intra-group step: 0 the MPI library's allgather(v), 1 every segment "
                    "sent to every group member at once"}},
        .restrictions = CT_A_BYTES | CT_R_INT_OFFSETS,
        .run.allgather = ct_allgather_inter_segmented,
    },
    {
        .name = "segmented",
        .coll = CT_COLL_ALLGATHERV_INTER,
        .summary = "each group's byte stream cut into equal segments, one per remote rank, "
                   "received in section 4.1 order, then one intra-group allgatherv per group "
                   "([Kang2019] Alg. 2)",
        .nparams = 1,
        .params = {{"linear", K(0), K(1), K(0),
                    "intra-group step: 0 the MPI library's allgather(v), 1 every segment "
                    "sent to every group member at once"}},
        .restrictions = CT_A_BYTES | CT_R_INT_OFFSETS,
        .run.allgatherv = ct_allgatherv_inter_segmented,
    },
    {
        .name = "direct",
        .coll = CT_COLL_ALLGATHER_INTER,
        .summary = DIRECT_SUMMARY,
        .run.allgather = ct_allgather_inter_direct,
    },
    {
        .name = "direct",
        .coll = CT_COLL_ALLGATHERV_INTER,
        .summary = DIRECT_SUMMARY,
        .run.allgatherv = ct_allgatherv_inter_direct,
    },
    {
        .name = "shm",
        .coll = CT_COLL_ALLGATHER_INTER,
        .summary = SHM_SUMMARY,
        .restrictions = CT_R_SHARED_MEMORY,
        .run.allgather = ct_allgather_inter_shm,
    },
    {
        .name = "shm",
        .coll = CT_COLL_ALLGATHERV_INTER,
        .summary = SHM_SUMMARY,
        .restrictions = CT_R_SHARED_MEMORY,
        .run.allgatherv = ct_allgatherv_inter_shm,
    },
    /* Sparse dynamic data exchange ([Geyko2023]): the same algorithms serve
     * both collectives, except rma (constant message size only). */
    {
        .name = "personalized",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "Reduce_scatter of per-destination message counts, sends, probed "
                   "receives ([Geyko2023] Alg. 1)",
        .run.sdde = ct_sdde_personalized,
    },
    {
        .name = "nonblocking",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "NBX: synchronous sends, probe loop, Ibarrier once the sends complete "
                   "([Geyko2023] Alg. 2)",
        .run.sdde = ct_sdde_nonblocking,
    },
    {
        .name = "rma",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "puts into a cached window of one slot and one flag per origin, "
                   "fence-synchronised ([Geyko2023] Alg. 3)",
        .run.sdde = ct_sdde_rma,
    },
    {
        .name = "locality_personalized",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "one aggregated message per destination node, then personalized "
                   "redistribution inside the node ([Geyko2023] Alg. 4)",
        .run.sdde = ct_sdde_locality_personalized,
    },
    {
        .name = "locality_nonblocking",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "aggregated inter-node NBX, then personalized redistribution inside "
                   "the node ([Geyko2023] Alg. 5)",
        .run.sdde = ct_sdde_locality_nonblocking,
    },
    {
        .name = "locality_dense",
        .coll = CT_COLL_ALLTOALL_CRS,
        .summary = "an aggregate to every other node and a buffer to every rank of the "
                   "node, empty or not: no reduction ([Geyko2023] Alg. 4 over lanes)",
        .restrictions = CT_A_AGREES,
        .run.sdde = ct_sdde_locality_dense,
    },
    {
        .name = "personalized",
        .coll = CT_COLL_ALLTOALLV_CRS,
        .summary = "Reduce_scatter of per-destination message counts, sends, probed "
                   "receives ([Geyko2023] Alg. 1)",
        .run.sdde = ct_sdde_personalized,
    },
    {
        .name = "nonblocking",
        .coll = CT_COLL_ALLTOALLV_CRS,
        .summary = "NBX: synchronous sends, probe loop, Ibarrier once the sends complete "
                   "([Geyko2023] Alg. 2)",
        .run.sdde = ct_sdde_nonblocking,
    },
    {
        .name = "locality_personalized",
        .coll = CT_COLL_ALLTOALLV_CRS,
        .summary = "one aggregated message per destination node, then personalized "
                   "redistribution inside the node ([Geyko2023] Alg. 4)",
        .run.sdde = ct_sdde_locality_personalized,
    },
    {
        .name = "locality_nonblocking",
        .coll = CT_COLL_ALLTOALLV_CRS,
        .summary = "aggregated inter-node NBX, then personalized redistribution inside "
                   "the node ([Geyko2023] Alg. 5)",
        .run.sdde = ct_sdde_locality_nonblocking,
    },
    {
        .name = "locality_dense",
        .coll = CT_COLL_ALLTOALLV_CRS,
        .summary = "an aggregate to every other node and a buffer to every rank of the "
                   "node, empty or not: no reduction ([Geyko2023] Alg. 4 over lanes)",
        .restrictions = CT_A_AGREES,
        .run.sdde = ct_sdde_locality_dense,
    },
};

#define REGISTRY_SIZE ((int)(sizeof registry / sizeof registry[0]))

int ct_algorithm_count(void) { return REGISTRY_SIZE; }

const ct_algorithm *ct_algorithm_at(int i)
{
    return (i >= 0 && i < REGISTRY_SIZE) ? &registry[i] : NULL;
}

int ct_algorithm_index(const ct_algorithm *alg) { return (int)(alg - registry); }

const ct_algorithm *ct_algorithm_find(ct_coll coll, const char *name, size_t len)
{
    for (int i = 0; i < REGISTRY_SIZE; i++) {
        const ct_algorithm *a = &registry[i];
        if (a->coll == coll && strlen(a->name) == len && strncmp(a->name, name, len) == 0)
            return a;
    }
    return NULL;
}

/* Collectives without an entry here fall back to "pmpi". */
static const char *const fallback_names[CT_COLL_COUNT] = {
    [CT_COLL_ALLTOALL_CRS] = "personalized",
    [CT_COLL_ALLTOALLV_CRS] = "personalized",
};

const ct_algorithm *ct_algorithm_fallback(ct_coll coll)
{
    const char *name = fallback_names[coll] ? fallback_names[coll] : "pmpi";
    return ct_algorithm_find(coll, name, strlen(name));
}
