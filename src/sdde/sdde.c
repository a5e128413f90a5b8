/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde.c - the driver of MPIX_Alltoall_crs and MPIX_Alltoallv_crs (see
 * sdde.h): validation, packing, agreement and decision, the algorithm, then
 * the received messages written sorted by source, with capacity checks, into
 * the caller's arrays or arrays allocated here.
 */
#include "sdde/sdde.h"
#include "sdde/sdde_exchange.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/log.h"
#include "core/state.h"
#include "stats.h"
#include "driver.h"
#include "select/decide.h"
#include "core/copy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Per-communicator state                                              */
/* ------------------------------------------------------------------ */

static void cache_free(void *p)
{
    ct_sdde_cache *c = p;
    if (c == NULL)
        return;
    if (c->win != MPI_WIN_NULL)
        PMPI_Win_free(&c->win); /* collective, like the context's release */
    if (c->node_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&c->node_comm);
    free(c->node_first);
    free(c->node_ranks);
    free(c);
}

static int cache_create(ct_ctx *ctx, void *arg, void **obj)
{
    (void)ctx;
    (void)arg;
    ct_sdde_cache *c = calloc(1, sizeof *c);
    *obj = c;
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    c->internode_msgs = -1;
    c->node_comm = MPI_COMM_NULL;
    c->win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

static const ct_ctx_key cache_key = {"sparse exchange", cache_create, cache_free, NULL};

static int cache_get(ct_ctx *ctx, ct_sdde_cache **out)
{
    void *obj;
    int rc = ct_ctx_ext(ctx, &cache_key, NULL, &obj);
    *out = obj;
    return rc;
}

long ct_sdde_last_internode(MPI_Comm comm)
{
    ct_ctx *ctx = NULL;
    const ct_sdde_cache *c;
    if (ct_ctx_lookup(comm, &ctx) != MPI_SUCCESS || ctx == NULL ||
        (c = ct_ctx_ext_find(ctx, &cache_key)) == NULL)
        return -1;
    return c->internode_msgs;
}

/* ------------------------------------------------------------------ */
/* Validation (rank-local; the ranks agree on the outcome afterwards)  */
/* ------------------------------------------------------------------ */

static int bad(const ct_sdde_args *c, int code, const char *fmt, ...) CT_PRINTF(3, 4);
static int bad(const ct_sdde_args *c, int code, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ct_log_once("%s: %s", c->fn, text);
    return code;
}

typedef struct dest_at {
    int dest, index;
} dest_at;

static int by_dest(const void *a, const void *b)
{
    const dest_at *x = a, *y = b;
    if (x->dest != y->dest)
        return x->dest < y->dest ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Destinations: in range and listed once (sorting a copy: O(nnz log nnz)). */
static int check_dests(const ct_sdde_args *c, int P)
{
    int rc = MPI_SUCCESS;
    dest_at *d = NULL;
    for (int i = 0; i < c->send_nnz; i++)
        if (c->dest[i] < 0 || c->dest[i] >= P)
            return bad(c, MPI_ERR_ARG, "dest[%d] = %d is not a rank of the communicator "
                                       "(size %d)", i, c->dest[i], P);
    CT_ALLOC(d, (size_t)c->send_nnz * sizeof *d);
    for (int i = 0; i < c->send_nnz; i++)
        d[i] = (dest_at){c->dest[i], i};
    qsort(d, (size_t)c->send_nnz, sizeof *d, by_dest);
    for (int i = 1; i < c->send_nnz; i++)
        if (d[i].dest == d[i - 1].dest) {
            rc = bad(c, MPI_ERR_ARG, "dest[%d] = %d is listed twice (also dest[%d])",
                     d[i].index, d[i].dest, d[i - 1].index);
            break;
        }
out:
    free(d);
    return rc;
}

static int check_send_side(const ct_sdde_args *c)
{
    if (c->send_nnz < 0)
        return bad(c, MPI_ERR_ARG, "send_nnz = %d is negative", c->send_nnz);
    if (c->send_nnz > 0 && c->dest == NULL)
        return bad(c, MPI_ERR_ARG, "dest is NULL but send_nnz = %d", c->send_nnz);
    if (!c->variable) {
        if (c->sendcount < 0)
            return bad(c, MPI_ERR_ARG, "sendcount = %d is negative", c->sendcount);
        return MPI_SUCCESS;
    }
    if (c->send_size < 0)
        return bad(c, MPI_ERR_ARG, "send_size = %d is negative", c->send_size);
    if (c->send_nnz > 0 && (c->sendcounts == NULL || c->sdispls == NULL))
        return bad(c, MPI_ERR_ARG, "%s is NULL but send_nnz = %d",
                   c->sendcounts == NULL ? "sendcounts" : "sdispls", c->send_nnz);
    for (int i = 0; i < c->send_nnz; i++) {
        if (c->sendcounts[i] < 0)
            return bad(c, MPI_ERR_ARG, "sendcounts[%d] = %d is negative", i, c->sendcounts[i]);
        if (c->sdispls[i] < 0 || (long)c->sdispls[i] + c->sendcounts[i] > c->send_size)
            return bad(c, MPI_ERR_ARG, "message %d (sdispls[%d] = %d, sendcounts[%d] = %d) "
                                       "lies outside the send_size = %d elements of sendvals",
                       i, i, c->sdispls[i], i, c->sendcounts[i], c->send_size);
    }
    return MPI_SUCCESS;
}

/* The receive arguments: counts, capacities and where the outputs go. */
static int check_recv_side(const ct_sdde_args *c)
{
    if (!c->variable && c->recvcount < 0)
        return bad(c, MPI_ERR_ARG, "recvcount = %d is negative", c->recvcount);
    if (c->recv_nnz == NULL || (c->variable && c->recv_size == NULL))
        return bad(c, MPI_ERR_ARG, "%s is NULL", c->recv_nnz == NULL ? "recv_nnz" : "recv_size");
    if ((!c->alloc || c->nnz_known) && *c->recv_nnz < 0)
        return bad(c, MPI_ERR_ARG, "*recv_nnz = %d is negative", *c->recv_nnz);
    if (c->variable && (!c->alloc || c->size_known) && *c->recv_size < 0)
        return bad(c, MPI_ERR_ARG, "*recv_size = %d is negative", *c->recv_size);
    if (c->alloc) {
        if (c->src_out == NULL || c->recvvals_out == NULL ||
            (c->variable && (c->recvcounts_out == NULL || c->rdispls_out == NULL)))
            return bad(c, MPI_ERR_ARG, "an output pointer (src, recvcounts, rdispls or "
                                       "recvvals) is NULL");
        return MPI_SUCCESS;
    }
    int cap = *c->recv_nnz;
    if (cap > 0 && (c->src == NULL ||
                    (c->variable && (c->recvcounts == NULL || c->rdispls == NULL))))
        return bad(c, MPI_ERR_ARG, "*recv_nnz = %d but src, recvcounts or rdispls is NULL",
                   cap);
    long elems = c->variable ? *c->recv_size : (long)cap * c->recvcount;
    if (elems > 0 && c->recvvals == NULL)
        return bad(c, MPI_ERR_ARG, "recvvals is NULL but has room for %ld elements", elems);
    return MPI_SUCCESS;
}

static int check_types(const ct_sdde_args *c, ct_typeinfo *st, ct_typeinfo *rt)
{
    int rc;
    if (c->sendtype == MPI_DATATYPE_NULL || c->recvtype == MPI_DATATYPE_NULL)
        return bad(c, MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL",
                   c->sendtype == MPI_DATATYPE_NULL ? "sendtype" : "recvtype");
    CT_CALL(ct_type_info(c->sendtype, st));
    CT_CALL(ct_type_info(c->recvtype, rt));
    /* An allocated buffer starts at its first byte of data or before. */
    if (c->alloc && rt->true_lb < 0)
        return bad(c, MPI_ERR_TYPE, "recvtype has a negative true lower bound (%ld): "
                                    "the _alloc variants cannot allocate for it",
                   (long)rt->true_lb);
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The send side as bytes                                              */
/* ------------------------------------------------------------------ */

static const char no_bytes[1];

typedef struct prepared {
    ct_typeinfo st, rt;
    ct_bytes send; /* the messages as bytes (staged for a non-contiguous sendtype) */
    int self;       /* index of the message to this rank itself, -1 for none */
    const char *self_ptr; /* its bytes */
    int self_bytes;
    long max_bytes; /* largest message this rank sends */
    double total_bytes;
} prepared;

static void message_of(const ct_sdde_args *c, int i, int *count, MPI_Aint *displ)
{
    *count = c->variable ? c->sendcounts[i] : c->sendcount;
    *displ = c->variable ? (MPI_Aint)c->sdispls[i] : (MPI_Aint)i * c->sendcount;
}

/* Every message fits coltune's limit and has data to read. */
static int check_messages(const ct_sdde_args *c, const prepared *p)
{
    int count;
    MPI_Aint displ;
    for (int i = 0; i < c->send_nnz; i++) {
        message_of(c, i, &count, &displ);
        long bytes = (long)count * (long)p->st.size;
        if (bytes > CT_SDDE_MAX_MSG_BYTES)
            return bad(c, MPI_ERR_ARG, "message %d holds %ld bytes; coltune carries at most "
                                       "%ld bytes per message", i, bytes, CT_SDDE_MAX_MSG_BYTES);
        if (count > 0 && c->sendvals == NULL)
            return bad(c, MPI_ERR_ARG, "sendvals is NULL but message %d holds %d elements", i,
                       count);
    }
    return MPI_SUCCESS;
}

/* Fills x->out with this rank's messages to other ranks, as bytes. */
static int prepare_sends(const ct_sdde_args *c, prepared *p, ct_sdde *x, int me, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    const ct_vec counts = c->variable ? ct_vec_int(c->sendcounts) : ct_vec_linear(c->sendcount, 0);
    const ct_vec displs = c->variable ? ct_vec_int(c->sdispls) : ct_vec_linear(0, c->sendcount);
    CT_CALL(ct_bytes_init(&p->send, c->sendvals, c->send_nnz, counts, displs, c->sendtype, 0));
    CT_CALL(ct_bytes_alloc(&p->send));
    CT_CALL(ct_bytes_pack(&p->send, comm));
    for (int i = 0; i < c->send_nnz; i++) {
        const long bytes = (long)ct_bytes_len(&p->send, i);
        const char *ptr = bytes > 0 ? ct_bytes_block(&p->send, i) : no_bytes;
        p->max_bytes = bytes > p->max_bytes ? bytes : p->max_bytes;
        p->total_bytes += (double)bytes;
        if (c->dest[i] == me) {
            p->self = i;
            p->self_ptr = ptr;
            p->self_bytes = (int)bytes;
        } else {
            CT_CALL(ct_sdde_out_push(&x->out, c->dest[i], ptr, (int)bytes));
        }
    }
out:
    return rc;
}

/*
 * GPU memory: the exchange copies with the CPU and, being coltune's own, has
 * no MPI routine to hand the call to. A buffer in device or managed memory
 * (the first message sent, or the caller's receive buffer when it has room)
 * is refused like any invalid argument: the ranks agree, and every rank
 * returns an error instead of faulting. Asked only with a GPU runtime loaded.
 */
static int check_device(const ct_sdde_args *c, const prepared *p)
{
    int count;
    MPI_Aint displ;
    unsigned dev = 0;
    const char *what = "sendvals";
    if (ct_device_runtimes() == 0)
        return MPI_SUCCESS;
    for (int i = 0; i < c->send_nnz; i++) {
        message_of(c, i, &count, &displ);
        if (count > 0) {
            dev = ct_device_memory((const char *)c->sendvals + displ * p->st.extent +
                                   p->st.true_lb);
            break;
        }
    }
    if (dev == 0 && !c->alloc &&
        (c->variable ? *c->recv_size : *c->recv_nnz * c->recvcount) > 0) {
        dev = ct_device_memory((const char *)c->recvvals + p->rt.true_lb);
        what = "recvvals";
    }
    if (dev == 0)
        return MPI_SUCCESS;
    if (ct_settings_get()->stats)
        ct_stats_record_device(c->variable ? CT_COLL_ALLTOALLV_CRS : CT_COLL_ALLTOALL_CRS);
    return bad(c, MPI_ERR_BUFFER, "%s is %s device or managed memory: coltune's sparse "
               "exchange copies with the CPU and has no MPI routine to hand the call to; "
               "pass host memory", what, ct_device_name(dev));
}

static int validate_and_prepare(const ct_sdde_args *c, prepared *p, ct_sdde *x, int P, int me)
{
    int rc;
    if ((rc = check_types(c, &p->st, &p->rt)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_send_side(c)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_recv_side(c)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_dests(c, P)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_messages(c, p)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_device(c, p)) != MPI_SUCCESS)
        return rc;
    if ((rc = prepare_sends(c, p, x, me, c->comm)) != MPI_SUCCESS)
        return rc;
    if (c->nnz_known && p->self >= 0 && *c->recv_nnz == 0)
        return bad(c, MPI_ERR_ARG, "the hint says *recv_nnz = 0 messages arrive, but this "
                                   "rank sends one to itself (dest[%d])", p->self);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Agreement and decision                                              */
/* ------------------------------------------------------------------ */

/*
 * The one allreduce of a call (every call but those of a CT_A_AGREES
 * algorithm decided without facts): the decision's msg_size (largest message
 * any rank sends), whether some rank's arguments are invalid, and whether
 * some rank lacks an exact receive count. SDDE algorithms declare no local
 * restrictions (they run on packed bytes), so no violation flags travel.
 */
static int agree(ct_ctx *ctx, const prepared *p, int arg_rc, int nnz_known, ct_decide_input *call,
                 int *invalid, int *all_known)
{
    int rc;
    long long in[3] = {p->max_bytes, arg_rc != MPI_SUCCESS, !nnz_known}, res[3];
    CT_CALL(PMPI_Allreduce(in, res, 3, MPI_LONG_LONG, MPI_MAX, ctx->decide_comm));
    call->facts.msg_size = (long)res[0];
    call->facts.violations = 0;
    call->have_facts = 1;
    *invalid = res[1] != 0;
    *all_known = res[2] == 0;
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Writing the received messages                                       */
/* ------------------------------------------------------------------ */

static int by_src(const void *a, const void *b)
{
    const ct_sdde_msg *x = a, *y = b;
    return (x->src > y->src) - (x->src < y->src);
}

/* Element count of every message; checks that each holds what recvtype and
 * (constant size) recvcount say. *total: elements in all. */
static int element_counts(const ct_sdde_args *c, const ct_sdde_box *got, const ct_typeinfo *rt,
                          int *counts, long *total)
{
    long want = (long)c->recvcount * (long)rt->size;
    *total = 0;
    for (int k = 0; k < got->n; k++) {
        const ct_sdde_msg *m = &got->msgs[k];
        if (!c->variable) {
            if (m->bytes != want)
                return bad(c, m->bytes > want ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                           "the message from rank %d holds %d bytes, but recvcount = %d of "
                           "recvtype is %ld bytes", m->src, m->bytes, c->recvcount, want);
            counts[k] = c->recvcount;
        } else if (rt->size == 0 || m->bytes % rt->size != 0) {
            if (m->bytes != 0)
                return bad(c, MPI_ERR_TYPE, "the message from rank %d holds %d bytes, not a "
                                            "whole number of recvtype elements (%ld bytes)",
                           m->src, m->bytes, (long)rt->size);
            counts[k] = 0;
        } else {
            counts[k] = (int)(m->bytes / rt->size);
        }
        *total += counts[k];
    }
    if (c->variable && *total > INT_MAX)
        return bad(c, MPI_ERR_COUNT, "%ld elements arrived, more than recv_size (an int) "
                                     "can report", *total);
    return MPI_SUCCESS;
}

/* Bytes spanned by n elements of recvtype from the buffer's start. */
static size_t span_of(long n, const ct_typeinfo *rt)
{
    if (n <= 0)
        return 1;
    return (size_t)((MPI_Aint)(n - 1) * rt->extent + rt->true_lb + rt->true_extent);
}

typedef struct outputs {
    int *src, *counts, *displs;
    char *vals;
} outputs;

static int allocate_outputs(const ct_sdde_args *c, int n, long total, const ct_typeinfo *rt,
                            outputs *o)
{
    int rc = MPI_SUCCESS;
    memset(o, 0, sizeof *o);
    CT_ALLOC(o->src, (size_t)n * sizeof(int));
    if (c->variable) {
        CT_ALLOC(o->counts, (size_t)n * sizeof(int));
        CT_ALLOC(o->displs, (size_t)n * sizeof(int));
    }
    CT_ALLOC(o->vals, span_of(total, rt));
    return MPI_SUCCESS;
out:
    free(o->src);
    free(o->counts);
    free(o->displs);
    return rc;
}

static int write_messages(const ct_sdde_args *c, const ct_sdde_box *got, const int *counts,
                          const ct_typeinfo *rt, const outputs *o, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    MPI_Aint displ = 0;
    for (int k = 0; k < got->n; k++) {
        const ct_sdde_msg *m = &got->msgs[k];
        o->src[k] = m->src;
        if (c->variable) {
            o->counts[k] = counts[k];
            o->displs[k] = (int)displ;
        }
        if (m->bytes > 0) {
            char *at = o->vals + displ * rt->extent;
            int pos = 0;
            if (rt->contig)
                ct_memcpy(at + rt->true_lb, got->data + m->off, (size_t)m->bytes);
            else
                CT_CALL(PMPI_Unpack(got->data + m->off, m->bytes, &pos, at, counts[k],
                                    c->recvtype, comm));
        }
        displ += counts[k];
    }
out:
    return rc;
}

static int write_outputs(const ct_sdde_args *c, ct_sdde_box *got, const ct_typeinfo *rt,
                         MPI_Comm comm)
{
    int rc = MPI_SUCCESS, n = got->n;
    int *counts = NULL;
    long total;
    outputs o;
    qsort(got->msgs, (size_t)n, sizeof *got->msgs, by_src);
    CT_ALLOC(counts, (size_t)n * sizeof(int));
    if ((rc = element_counts(c, got, rt, counts, &total)) != MPI_SUCCESS)
        goto out;
    if (c->alloc) {
        CT_CALL(allocate_outputs(c, n, total, rt, &o));
    } else {
        int cap = *c->recv_nnz;
        if (n > cap || (c->variable && total > *c->recv_size)) {
            if (c->variable)
                rc = bad(c, MPI_ERR_TRUNCATE, "%d message(s) of %ld elements in all arrived, "
                         "but recv_nnz = %d and recv_size = %d give room for fewer; nothing "
                         "written (recv_nnz and recv_size now say what is needed)",
                         n, total, cap, *c->recv_size);
            else
                rc = bad(c, MPI_ERR_TRUNCATE, "%d message(s) arrived, but recv_nnz = %d gives "
                         "room for fewer; nothing written (recv_nnz now says what is needed)",
                         n, cap);
            *c->recv_nnz = n;
            if (c->variable)
                *c->recv_size = (int)total;
            goto out;
        }
        o = (outputs){c->src, c->recvcounts, c->rdispls, c->recvvals};
    }
    rc = write_messages(c, got, counts, rt, &o, comm);
    if (c->alloc && rc != MPI_SUCCESS) {
        free(o.src);
        free(o.counts);
        free(o.displs);
        free(o.vals);
        goto out;
    }
    if (c->alloc) {
        *c->src_out = o.src;
        *c->recvvals_out = o.vals;
        if (c->variable) {
            *c->recvcounts_out = o.counts;
            *c->rdispls_out = o.displs;
        }
    }
    *c->recv_nnz = n;
    if (c->variable)
        *c->recv_size = (int)total;
out:
    free(counts);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The driver                                                          */
/* ------------------------------------------------------------------ */

/* What the skeleton (driver.h) runs a call with: the decision's args. */
typedef struct sdde_run {
    ct_sdde *x;
    const prepared *p;
    int me;
} sdde_run;

/* Runs the chosen algorithm, then delivers the message to itself (without
 * communication, and after the exchange: a local failure here can no longer
 * leave other ranks waiting). A call some rank's arguments made invalid
 * fails here (the caller says why) and is not counted. */
static int run_exchange(ct_ctx *ctx, const ct_choice *ch, const ct_decide_input *in)
{
    const sdde_run *r = in->args;
    ct_sdde *x = r->x;
    int rc = ch->alg->run.sdde(x, ctx, ch->params);
    x->cache->calls++;
    if (!x->any_invalid) /* as after a call the agreement stopped */
        x->cache->internode_msgs = x->internode;
    if (rc == MPI_SUCCESS && r->p->self >= 0 &&
        ct_sdde_box_copy(&x->got, r->me, r->p->self_ptr, (size_t)r->p->self_bytes) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    ctx->call_extra += r->p->send.staged_bytes + x->got.size;
    return rc == MPI_SUCCESS && x->any_invalid ? MPI_ERR_OTHER : rc;
}

static double bytes_sent(const void *args, const ct_ctx *ctx)
{
    (void)ctx;
    return ((const sdde_run *)args)->p->total_bytes;
}

/* Decided and agreed by ct_sdde_dispatch itself, which runs it with
 * ct_drive_run (no forward: the sparse exchanges have no MPI routine). */
static const ct_driver driver = {NULL, NULL, run_exchange, bytes_sent};

/* The error of a call some rank's arguments made invalid: the rank's own,
 * or for the others MPI_ERR_OTHER (said once, by one rank). */
static int invalid_elsewhere(const ct_sdde_args *c, const ct_ctx *ctx, int arg_rc)
{
    if (arg_rc != MPI_SUCCESS)
        return arg_rc;
    if (ctx->decide_rank == 0)
        ct_log_once("%s: another rank passed invalid arguments (its message says which); "
                    "nothing was written", c->fn);
    return MPI_ERR_OTHER;
}

int ct_sdde_dispatch(const ct_sdde_args *c, const ct_spec *forced)
{
    int rc, P, me, invalid = 0, all_known = 0;
    ct_ctx *ctx = NULL;
    ct_choice choice;
    prepared p = {.self = -1};
    ct_sdde x;
    memset(&x, 0, sizeof x);
    CT_CALL(PMPI_Comm_size(c->comm, &P));
    CT_CALL(PMPI_Comm_rank(c->comm, &me));
    int arg_rc = validate_and_prepare(c, &p, &x, P, me);
    CT_CALL(ct_ctx_get(c->comm, &ctx));
    if (cache_get(ctx, &x.cache) != MPI_SUCCESS && arg_rc == MPI_SUCCESS)
        arg_rc = MPI_ERR_NO_MEM;

    /* First a decision without communication: a forced spec, a cached one,
     * or rules that need no msg_size. */
    ct_coll coll = c->variable ? CT_COLL_ALLTOALLV_CRS : CT_COLL_ALLTOALL_CRS;
    /* No local_facts: the facts come from agree(), never from the decision. */
    sdde_run args = {&x, &p, me};
    ct_decide_input call = {.coll = coll, .args = &args, .defer_facts = 1};
    int decided = ct_decide_call(c->comm, &call, forced, &ctx, &choice) == MPI_SUCCESS &&
                  ctx != NULL;
    x.msg_size = call.have_facts ? call.facts.msg_size : -1;
    /* Not before one call on the communicator has passed the agreement: a
     * rank whose cache could not be allocated must not be the only one to
     * take the allreduce. */
    if (decided && (choice.alg->restrictions & CT_A_AGREES) && x.cache != NULL &&
        x.cache->agreed) {
        /* The algorithm's exchange carries the agreement: a rank with bad
         * arguments takes part with no messages, and nobody writes output
         * if any rank's arguments are invalid. */
        x.invalid = arg_rc != MPI_SUCCESS;
        if (x.invalid)
            x.out.n = 0;
    } else {
        /* Every rank agrees on validity (and the decision's facts) before any
         * message moves: a rank with bad arguments still takes part here. */
        CT_CALL(agree(ctx, &p, arg_rc, c->nnz_known, &call, &invalid, &all_known));
        if (invalid) {
            rc = invalid_elsewhere(c, ctx, arg_rc);
            goto out;
        }
        x.cache->agreed = 1; /* valid everywhere: no rank lacks its cache */
        /* The decision, if not made yet, with its facts and without further
         * communication. Its errors are agreed, and logged there. rma sizes
         * its window by the agreed msg_size (x.msg_size). */
        x.msg_size = call.facts.msg_size;
        if (!decided) {
            call.defer_facts = 0;
            rc = ct_decide_call(c->comm, &call, forced, &ctx, &choice);
            if (rc == MPI_SUCCESS && ctx == NULL) /* cannot happen: ct_ctx_get succeeded */
                rc = MPI_ERR_INTERN;
            if (rc != MPI_SUCCESS)
                goto out;
            x.msg_size = call.have_facts ? call.facts.msg_size : -1;
        }
    }

    x.ctx = ctx;
    x.tag_parity = (int)(x.cache->calls & 1u);
    x.known_nrecv = all_known ? *c->recv_nnz - (p.self >= 0) : -1;
    rc = ct_drive_run(&driver, ctx, &choice, &call);
    if (x.any_invalid) {
        rc = invalid_elsewhere(c, ctx, arg_rc);
        goto out;
    }
    if (rc != MPI_SUCCESS)
        goto out;
    rc = write_outputs(c, &x.got, &p.rt, ctx->comm);
out:
    ct_sdde_out_free(&x.out);
    ct_sdde_box_free(&x.got);
    ct_bytes_free(&p.send);
    return rc;
}
