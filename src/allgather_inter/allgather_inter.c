/*
 * allgather_inter.c - drivers of the intercommunicator Allgather and
 * Allgatherv: per-call facts for the decision, then the chosen algorithm.
 */
#include "allgather_inter/allgather_inter.h"
#include "core/datatype.h"
#include "core/state.h"
#include "core/stats.h"
#include "select/decide.h"

#include <limits.h>

/* Flags the per-rank restrictions both collectives share. */
static int common_facts(MPI_Datatype stype, MPI_Datatype rtype, MPI_Aint local_bytes,
                        MPI_Aint remote_span, ct_call_facts *f)
{
    int rc;
    ct_typeinfo s, r;
    CT_CALL(ct_type_info(stype, &s));
    CT_CALL(ct_type_info(rtype, &r));
    f->violations = 0;
    if (!s.contig || !r.contig)
        f->violations |= CT_R_CONTIG_TYPES;
    if (local_bytes > INT_MAX || remote_span > INT_MAX)
        f->violations |= CT_R_INT_OFFSETS;
out:
    return rc;
}

static int allgather_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    const ct_allgather_args *a = args;
    int rc;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext;
    CT_CALL(PMPI_Type_size_x(a->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(a->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(a->recvtype, &lb, &rext));
    MPI_Aint local_total = (MPI_Aint)ctx->size * a->sendcount * (MPI_Aint)ssize;
    MPI_Aint remote_total = (MPI_Aint)ctx->remote_size * a->recvcount * (MPI_Aint)rsize;
    f->msg_size = (long)(local_total > remote_total ? local_total : remote_total);
    CT_CALL(common_facts(a->sendtype, a->recvtype, local_total,
                         (MPI_Aint)ctx->remote_size * a->recvcount * rext, f));
out:
    return rc;
}

static int allgatherv_facts(const void *args, const ct_ctx *ctx, ct_call_facts *f)
{
    const ct_allgatherv_args *a = args;
    int rc;
    MPI_Count ssize, rsize;
    MPI_Aint lb, rext, remote_total = 0, span = 0;
    CT_CALL(PMPI_Type_size_x(a->sendtype, &ssize));
    CT_CALL(PMPI_Type_size_x(a->recvtype, &rsize));
    CT_CALL(PMPI_Type_get_extent(a->recvtype, &lb, &rext));
    for (int j = 0; j < ctx->remote_size; j++) {
        MPI_Aint end = ((MPI_Aint)a->displs[j] + a->recvcounts[j]) * rext;
        remote_total += (MPI_Aint)a->recvcounts[j] * (MPI_Aint)rsize;
        span = end > span ? end : span;
    }
    /* The remote group's total; the MAX over both groups is max(K_A, K_B). */
    f->msg_size = (long)remote_total;
    CT_CALL(common_facts(a->sendtype, a->recvtype, (MPI_Aint)a->sendcount * (MPI_Aint)ssize,
                         span > remote_total ? span : remote_total, f));
out:
    return rc;
}

/* Runs and times one call of an algorithm; bytes is what this rank sends. */
#define RUN_TIMED(ctx, ch, member, a, bytes)                                          \
    do {                                                                              \
        int stats_ = ct_cfg()->stats;                                                 \
        double t0_ = stats_ ? PMPI_Wtime() : 0;                                       \
        (ctx)->call_extra = 0;                                                        \
        rc = (ch).alg->run.member((a), (ctx), (ch).params);                           \
        if (rc == MPI_SUCCESS && stats_)                                              \
            ct_stats_record(ct_algorithm_index((ch).alg), (bytes), PMPI_Wtime() - t0_, \
                            (ctx)->call_extra);                                       \
    } while (0)

static double send_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    return (double)count * size;
}

int ct_allgather_inter_dispatch(const ct_allgather_args *a, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice ch;
    ct_call call = {.coll = CT_COLL_ALLGATHER_INTER, .args = a, .local_facts = allgather_facts};
    int rc = ct_decide_call(a->comm, &call, forced, &ctx, &ch);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx == NULL)
        return ct_allgather_inter_pmpi(a, NULL, NULL);
    RUN_TIMED(ctx, ch, allgather, a, send_bytes(a->sendcount, a->sendtype));
    return rc;
}

int ct_allgatherv_inter_dispatch(const ct_allgatherv_args *a, const ct_spec *forced)
{
    ct_ctx *ctx;
    ct_choice ch;
    ct_call call = {
        .coll = CT_COLL_ALLGATHERV_INTER, .args = a, .local_facts = allgatherv_facts};
    int rc = ct_decide_call(a->comm, &call, forced, &ctx, &ch);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ctx == NULL)
        return ct_allgatherv_inter_pmpi(a, NULL, NULL);
    RUN_TIMED(ctx, ch, allgatherv, a, send_bytes(a->sendcount, a->sendtype));
    return rc;
}
