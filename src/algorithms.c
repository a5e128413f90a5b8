/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * algorithms.c - the one registry of coltune's algorithms.
 *
 * The collectives and the entries are derived from the one list,
 * coll_list.h: adding an algorithm is one file under src/<collective>/ plus
 * one entry there: its name (as written in rules files and COLTUNE_*
 * variables), parameters with ranges and defaults, and restrictions the
 * selector checks before the algorithm ever runs.
 */
#include "algorithms.h"

#include <stdio.h>
#include <string.h>

static const char *const coll_names[CT_COLL_COUNT] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) [CT_COLL_##ID] = #name,
#include "coll_list.h"
};

const char *ct_coll_name(ct_coll coll)
{
    return (coll >= 0 && coll < CT_COLL_COUNT) ? coll_names[coll] : "?";
}

int ct_coll_msg_size_known(ct_coll coll)
{
    static const char known[CT_COLL_COUNT] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) [CT_COLL_##ID] = msg_size_known,
#include "coll_list.h"
    };
    return coll >= 0 && coll < CT_COLL_COUNT && known[coll];
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
    {CT_R_PROGRESS, "progress",
     "nonblocking forms only where the MPI library's progress engine advances coltune's "
     "schedules (Open MPI): its later rounds start as earlier ones complete"},
    {CT_R_SHARED_MEMORY, "shared_memory", "all ranks share memory (one node)"},
    {CT_R_NODE_SHARED_MEMORY, "node_shared_memory",
     "each node's ranks share memory (real nodes, or COLTUNE_PPN nodes inside one)"},
    {CT_R_INT_OFFSETS, "int_offsets", "every byte offset and total fits in an int"},
    {CT_A_BYTES, "bytes", "runs on bytes: non-contiguous datatypes are packed (no restriction)"},
    {CT_A_AGREES, "agrees", "its exchange carries the validity agreement: no allreduce when "
                            "the decision needs no facts"},
    {CT_L_ACROSS_NODES, "across_nodes",
     "COLTUNE_ADAPT tries it only on communicators spanning several nodes (no restriction)"},
    {CT_L_WARM_UP, "warm_up",
     "COLTUNE_ADAPT runs it twice before judging it: it makes state at its first call "
     "(no restriction)"},
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

/* One entry; its parameters are the initializers after the summary (none, or
 * one per ct_param_desc). */
#define ENTRY(coll_, name_, restrictions_, summary_, run_, ...)                                \
    {                                                                                         \
        .name = #name_, .coll = (coll_), .summary = summary_,                                 \
        .nparams = (int)(sizeof((ct_param_desc[]){{0}, __VA_ARGS__}) / sizeof(ct_param_desc)) \
                   - 1,                                                                       \
        .params = {__VA_ARGS__}, .restrictions = (restrictions_), run_                        \
    },
/* An algorithm that steps (CT_ALLTOALLV_STEP_ALG): its blocking run and its
 * schedule, one argument of ENTRY. */
#define RUN_AND_BUILD(name) \
    .run.alltoallv = ct_alltoallv_##name, .build.alltoallv = ct_alltoallv_##name##_build
/* The same for a neighbourhood algorithm (CT_NEIGHBOR_STEP_ALG). */
#define RUN_AND_BUILD_NEIGHBOR(name) \
    .run.neighbor = ct_neighbor_##name, .build.neighbor = ct_neighbor_##name##_build
/* The blocking calls run a schedule to its end inside the call: the
 * nonblocking forms' restriction (CT_R_PROGRESS) is not theirs. */
#define BLOCKING(r) ((r) & ~CT_R_PROGRESS)
#define IF_VARIABLE_1(...) __VA_ARGS__
#define IF_VARIABLE_0(...)

/* The entries in the order of the collectives; within a collective, in the
 * order of the list. */
static const ct_algorithm registry[] = {
#define CT_ALLTOALLV_ALG(name, r, summary, ...)                                      \
    ENTRY(CT_COLL_ALLTOALLV, name, BLOCKING(r), summary, .run.alltoallv = ct_alltoallv_##name, \
          __VA_ARGS__)
#define CT_ALLTOALLV_SPLIT_ALG(name, r, summary, ...)                                  \
    ENTRY(CT_COLL_ALLTOALLV, name, BLOCKING(r), summary,                                         \
          .build.alltoallv = ct_alltoallv_##name##_build, __VA_ARGS__)
#define CT_ALLTOALLV_STEP_ALG(name, r, summary, ...) \
    ENTRY(CT_COLL_ALLTOALLV, name, BLOCKING(r), summary, RUN_AND_BUILD(name), __VA_ARGS__)
#include "coll_list.h"
#define CT_ALLTOALLV_ALG(name, r, summary, ...)                                     \
    ENTRY(CT_COLL_ALLTOALL, name, BLOCKING(r), summary, .run.alltoallv = ct_alltoallv_##name, \
          __VA_ARGS__)
#define CT_ALLTOALLV_SPLIT_ALG(name, r, summary, ...)                                  \
    ENTRY(CT_COLL_ALLTOALL, name, BLOCKING(r), summary,                                          \
          .build.alltoallv = ct_alltoallv_##name##_build, __VA_ARGS__)
#define CT_ALLTOALLV_STEP_ALG(name, r, summary, ...) \
    ENTRY(CT_COLL_ALLTOALL, name, BLOCKING(r), summary, RUN_AND_BUILD(name), __VA_ARGS__)
#include "coll_list.h"
    /* The nonblocking forms: the library's own routine, and the algorithms
     * that split. */
    ENTRY(CT_COLL_IALLTOALLV, pmpi, 0,
          "forward to the MPI library's own routine for the call (PMPI_Ialltoallv or its "
          "large-count form)", .run.alltoallv = ct_alltoallv_pmpi, )
#define CT_ALLTOALLV_SPLIT_ALG(name, r, summary, ...)                                  \
    ENTRY(CT_COLL_IALLTOALLV, name, r, summary,                                        \
          .build.alltoallv = ct_alltoallv_##name##_build, __VA_ARGS__)
#include "coll_list.h"
    ENTRY(CT_COLL_IALLTOALL, pmpi, 0,
          "forward to the MPI library's own routine for the call (PMPI_Ialltoall or its "
          "large-count form)", .run.alltoallv = ct_alltoallv_pmpi, )
#define CT_ALLTOALLV_SPLIT_ALG(name, r, summary, ...)                                  \
    ENTRY(CT_COLL_IALLTOALL, name, r, summary,                                         \
          .build.alltoallv = ct_alltoallv_##name##_build, __VA_ARGS__)
#include "coll_list.h"
#define CT_ALLGATHER_INTER_ALG(name, r, summary, summary_v, ...)                            \
    ENTRY(CT_COLL_ALLGATHER_INTER, name, BLOCKING(r), summary,                              \
          .run.allgather = ct_allgather_inter_##name, __VA_ARGS__)                          \
    ENTRY(CT_COLL_ALLGATHERV_INTER, name, BLOCKING(r), summary_v,                           \
          .run.allgatherv = ct_allgatherv_inter_##name, __VA_ARGS__)
#include "coll_list.h"
    ENTRY(CT_COLL_IALLGATHER_INTER, pmpi, 0,
          "forward to PMPI_Iallgather (or its large-count form)",
          .run.allgather = ct_allgather_inter_pmpi, )
#define CT_ALLGATHER_INTER_SPLIT_ALG(name, r, summary, summary_v, ...)                      \
    ENTRY(CT_COLL_IALLGATHER_INTER, name, r, summary,                                       \
          .build.allgather = ct_allgather_inter_##name##_build, __VA_ARGS__)
#include "coll_list.h"
    ENTRY(CT_COLL_IALLGATHERV_INTER, pmpi, 0,
          "forward to PMPI_Iallgatherv (or its large-count form)",
          .run.allgatherv = ct_allgatherv_inter_pmpi, )
#define CT_ALLGATHER_INTER_SPLIT_ALG(name, r, summary, summary_v, ...)                      \
    ENTRY(CT_COLL_IALLGATHERV_INTER, name, r, summary_v,                                    \
          .build.allgatherv = ct_allgatherv_inter_##name##_build, __VA_ARGS__)
#include "coll_list.h"
#define CT_SDDE_ALG(name, variable, r, summary, ...) \
    ENTRY(CT_COLL_ALLTOALL_CRS, name, r, summary, .run.sdde = ct_sdde_##name, __VA_ARGS__)
#include "coll_list.h"
#define CT_SDDE_ALG(name, variable, r, summary, ...)                              \
    IF_VARIABLE_##variable(ENTRY(CT_COLL_ALLTOALLV_CRS, name, r, summary,          \
                                 .run.sdde = ct_sdde_##name, __VA_ARGS__))
#include "coll_list.h"
#define CT_NEIGHBOR_ALG(name, r, summary, ...)                                              \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALLV, name, BLOCKING(r), summary,                          \
          .run.neighbor = ct_neighbor_##name, __VA_ARGS__)
#define CT_NEIGHBOR_SPLIT_ALG(name, r, summary, ...)                                        \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALLV, name, BLOCKING(r), summary,                          \
          .build.neighbor = ct_neighbor_##name##_build, __VA_ARGS__)
#define CT_NEIGHBOR_STEP_ALG(name, r, summary, ...)                                         \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALLV, name, BLOCKING(r), summary, RUN_AND_BUILD_NEIGHBOR(name),   \
          __VA_ARGS__)
#include "coll_list.h"
#define CT_NEIGHBOR_ALG(name, r, summary, ...)                                              \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALL, name, BLOCKING(r), summary,                           \
          .run.neighbor = ct_neighbor_##name, __VA_ARGS__)
#define CT_NEIGHBOR_SPLIT_ALG(name, r, summary, ...)                                        \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALL, name, BLOCKING(r), summary,                           \
          .build.neighbor = ct_neighbor_##name##_build, __VA_ARGS__)
#define CT_NEIGHBOR_STEP_ALG(name, r, summary, ...)                                         \
    ENTRY(CT_COLL_NEIGHBOR_ALLTOALL, name, BLOCKING(r), summary, RUN_AND_BUILD_NEIGHBOR(name),   \
          __VA_ARGS__)
#include "coll_list.h"
    ENTRY(CT_COLL_INEIGHBOR_ALLTOALLV, pmpi, 0,
          "forward to the MPI library's own routine for the call (PMPI_Ineighbor_alltoallv, "
          "its persistent or its large-count form)", .run.neighbor = ct_neighbor_pmpi, )
#define CT_NEIGHBOR_SPLIT_ALG(name, r, summary, ...)                                        \
    ENTRY(CT_COLL_INEIGHBOR_ALLTOALLV, name, r, summary,                                   \
          .build.neighbor = ct_neighbor_##name##_build, __VA_ARGS__)
#include "coll_list.h"
    ENTRY(CT_COLL_INEIGHBOR_ALLTOALL, pmpi, 0,
          "forward to the MPI library's own routine for the call (PMPI_Ineighbor_alltoall, "
          "its persistent or its large-count form)", .run.neighbor = ct_neighbor_pmpi, )
#define CT_NEIGHBOR_SPLIT_ALG(name, r, summary, ...)                                        \
    ENTRY(CT_COLL_INEIGHBOR_ALLTOALL, name, r, summary,                                    \
          .build.neighbor = ct_neighbor_##name##_build, __VA_ARGS__)
#include "coll_list.h"
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

const ct_algorithm *ct_algorithm_fallback(ct_coll coll)
{
    static const char *const fallback_names[CT_COLL_COUNT] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) [CT_COLL_##ID] = #fallback,
#include "coll_list.h"
    };
    const char *name = fallback_names[coll];
    return ct_algorithm_find(coll, name, strlen(name));
}

int ct_coll_nonblocking(ct_coll coll)
{
    return coll == CT_COLL_IALLTOALLV || coll == CT_COLL_IALLTOALL ||
           coll == CT_COLL_IALLGATHER_INTER || coll == CT_COLL_IALLGATHERV_INTER ||
           coll == CT_COLL_INEIGHBOR_ALLTOALLV || coll == CT_COLL_INEIGHBOR_ALLTOALL;
}

int ct_coll_neighbor(ct_coll coll)
{
    return coll == CT_COLL_NEIGHBOR_ALLTOALLV || coll == CT_COLL_NEIGHBOR_ALLTOALL ||
           coll == CT_COLL_INEIGHBOR_ALLTOALLV || coll == CT_COLL_INEIGHBOR_ALLTOALL;
}

int ct_coll_one_block_size(ct_coll coll)
{
    return coll == CT_COLL_NEIGHBOR_ALLTOALL || coll == CT_COLL_INEIGHBOR_ALLTOALL;
}

int ct_coll_has_pmpi(ct_coll coll)
{
    return strcmp(ct_algorithm_fallback(coll)->name, "pmpi") == 0;
}
