/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_locality.c - what the locality-aware exchanges share ([Geyko2023]
 * section IV-D, Algorithms 4 and 5): aggregation per
 * destination node, and redistribution inside the node.
 *
 * Placement. The paper sends node m's aggregate to rank m * region_size +
 * local_rank, which assumes consecutive placement and equal nodes. Here the
 * partner on node m is the rank whose local index (coltune's topology:
 * position among the node's ranks in rank order) equals this rank's, or,
 * when node m is smaller (a short last node, uneven or cyclic placement),
 * local index modulo node m's size: deterministic, and every rank of node m
 * still receives aggregates. Any placement coltune's topology reports works;
 * no restriction is declared.
 *
 * Records. An aggregate is a sequence of records, an 8-byte header (two
 * ints: a rank and a byte count) then the message bytes. Between nodes the
 * rank is the final destination; inside the node it is the origin. An
 * aggregate larger than CT_SDDE_PIECE_BYTES (or COLTUNE_TEST_SDDE_PIECE)
 * travels as several messages cut at record boundaries (a record always
 * fits: CT_SDDE_MAX_MSG_BYTES).
 *
 * Lanes (locality_dense). Every rank sends one aggregate to its partner on
 * every other node and one buffer to every other rank of its node, empty or
 * not, each closed by an END record (a negative rank: -1 - flags). A rank
 * then knows from the topology alone how many aggregates it receives
 * (ct_sdde_lane_senders) and probes until that many have ended: no
 * reduction and no barrier. A sender's pieces share one tag and
 * communicator, so by MPI's non-overtaking rule the piece holding its END
 * record is matched last.
 *
 * The END records also carry the driver's agreement (CT_A_AGREES): flag 1
 * says the sender or a rank it heard from has invalid arguments. Every rank
 * of node m hears in the first exchange from one rank of m, so together
 * they hear from every rank of every other node, and in the second exchange
 * each forwards what it heard to the whole node: after both, every rank
 * knows whether any rank's arguments are invalid.
 */
#include "sdde/sdde_exchange.h"
#include "core/state.h"
#include "core/copy.h"

#include <stdlib.h>
#include <string.h>

enum { HEADER = 2 * (int)sizeof(int) };

/* The record that closes an aggregate of the lanes: rank -1 - flags. */
static int is_end(int rank) { return rank < 0; }

static void put_end(char *at, int flags)
{
    int h[2] = {-1 - flags, 0};
    memcpy(at, h, HEADER);
}

static void put_record(char *at, int rank, const char *data, int bytes)
{
    int h[2] = {rank, bytes};
    memcpy(at, h, HEADER);
    if (bytes > 0)
        ct_memcpy(at + HEADER, data, (size_t)bytes);
}

static const char *get_record(const char *at, int *rank, int *bytes)
{
    int h[2];
    memcpy(h, at, HEADER);
    *rank = h[0];
    *bytes = h[1];
    return at + HEADER;
}

/* ------------------------------------------------------------------ */
/* Node map and node communicator, once per communicator               */
/* ------------------------------------------------------------------ */

static int node_setup(ct_sdde *x)
{
    int rc = MPI_SUCCESS;
    ct_sdde_cache *c = x->cache;
    const ct_topo *t = &x->ctx->topo;
    const int P = x->ctx->size;
    if (c->node_ranks == NULL) {
        int *first = NULL, *ranks = NULL;
        CT_ALLOC(first, (size_t)(t->N + 1) * sizeof *first);
        ranks = malloc((size_t)P * sizeof *ranks);
        if (ranks == NULL) {
            free(first);
            return MPI_ERR_NO_MEM;
        }
        first[0] = 0;
        for (int n = 0; n < t->N; n++)
            first[n + 1] = first[n] + t->node_size[n];
        for (int r = 0; r < P; r++)
            ranks[first[t->node_of[r]] + t->local_of[r]] = r;
        c->node_first = first;
        c->node_ranks = ranks;
    }
    if (c->node_comm == MPI_COMM_NULL) { /* collective: every rank's first locality call */
        CT_CALL(PMPI_Comm_split(x->ctx->comm, t->node, t->local_rank, &c->node_comm));
        CT_CALL(PMPI_Comm_set_errhandler(c->node_comm, MPI_ERRORS_RETURN));
    }
out:
    return rc;
}

/* The rank of node m that this rank's aggregate for m goes to. */
static int partner(const ct_sdde *x, int m)
{
    const ct_topo *t = &x->ctx->topo;
    return x->cache->node_ranks[x->cache->node_first[m] + t->local_rank % t->node_size[m]];
}

/* ------------------------------------------------------------------ */
/* Pieces                                                              */
/* ------------------------------------------------------------------ */

/* Largest piece: COLTUNE_TEST_SDDE_PIECE (tests), else CT_SDDE_PIECE_BYTES. */
static size_t piece_bytes(void)
{
    int test = ct_settings_get()->test_sdde_piece;
    return test > 0 ? (size_t)test : (size_t)CT_SDDE_PIECE_BYTES;
}

/* Appends to o the records agg[from..to) for dest, in pieces. */
static int push_pieces(ct_sdde_out *o, int dest, const char *agg, size_t from, size_t to)
{
    int rc = MPI_SUCCESS;
    size_t start = from, at = from, limit = piece_bytes();
    while (at < to) {
        int rank, bytes;
        get_record(agg + at, &rank, &bytes);
        size_t rec = HEADER + (size_t)bytes;
        if (at > start && at + rec - start > limit) {
            CT_CALL(ct_sdde_out_push(o, dest, agg + start, (int)(at - start)));
            start = at;
        }
        at += rec;
    }
    CT_CALL(ct_sdde_out_push(o, dest, agg + start, (int)(at - start)));
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* Aggregation: buf[node] for every other node                         */
/* ------------------------------------------------------------------ */

typedef struct item {
    int key, index; /* sort key (node, or local index), then position */
} item;

static int by_key(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* A record to write: rank (destination between nodes, origin inside one),
 * and its message. */
typedef struct record {
    int rank;
    int bytes;
    const char *data;
} record;

/* Inside the node, group g (pack_groups) goes to local index g: its rank in
 * the node communicator. */
static int local_rank_of(const ct_sdde *x, int g)
{
    (void)x;
    return g;
}

/*
 * Writes recs, ordered by items (key: group), group after group into *buf,
 * and pushes each group's records in pieces to rank dest_of(x, g) into out:
 * groups 0 .. ngroups-1 but own. Without lanes, groups with no record are
 * not sent; with lanes, every group is, closed by an END record of flags.
 */
static int pack_groups(const ct_sdde *x, const record *recs, const item *items, int n,
                       int ngroups, int own, int (*dest_of)(const ct_sdde *x, int g),
                       int lanes, int flags, char **buf, size_t *total, ct_sdde_out *out)
{
    int rc = MPI_SUCCESS;
    size_t at = 0;
    *total = lanes ? (size_t)ngroups * HEADER : 0;
    for (int k = 0; k < n; k++)
        *total += HEADER + (size_t)recs[k].bytes;
    CT_ALLOC(*buf, *total ? *total : 1);
    for (int g = 0, k = 0; g < ngroups; g++) {
        size_t from = at;
        for (; k < n && items[k].key == g; k++) {
            const record *r = &recs[items[k].index];
            put_record(*buf + at, r->rank, r->data, r->bytes);
            at += HEADER + (size_t)r->bytes;
        }
        if (g == own || (!lanes && at == from))
            continue;
        if (lanes) {
            put_end(*buf + at, flags);
            at += HEADER;
        }
        CT_CALL(push_pieces(out, dest_of(x, g), *buf, from, at));
    }
out:
    return rc;
}

/* Pieces of o carrying at least one message (not only an END record). */
static long data_pieces(const ct_sdde_out *o)
{
    long n = 0;
    for (int i = 0; i < o->n; i++) {
        int rank, bytes;
        get_record(o->ptr[i], &rank, &bytes);
        n += !is_end(rank);
    }
    return n;
}

int ct_sdde_aggregate(ct_sdde *x, ct_sdde_local *L, int lanes)
{
    int rc = MPI_SUCCESS, n = 0;
    const ct_sdde_out *o = &x->out;
    const ct_topo *t = &x->ctx->topo;
    item *items = NULL;
    record *recs = NULL;
    size_t total;
    memset(L, 0, sizeof *L);
    CT_CALL(node_setup(x));
    /* region = get_region(proc) for every message to another node */
    CT_ALLOC(items, (size_t)o->n * sizeof *items);
    CT_ALLOC(recs, (size_t)o->n * sizeof *recs);
    for (int i = 0; i < o->n; i++) {
        int m = t->node_of[o->dest[i]];
        if (m == t->node)
            continue; /* redistributed inside this node (ct_sdde_redistribute) */
        recs[n] = (record){o->dest[i], o->bytes[i], o->ptr[i]};
        items[n] = (item){m, n};
        n++;
    }
    qsort(items, (size_t)n, sizeof *items, by_key);
    /* copy proc, size and sendvals[ctr:ctr+size] into buf[region]; buf[region]
     * goes to the rank of this local index on that region */
    CT_CALL(pack_groups(x, recs, items, n, t->N, t->node, partner, lanes, x->invalid, &L->agg,
                        &total, &L->out));
    x->internode += data_pieces(&L->out);
out:
    free(items);
    free(recs);
    return rc;
}

int ct_sdde_lane_senders(const ct_sdde *x)
{
    /* Rank l of node m sends to local index l mod q here: the l in
     * [0, size_m) congruent to this rank's local index i. */
    const ct_topo *t = &x->ctx->topo;
    int n = 0, q = t->node_size[t->node], i = t->local_rank;
    for (int m = 0; m < t->N; m++)
        if (m != t->node && t->node_size[m] > i)
            n += (t->node_size[m] - 1 - i) / q + 1;
    return n;
}

/* Whether the piece at data (bytes long) closes its aggregate; ORs the END
 * record's flags into *flags. */
static int piece_ends(const char *data, size_t bytes, int *flags)
{
    for (size_t at = 0; at < bytes;) {
        int rank, size;
        get_record(data + at, &rank, &size);
        if (is_end(rank)) {
            *flags |= -1 - rank;
            return 1;
        }
        at += HEADER + (size_t)size;
    }
    return 0;
}

int ct_sdde_exchange_lanes(MPI_Comm comm, int tag, const ct_sdde_out *o, int senders,
                           ct_sdde_box *box, int *flags)
{
    int rc = MPI_SUCCESS;
    MPI_Request *reqs = NULL;
    CT_ALLOC(reqs, (size_t)(o->n ? o->n : 1) * sizeof *reqs);
    for (int i = 0; i < o->n; i++)
        CT_CALL(PMPI_Isend(o->ptr[i], o->bytes[i], MPI_BYTE, o->dest[i], tag, comm, &reqs[i]));
    /* probe and receive until every sender's aggregate has ended */
    for (int ended = 0; ended < senders;) {
        MPI_Message msg;
        MPI_Status st;
        CT_CALL(PMPI_Mprobe(MPI_ANY_SOURCE, tag, comm, &msg, &st));
        CT_CALL(ct_sdde_recv_matched(box, &msg, &st));
        const ct_sdde_msg *m = &box->msgs[box->n - 1];
        ended += piece_ends(box->data + m->off, (size_t)m->bytes, flags);
    }
    CT_CALL(PMPI_Waitall(o->n, reqs, MPI_STATUSES_IGNORE));
out:
    free(reqs);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Redistribution inside the node                                      */
/* ------------------------------------------------------------------ */

/* Records to pass on inside this node: every record of the pieces received,
 * then this rank's own messages to ranks of its node. Records for this rank
 * itself are delivered at once. */
static int gather_records(ct_sdde *x, const ct_sdde_local *L, record **recs, item **items,
                          int *nrecs)
{
    int rc = MPI_SUCCESS, n = 0, cap = x->out.n;
    const ct_topo *t = &x->ctx->topo;
    const int me = x->ctx->rank;
    for (int k = 0; k < L->in.n; k++) /* count the records received */
        for (size_t at = 0; at < (size_t)L->in.msgs[k].bytes; cap++) {
            int dest, bytes;
            get_record(L->in.data + L->in.msgs[k].off + at, &dest, &bytes);
            at += HEADER + (size_t)bytes;
        }
    CT_ALLOC(*recs, (size_t)cap * sizeof **recs);
    CT_ALLOC(*items, (size_t)cap * sizeof **items);
    for (int k = 0; k < L->in.n; k++) {
        const ct_sdde_msg *m = &L->in.msgs[k];
        for (size_t at = 0; at < (size_t)m->bytes;) {
            int dest, bytes;
            const char *data = get_record(L->in.data + m->off + at, &dest, &bytes);
            at += HEADER + (size_t)bytes;
            if (is_end(dest))
                continue;
            if (dest < 0 || dest >= x->ctx->size || t->node_of[dest] != t->node) {
                rc = MPI_ERR_INTERN;
                ct_log_mpi_error(rc, "record for another node", __FILE__, __LINE__);
                goto out;
            }
            if (dest == me) {
                rc = ct_sdde_box_copy(&x->got, m->src, data, (size_t)bytes);
                if (rc != MPI_SUCCESS)
                    goto out;
                continue;
            }
            (*recs)[n] = (record){m->src, bytes, data};
            (*items)[n] = (item){t->local_of[dest], n};
            n++;
        }
    }
    for (int i = 0; i < x->out.n; i++) {
        int dest = x->out.dest[i];
        if (t->node_of[dest] != t->node)
            continue;
        (*recs)[n] = (record){me, x->out.bytes[i], x->out.ptr[i]};
        (*items)[n] = (item){t->local_of[dest], n};
        n++;
    }
    *nrecs = n;
out:
    return rc;
}

int ct_sdde_redistribute(ct_sdde *x, ct_sdde_local *L, int lanes)
{
    int rc = MPI_SUCCESS, n = 0;
    record *recs = NULL;
    item *items = NULL;
    char *buf = NULL;
    ct_sdde_out out = {0};
    ct_sdde_box in = {0};
    size_t total = 0;
    const ct_topo *t = &x->ctx->topo;
    MPI_Comm node = x->cache->node_comm;
    const int tag = ct_sdde_tag(x, CT_TAG_SDDE_LOCAL);
    CT_CALL(gather_records(x, L, &recs, &items, &n));
    qsort(items, (size_t)n, sizeof *items, by_key);
    /* buf[proc] for every local rank proc, records (origin, size, data); with
     * lanes the END records forward what the first exchange told */
    CT_CALL(pack_groups(x, recs, items, n, t->node_size[t->node], t->local_rank,
                        local_rank_of, lanes, x->invalid | x->any_invalid, &buf, &total, &out));
    /* non-blocking send of buf[proc] to proc; MPI_Allreduce(sizes) (here a
     * Reduce_scatter_block on the node); probe for messages and receive.
     * With lanes every other rank of the node sends one buffer. */
    if (lanes)
        CT_CALL(ct_sdde_exchange_lanes(node, tag, &out, t->node_size[t->node] - 1, &in,
                                       &x->any_invalid));
    else
        CT_CALL(ct_sdde_exchange_personalized(node, tag, &out, -1, &in));
    /* every record received is a message for this rank from its origin */
    for (int k = 0; k < in.n; k++) {
        for (size_t pos = 0; pos < (size_t)in.msgs[k].bytes;) {
            int origin, bytes;
            const char *data = get_record(in.data + in.msgs[k].off + pos, &origin, &bytes);
            pos += HEADER + (size_t)bytes;
            if (is_end(origin))
                continue;
            rc = ct_sdde_box_copy(&x->got, origin, data, (size_t)bytes);
            if (rc != MPI_SUCCESS)
                goto out;
        }
    }
    x->ctx->call_extra += total + L->in.size + in.size;
out:
    free(recs);
    free(items);
    free(buf);
    ct_sdde_out_free(&out);
    ct_sdde_box_free(&in);
    return rc;
}

void ct_sdde_local_free(ct_sdde_local *L)
{
    free(L->agg);
    ct_sdde_out_free(&L->out);
    ct_sdde_box_free(&L->in);
}
