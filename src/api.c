/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.c - the direct C API of include/coltune.h. Each call builds a spec and
 * goes through the same driver, restriction checks and fallback as a spec
 * forced through the environment.
 */
#include "coltune.h"

#include "api.h"

#include "allgather_inter/allgather_inter.h"
#include "alltoallv/alltoallv.h"
#include "core/log.h"
#include "neighbor/nbr_graph.h"
#include "neighbor/neighbor.h"
#include "core/state.h"
#include "select/decide.h"
#include "shim/shim.h"

#include <limits.h>
#include <string.h>

int ct_api_begin(MPI_Comm comm, ct_api_comm kind)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM; /* no communicator to raise it on: returned only */
    (void)ct_shim_active(comm);
    if (kind == CT_API_ANY)
        return MPI_SUCCESS;
    int rc = PMPI_Comm_test_inter(comm, &inter);
    return rc != MPI_SUCCESS ? rc : inter == (kind == CT_API_INTER) ? MPI_SUCCESS : MPI_ERR_COMM;
}

/* Sets parameter key (NULL: none) of spec to the constant value. */
static void spec_set(ct_spec *spec, const char *key, long value)
{
    for (int i = 0; key != NULL && i < spec->alg->nparams; i++) {
        if (strcmp(spec->alg->params[i].name, key) == 0) {
            spec->values[i] = (ct_expr){CT_TERM_CONST, value};
            spec->set_mask |= 1u << i;
        }
    }
}

/* Runs algorithm name with parameters key1 and key2 (NULL for none) set. */
static int alltoallv_named2(const ct_alltoallv_args *a, const char *name, const char *key1,
                            long value1, const char *key2, long value2)
{
    ct_spec spec;
    int rc = ct_api_begin(a->comm, CT_API_INTRA);
    if (rc != MPI_SUCCESS)
        return ct_shim_return(a->comm, rc);
    ct_spec_default(ct_algorithm_find(CT_COLL_ALLTOALLV, name, strlen(name)), &spec);
    spec_set(&spec, key1, value1);
    spec_set(&spec, key2, value2);
    return ct_shim_return(a->comm, ct_alltoallv_dispatch(a, &spec));
}

#define A2AV_PARAMS                                                                          \
    const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, \
        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,   \
        MPI_Comm comm
#define A2AV_ARGS                                                                          \
    ct_shim_describe_alltoallv(sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls), sendtype, \
                               recvbuf, ct_vec_int(recvcounts), ct_vec_int(rdispls), recvtype, \
                               comm, ct_shim_fwd_alltoallv)

/* Every spec-string Alltoall(v) entry point: its description a, the spec
 * (NULL: decide as the intercepted call would), the same driver. */
static int api_alltoall_any(const char *fn, const char *spec_text, ct_alltoallv_args *a)
{
    ct_spec spec;
    int rc = ct_api_begin(a->comm, CT_API_INTRA);
    if (rc != MPI_SUCCESS)
        return ct_shim_return(a->comm, rc);
    rc = ct_api_parse_spec(fn, spec_text, a->coll, a->comm, &spec);
    if (rc < 0)
        return ct_shim_return(a->comm, MPI_ERR_ARG);
    const ct_spec *forced = rc ? &spec : NULL;
    return ct_shim_return(a->comm, a->request != NULL ? ct_ialltoallv_dispatch(a, forced)
                                                      : ct_alltoallv_dispatch(a, forced));
}

CT_EXPORT int coltune_alltoallv(const char *spec_text, A2AV_PARAMS)
{
    ct_alltoallv_args a = A2AV_ARGS;
    return api_alltoall_any("coltune_alltoallv", spec_text, &a);
}

CT_EXPORT int coltune_alltoall(const char *spec_text, const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_alltoall);
    return api_alltoall_any("coltune_alltoall", spec_text, &a);
}

/* The neighbourhood all-to-alls, any form: their description, the spec,
 * the driver (the nonblocking and persistent forms' when a->request is
 * set). Without the intercepted completion calls (CT_NO_INTERCEPT) nothing
 * would complete coltune's requests: the MPI library serves the
 * nonblocking forms there, and there is no persistent one to forward to. */
static int api_neighbor_any(const char *fn, const char *spec_text, const ct_neighbor_args *a)
{
    ct_spec spec;
#ifdef CT_NO_INTERCEPT
    if (a->request != NULL)
        return a->persistent ? ct_shim_return(a->comm, MPI_ERR_UNSUPPORTED_OPERATION)
                             : a->forward(a);
#endif
    int rc = ct_api_begin(a->comm, CT_API_INTRA);
    if (rc != MPI_SUCCESS)
        return ct_shim_return(a->comm, rc);
    rc = ct_api_parse_spec(fn, spec_text, a->coll, a->comm, &spec);
    if (rc < 0)
        return ct_shim_return(a->comm, MPI_ERR_ARG);
    const ct_spec *forced = rc ? &spec : NULL;
    return ct_shim_return(a->comm, a->request != NULL ? ct_ineighbor_dispatch(a, forced)
                                                      : ct_neighbor_dispatch(a, forced));
}

#define NBR_ARGS(coll, forward)                                                               \
    ct_shim_describe_neighbor(coll, sendbuf, ct_vec_int(sendcounts), ct_vec_int(sdispls),     \
                              sendtype, recvbuf, ct_vec_int(recvcounts), ct_vec_int(rdispls), \
                              recvtype, comm, forward)
#define NBR_UNIFORM_ARGS(coll, forward)                                                  \
    ct_shim_describe_neighbor(coll, sendbuf, ct_vec_linear(sendcount, 0),                \
                              ct_vec_linear(0, sendcount), sendtype, recvbuf,            \
                              ct_vec_linear(recvcount, 0), ct_vec_linear(0, recvcount), \
                              recvtype, comm, forward)
#define NBR_UNIFORM_PARAMS                                                                  \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, \
        MPI_Datatype recvtype, MPI_Comm comm

CT_EXPORT int coltune_neighbor_alltoallv(const char *spec_text, A2AV_PARAMS)
{
    const ct_neighbor_args a =
        NBR_ARGS(CT_COLL_NEIGHBOR_ALLTOALLV, ct_shim_fwd_neighbor_alltoallv);
    return api_neighbor_any("coltune_neighbor_alltoallv", spec_text, &a);
}

CT_EXPORT int coltune_neighbor_alltoall(const char *spec_text, NBR_UNIFORM_PARAMS)
{
    const ct_neighbor_args a =
        NBR_UNIFORM_ARGS(CT_COLL_NEIGHBOR_ALLTOALL, ct_shim_fwd_neighbor_alltoall);
    return api_neighbor_any("coltune_neighbor_alltoall", spec_text, &a);
}

CT_EXPORT int coltune_ineighbor_alltoallv(const char *spec_text, A2AV_PARAMS,
                                          MPI_Request *request)
{
    ct_neighbor_args a =
        NBR_ARGS(CT_COLL_INEIGHBOR_ALLTOALLV, ct_shim_fwd_ineighbor_alltoallv);
    a.request = request;
    return api_neighbor_any("coltune_ineighbor_alltoallv", spec_text, &a);
}

CT_EXPORT int coltune_ineighbor_alltoall(const char *spec_text, NBR_UNIFORM_PARAMS,
                                         MPI_Request *request)
{
    ct_neighbor_args a =
        NBR_UNIFORM_ARGS(CT_COLL_INEIGHBOR_ALLTOALL, ct_shim_fwd_ineighbor_alltoall);
    a.request = request;
    return api_neighbor_any("coltune_ineighbor_alltoall", spec_text, &a);
}

/* The persistent forms (MPI_Neighbor_alltoall(v)_init; Open MPI 4.1:
 * MPIX_), as coltune_alltoallv_init: MPI_ERR_UNSUPPORTED_OPERATION where
 * the MPI library has none. */
static int api_neighbor_init_any(const char *fn, const char *spec_text, ct_neighbor_args *a,
                                 MPI_Info info, MPI_Request *request)
{
#ifdef CT_HAVE_PCOLL
    a->request = request;
    a->persistent = 1;
    a->info = info;
    return api_neighbor_any(fn, spec_text, a);
#else
    (void)fn;
    (void)spec_text;
    (void)info;
    (void)request;
    return ct_shim_return(a->comm, MPI_ERR_UNSUPPORTED_OPERATION);
#endif
}

CT_EXPORT int coltune_neighbor_alltoallv_init(const char *spec_text, A2AV_PARAMS, MPI_Info info,
                                              MPI_Request *request)
{
#ifdef CT_HAVE_PCOLL
    ct_neighbor_args a =
        NBR_ARGS(CT_COLL_INEIGHBOR_ALLTOALLV, ct_shim_fwd_neighbor_alltoallv_init);
#else
    ct_neighbor_args a = NBR_ARGS(CT_COLL_INEIGHBOR_ALLTOALLV, ct_shim_fwd_ineighbor_alltoallv);
#endif
    return api_neighbor_init_any("coltune_neighbor_alltoallv_init", spec_text, &a, info,
                                 request);
}

CT_EXPORT int coltune_neighbor_alltoall_init(const char *spec_text, NBR_UNIFORM_PARAMS,
                                             MPI_Info info, MPI_Request *request)
{
#ifdef CT_HAVE_PCOLL
    ct_neighbor_args a =
        NBR_UNIFORM_ARGS(CT_COLL_INEIGHBOR_ALLTOALL, ct_shim_fwd_neighbor_alltoall_init);
#else
    ct_neighbor_args a =
        NBR_UNIFORM_ARGS(CT_COLL_INEIGHBOR_ALLTOALL, ct_shim_fwd_ineighbor_alltoall);
#endif
    return api_neighbor_init_any("coltune_neighbor_alltoall_init", spec_text, &a, info,
                                 request);
}

/* The nonblocking forms. Without the intercepted completion calls (the
 * SimGrid SMPI build, CT_NO_INTERCEPT: see shim/init.c) nothing would
 * complete coltune's requests: the MPI library serves them there. */
static int api_ialltoall_any(const char *fn, const char *spec_text, ct_alltoallv_args *a)
{
#ifdef CT_NO_INTERCEPT
    (void)fn;
    (void)spec_text;
    return a->forward(a);
#else
    return api_alltoall_any(fn, spec_text, a);
#endif
}

CT_EXPORT int coltune_ialltoallv(const char *spec_text, A2AV_PARAMS, MPI_Request *request)
{
    ct_alltoallv_args a = A2AV_ARGS;
    a.coll = CT_COLL_IALLTOALLV;
    a.forward = ct_shim_fwd_ialltoallv;
    a.request = request;
    return api_ialltoall_any("coltune_ialltoallv", spec_text, &a);
}

CT_EXPORT int coltune_ialltoall(const char *spec_text, const void *sendbuf, int sendcount,
                                MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_ialltoall);
    a.coll = CT_COLL_IALLTOALL;
    a.request = request;
    return api_ialltoall_any("coltune_ialltoall", spec_text, &a);
}

/* The persistent forms (MPI_Alltoallv_init, MPI_Alltoall_init; Open MPI
 * 4.1: MPIX_): decided once, at this call, as the nonblocking form with
 * persistent=1. Without persistent collectives in the MPI library (nor, in
 * the SMPI build, the intercepted completion calls) there is nothing to
 * forward to: MPI_ERR_UNSUPPORTED_OPERATION. */
static int api_alltoall_init_any(const char *fn, const char *spec_text, ct_alltoallv_args *a,
                                 MPI_Info info, MPI_Request *request)
{
#if defined(CT_HAVE_PCOLL) && !defined(CT_NO_INTERCEPT)
    a->request = request;
    a->persistent = 1;
    a->info = info;
    return api_alltoall_any(fn, spec_text, a);
#else
    (void)fn;
    (void)spec_text;
    (void)info;
    (void)request;
    return ct_shim_return(a->comm, MPI_ERR_UNSUPPORTED_OPERATION);
#endif
}

CT_EXPORT int coltune_alltoallv_init(const char *spec_text, A2AV_PARAMS, MPI_Info info,
                                     MPI_Request *request)
{
    ct_alltoallv_args a = A2AV_ARGS;
    a.coll = CT_COLL_IALLTOALLV;
#ifdef CT_HAVE_PCOLL
    a.forward = ct_shim_fwd_alltoallv_init;
#endif
    return api_alltoall_init_any("coltune_alltoallv_init", spec_text, &a, info, request);
}

CT_EXPORT int coltune_alltoall_init(const char *spec_text, const void *sendbuf, int sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_alltoall);
    a.coll = CT_COLL_IALLTOALL;
#ifdef CT_HAVE_PCOLL
    a.forward = ct_shim_fwd_alltoall_init;
#endif
    return api_alltoall_init_any("coltune_alltoall_init", spec_text, &a, info, request);
}

#ifdef CT_HAVE_LARGE_COUNT
/* The large-count forms, from the _c descriptions. */
CT_EXPORT int coltune_alltoallv_c(const char *spec_text, const void *sendbuf,
                                  const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoallv(
        sendbuf, ct_vec_count(sendcounts), ct_vec_aint(sdispls), sendtype, recvbuf,
        ct_vec_count(recvcounts), ct_vec_aint(rdispls), recvtype, comm, ct_shim_fwd_alltoallv_c);
    return api_alltoall_any("coltune_alltoallv_c", spec_text, &a);
}

CT_EXPORT int coltune_alltoall_c(const char *spec_text, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_alltoallv_args a = ct_shim_describe_alltoall(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm,
                                                    ct_shim_fwd_alltoall_c);
    return api_alltoall_any("coltune_alltoall_c", spec_text, &a);
}
#endif

/* The named wrappers of include/coltune.h: coltune_alltoallv_<name>, with
 * the algorithm's parameters (none, k1, or k1 and k2) as int arguments. */
#define NAMED(name, params, k1, v1, k2, v2)                                     \
    CT_EXPORT int coltune_alltoallv_##name params                              \
    {                                                                          \
        ct_alltoallv_args a = A2AV_ARGS;                                       \
        return alltoallv_named2(&a, #name, k1, v1, k2, v2);                    \
    }
#define NAMED0(name) NAMED(name, (A2AV_PARAMS), NULL, 0, NULL, 0)
#define NAMED1(name, k1) NAMED(name, (A2AV_PARAMS, int k1), #k1, k1, NULL, 0)
#define NAMED2(name, k1, k2) NAMED(name, (A2AV_PARAMS, int k1, int k2), #k1, k1, #k2, k2)

NAMED0(pairwise)
NAMED0(nonblocking)
NAMED0(linear)
NAMED1(scattered, block_count)
NAMED1(multipair_blocking, stride)
NAMED1(multipair_waitany, stride)
NAMED1(multipair_testany, stride)
NAMED1(tuna, radix)
NAMED2(tuna_hier_coalesced, radix, block_count)
NAMED2(tuna_hier_staggered, radix, block_count)

/* ------------------------------------------------------------------ */
/* Intercommunicator Allgather / Allgatherv                            */
/* ------------------------------------------------------------------ */

int ct_api_parse_spec(const char *fn, const char *spec_text, ct_coll coll, MPI_Comm comm,
                      ct_spec *spec)
{
    ct_parse_error err;
    int rank = 0;
    if (spec_text == NULL)
        return 0;
    if (ct_spec_parse(spec_text, strlen(spec_text), coll, spec, &err) == 0)
        return 1;
    /* Every rank passes the same spec: one message per communicator. */
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank == 0)
        ct_log_once("%s: spec '%s': column %d: %s", fn, spec_text, err.column + 1, err.message);
    return -1;
}

/* Every spec-string intercommunicator Allgather(v) entry point: MPI_IN_PLACE
 * is the library's own answer (as in the shim), the rest the same driver. */
#define API_ALLGATHER_ANY(name, args_type, coll, dispatch)                                    \
    static int name(const char *fn, const char *spec_text, args_type *a)                      \
    {                                                                                         \
        ct_spec spec;                                                                         \
        int rc = ct_api_begin(a->comm, CT_API_INTER);                                         \
        if (rc != MPI_SUCCESS)                                                                \
            return ct_shim_return(a->comm, rc);                                               \
        if (a->sendbuf == MPI_IN_PLACE)                                                       \
            return a->forward(a);                                                             \
        rc = ct_api_parse_spec(fn, spec_text, coll, a->comm, &spec);                          \
        if (rc < 0)                                                                           \
            return ct_shim_return(a->comm, MPI_ERR_ARG);                                      \
        return ct_shim_return(a->comm, dispatch(a, rc ? &spec : NULL));                       \
    }
API_ALLGATHER_ANY(api_allgather_any, ct_allgather_args, CT_COLL_ALLGATHER_INTER,
                  ct_allgather_inter_dispatch)
API_ALLGATHER_ANY(api_allgatherv_any, ct_allgatherv_args, CT_COLL_ALLGATHERV_INTER,
                  ct_allgatherv_inter_dispatch)

CT_EXPORT int coltune_allgather_inter(const char *spec_text, const void *sendbuf, int sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_allgather);
    return api_allgather_any("coltune_allgather_inter", spec_text, &a);
}

CT_EXPORT int coltune_allgatherv_inter(const char *spec_text, const void *sendbuf,
                                       int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       const int recvcounts[], const int displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_int(recvcounts), ct_vec_int(displs),
                                                       recvtype, comm, ct_shim_fwd_allgatherv);
    return api_allgatherv_any("coltune_allgatherv_inter", spec_text, &a);
}

/* The nonblocking forms (as coltune_ialltoallv: the MPI library serves them
 * where nothing intercepts the completion calls). */
API_ALLGATHER_ANY(api_iallgather_any, ct_allgather_args, CT_COLL_IALLGATHER_INTER,
                  ct_iallgather_inter_dispatch)
API_ALLGATHER_ANY(api_iallgatherv_any, ct_allgatherv_args, CT_COLL_IALLGATHERV_INTER,
                  ct_iallgatherv_inter_dispatch)

CT_EXPORT int coltune_iallgather_inter(const char *spec_text, const void *sendbuf,
                                       int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                       MPI_Request *request)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_iallgather);
    a.request = request;
#ifdef CT_NO_INTERCEPT
    (void)api_iallgather_any;
    (void)spec_text;
    return a.forward(&a);
#else
    return api_iallgather_any("coltune_iallgather_inter", spec_text, &a);
#endif
}

CT_EXPORT int coltune_iallgatherv_inter(const char *spec_text, const void *sendbuf,
                                        int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request *request)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_int(recvcounts), ct_vec_int(displs),
                                                       recvtype, comm, ct_shim_fwd_iallgatherv);
    a.request = request;
#ifdef CT_NO_INTERCEPT
    (void)api_iallgatherv_any;
    (void)spec_text;
    return a.forward(&a);
#else
    return api_iallgatherv_any("coltune_iallgatherv_inter", spec_text, &a);
#endif
}

#ifdef CT_HAVE_LARGE_COUNT
CT_EXPORT int coltune_allgather_inter_c(const char *spec_text, const void *sendbuf,
                                        MPI_Count sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, MPI_Count recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm)
{
    ct_allgather_args a = ct_shim_describe_allgather(sendbuf, sendcount, sendtype, recvbuf,
                                                     recvcount, recvtype, comm,
                                                     ct_shim_fwd_allgather_c);
    return api_allgather_any("coltune_allgather_inter_c", spec_text, &a);
}

CT_EXPORT int coltune_allgatherv_inter_c(const char *spec_text, const void *sendbuf,
                                         MPI_Count sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, const MPI_Count recvcounts[],
                                         const MPI_Aint displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm)
{
    ct_allgatherv_args a = ct_shim_describe_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                       ct_vec_count(recvcounts),
                                                       ct_vec_aint(displs), recvtype, comm,
                                                       ct_shim_fwd_allgatherv_c);
    return api_allgatherv_any("coltune_allgatherv_inter_c", spec_text, &a);
}
#endif

/* ------------------------------------------------------------------ */
/* Registry introspection                                              */
/* ------------------------------------------------------------------ */

CT_EXPORT int coltune_comm_topology(MPI_Comm comm, int *P, int *Q, int *N)
{
    ct_ctx *ctx;
    int rc = ct_api_begin(comm, CT_API_ANY);
    if (rc == MPI_ERR_COMM)
        return rc; /* MPI_COMM_NULL: no error handler to call */
    rc = ct_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return ct_shim_return(comm, rc);
    *P = (int)ctx->shape.P;
    *Q = (int)ctx->shape.Q;
    *N = (int)ctx->shape.N;
    return MPI_SUCCESS;
}

CT_EXPORT int coltune_decision(MPI_Comm comm, const char *collective, MPI_Count msg_size,
                               char *spec, int len)
{
    ct_ctx *ctx;
    ct_coll coll;
    ct_choice choice;
    char buf[160];
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    if (collective == NULL || spec == NULL || len < 1 || msg_size < 0 ||
        msg_size > (MPI_Count)LONG_MAX ||
        ct_coll_from_name(collective, strlen(collective), &coll) != 0)
        return MPI_ERR_ARG;
    int rc = ct_api_begin(comm, CT_API_ANY);
    if (rc == MPI_SUCCESS)
        rc = ct_ctx_get(comm, &ctx);
    if (rc == MPI_SUCCESS) {
        /* a neighbourhood's graph once a call has read it (local) */
        const ct_nbr_graph *g = ct_coll_neighbor(coll) ? ct_nbr_graph_find(ctx) : NULL;
        rc = ct_decide_query(ctx, coll, (long)msg_size, g != NULL ? &g->facts : NULL, &choice);
    }
    if (rc != MPI_SUCCESS)
        return ct_shim_return(comm, rc);
    ct_spec_format_resolved(choice.alg, choice.params, buf, sizeof buf);
    if (strlen(buf) >= (size_t)len)
        return MPI_ERR_ARG;
    memcpy(spec, buf, strlen(buf) + 1);
    return MPI_SUCCESS;
}

CT_EXPORT int coltune_algorithm_count(void) { return ct_algorithm_count(); }

CT_EXPORT int coltune_algorithm_info(int i, const char **collective, const char **name,
                                     int *nparams)
{
    const ct_algorithm *alg = ct_algorithm_at(i);
    if (alg == NULL)
        return -1;
    *collective = ct_coll_name(alg->coll);
    *name = alg->name;
    *nparams = alg->nparams;
    return 0;
}

CT_EXPORT int coltune_algorithm_param(int i, int k, int P, int Q, int N, const char **name,
                                      long *min, long *max, long *def)
{
    const ct_algorithm *alg = ct_algorithm_at(i);
    const ct_shape env = {P, Q, N};
    if (alg == NULL || k < 0 || k >= alg->nparams)
        return -1;
    const ct_param_desc *d = &alg->params[k];
    *name = d->name;
    *min = ct_expr_eval(d->min, &env);
    *max = ct_expr_eval(d->max, &env);
    long v = ct_expr_eval(d->def, &env);
    *def = v < *min ? *min : v > *max ? *max : v;
    return 0;
}
