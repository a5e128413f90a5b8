/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alltoallv_tuna.c - TuNA, the tunable-radix non-uniform Bruck all-to-all
 * ([Fan2024] section III, Algorithm 1), and the TuNA engine the hierarchical
 * variants run inside each node (section IV-A, alltoallv_tuna_hier.c).
 *
 * Rotated index (III-A): rank p's block for destination d sits in slot
 * o = (d - p) mod P. Slots are written in base r with w = ceil(log_r P)
 * digits; round (x, z) sends every slot whose x-th digit is z to rank
 * (p + z r^x) mod P and receives the same slots from (p - z r^x) mod P. A
 * slot has then moved by the value of its digits so far; after the round of
 * its highest non-zero digit it is at its destination and goes straight into
 * the receive buffer at the caller's rdispls (no final rotation phase, III-B).
 * Until then it waits in the temporary buffer T, which has one entry for each
 * of the B = P - (K + 1) slots that are not direct (III-C; none when
 * r >= P - 1), at index t(o) (tuna_index.c).
 *
 * No global maximum block. Algorithm 1 starts with an allreduce of the
 * largest block M so that T can be B blocks of M bytes and every receive can
 * be posted with an upper bound. On few cores that allreduce costs as much as
 * a whole small-block exchange, so here nothing needs M:
 *  - T entry t holds, at an offset of its own, as many bytes as the largest
 *    block that has waited there during the call (never more than the
 *    paper's B * M in all);
 *  - a round's metadata message is received by matched probe, so its length
 *    need not be known; the round's data rides in the same message when the
 *    round is small (TUNA_COMBINED_MAX) or follows in exact-size messages;
 *  - sizes travel as 64-bit integers and data in messages of at most
 *    TUNA_CHUNK bytes, so any block size and offset works and the call needs
 *    no agreement on int-sized offsets either.
 * A call therefore starts exchanging at once, with no collective before it.
 *
 * Each round first tells the receiver the sizes of the blocks it will get
 * (III-B), then moves them. The sizes of blocks that reach their destination
 * in the round are known there (recvcounts) and are left out. To keep a
 * round cheap:
 *  - the rounds of one digit position x (z = 1 .. r-1) move disjoint sets of
 *    slots and run concurrently: w synchronisation steps instead of K;
 *  - a round whose sizes are all known sends its data alone, received by an
 *    exact receive posted before any send; a round of one such block goes
 *    from the send to the receive buffer without copies (r >= P - 1: every
 *    round, i.e. the linear exchange);
 *  - a round that moves no data and no sizes sends no message;
 *  - a digit waits for its receives only: its sends complete during the
 *    next digit (digits alternate between two send buffers), so a digit
 *    costs one wait for the peers, not two (a shared-memory transport
 *    completes a send that does not fit its smallest slot only when the
 *    receiver has taken it);
 *  - the buffers (T, round buffers) are cached in the context (a request's
 *    are its own, kept from start to start).
 * A receiver tells the two forms of a metadata message apart by its length:
 * header plus every announced byte (combined) or the header alone (split).
 *
 * Rounds of different digits never share a peer (z r^x = z' r^y with z, z' < r
 * only when x = y and z = z'), so per-peer message order pairs every probe
 * and receive with the right message, also when a peer runs ahead into the
 * next call.
 *
 * Nonblocking and persistent (ct_alltoallv_tuna_build): the same engine,
 * taken on without blocking. At the start the own block is copied and the
 * first digit posted (its known-size receives and its sends); each test or
 * wait takes the digits on as far as what has arrived allows (metadata by
 * MPI_Improbe, receives by MPI_Testall), forwarding each digit's slots to
 * the next digit's peers; the completion waits for the last digit's sends
 * and unpacks a non-contiguous receive side. Its buffers are the request's
 * own (the blocking call's are the context's).
 *
 * Cost: K <= w (r - 1) messages per rank in w steps (latency), each slot
 * travelling once per non-zero digit, at most w (r - 1) r^(w-1) blocks in all
 * (bandwidth), each copied into and out of the round buffers per hop; r = 2
 * minimises messages, r = P bytes.
 */
#include "alltoallv/tuna.h"
#include "alltoallv/tuna_index.h"
#include "core/copy.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A round's metadata and data travel in one message up to this many bytes.
 * (Both limits may be lowered at build time to exercise the other paths.) */
#ifndef TUNA_COMBINED_MAX
#define TUNA_COMBINED_MAX ((size_t)64 * 1024)
#endif
/* Largest single data message; a longer transfer uses several. */
#ifndef TUNA_CHUNK
#define TUNA_CHUNK ((size_t)1 << 30)
#endif

#define ALIGN8(n) (((n) + (size_t)7) & ~(size_t)7)

/* The context buffers the engine uses (ct_ctx_buffer). Digits alternate
 * between the two send buffers: a digit's sends complete during the next
 * digit. */
enum { BUF_T, BUF_SEND, BUF_SEND_ODD, BUF_RECV_KNOWN, BUF_RECV_HDR, BUF_RECV_DATA, NBUFS };
static const ct_ctx_buf_key tuna_buf[NBUFS] = {
    [BUF_T] = {"TuNA T"},
    [BUF_SEND] = {"TuNA send"},
    [BUF_SEND_ODD] = {"TuNA send, odd digits"},
    [BUF_RECV_KNOWN] = {"TuNA receive, known sizes"},
    [BUF_RECV_HDR] = {"TuNA receive, headers"},
    [BUF_RECV_DATA] = {"TuNA receive, data"},
};

typedef int64_t hdr_t; /* one size in a header (bytes of the packed format) */

/* How a round's incoming data arrives. */
enum { IN_NONE, IN_KNOWN, IN_DIRECT, IN_PROBED };

/* One round (x, z) as both of its ends see it. */
typedef struct round {
    int n, hn;          /* slots; header entries (blocks whose size the receiver cannot know) */
    int to, from;       /* ranks in ctx->comm */
    int direct;         /* one block whose size the receiver knows: no copies */
    int in;             /* IN_* */
    int discard;        /* IN_KNOWN: its one block did not fit its target: dropped */
    char *ddst;         /* IN_DIRECT: the target the block is received into */
    int *slots;         /* [n] ascending */
    size_t sbytes;      /* data this rank sends */
    size_t known;       /* data this rank receives whose sizes it knows */
    size_t soff, roff;  /* offsets of the round in its send / receive buffer */
    size_t hlen;        /* IN_PROBED: bytes of the metadata message received */
    size_t split;       /* IN_PROBED: data bytes that follow the header (0: combined) */
    MPI_Message msg;
    const hdr_t *rhdr;  /* set once the receive buffers stop moving */
    const char *rdata;
} round;

/* Where the engine's buffers and requests live: the context's (a blocking
 * call) or, for a request, its own, kept from start to start: a persistent
 * request's later starts allocate nothing. */
typedef struct own_mem {
    char *buf[NBUFS];
    size_t cap[NBUFS];
    MPI_Request *reqs;
    int nreqs;
} own_mem;

/* Where a run is: the phases of a digit (tuna_advance), then the last
 * digit's sends, then done. */
enum { PH_PROBE, PH_HEADERS, PH_DATA, PH_LAST, PH_DONE };

typedef struct tuna {
    const ct_tuna_group *g;
    ct_ctx *ctx;        /* a blocking call's (its buffers); NULL for a request */
    own_mem *own;       /* a request's memory; NULL for a blocking call */
    MPI_Comm comm;
    int tag, meta_tag;  /* of the data and of the metadata messages */
    int r, zmax;
    int phase_slots;    /* most slots moved by the rounds of one digit */
    long long pw;       /* the current digit's weight r^x */
    size_t *sz;         /* [size * C] current bytes of block c of slot o */
    size_t *toff, *tcap; /* [B * C] where T entry (t, c) starts in T, its capacity */
    size_t tused;       /* bytes of T handed out */
    char *T;            /* the buffer T (tuna_buf[BUF_T]), where it is now */
    int *slots;         /* [phase_slots] the slots of the current digit's rounds */
    round *rounds;      /* [zmax] */
    int nreq;           /* requests posted in reqs */
    int npend;          /* reqs[0, npend): the previous digit's sends, pending */
    int send_buf;       /* BUF_SEND or BUF_SEND_ODD: this digit's send buffer */
    size_t pend_bytes;  /* bytes of the previous digit's send buffer */
    size_t send_bytes;  /* bytes of this digit's send buffer */
    size_t peak;        /* most bytes of round buffers one digit used */
    size_t peak_max;    /* the most over the digits */
    int err;            /* a final block did not fit its target: returned at the end */
    /* The run's place: the digit x, its rounds (nz), its phase and, in it,
     * the next round to probe, the header receives reqs[h0, h1), the sends
     * reqs[s0, s1) and the requests completed before the next digit
     * reqs[0, rest). */
    MPI_Request *reqs;
    int x, nz, phase, probe_k, h0, h1, s0, s1, rest;
    int rc;             /* the first error, ending the run */
} tuna;

static int member(const ct_tuna_group *g, int j) { return g->rank_of ? g->rank_of[j] : j; }

/* Is block c of a slot that reaches its destination in this round (fin)
 * one whose size the receiver knows? */
static int known_there(const ct_tuna_group *g, int fin, int c)
{
    return fin && c >= g->known_c && c - g->known_c < g->known_n;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                              */
/* ------------------------------------------------------------------ */

static void tuna_init(tuna *t, const ct_tuna_group *grp, ct_ctx *ctx, int radix)
{
    const int P = grp->size;
    memset(t, 0, sizeof *t);
    t->g = grp;
    t->ctx = ctx;
    t->r = radix;
    t->zmax = radix - 1 < P - 1 ? radix - 1 : P - 1;
    for (long long pw = 1, x = 0; pw < P; pw *= radix, x++) {
        int slots = 0;
        for (int z = 1; z <= ct_tuna_digit_rounds(P, radix, pw); z++)
            slots += ct_tuna_round_slots(P, radix, (int)x, z, NULL);
        t->phase_slots = slots > t->phase_slots ? slots : t->phase_slots;
    }
}

/* Carves the scratch (base == NULL: only measures it). */
static size_t tuna_layout(tuna *t, char *base)
{
    const ct_tuna_group *g = t->g;
    const size_t BC = (size_t)ct_tuna_tsize(g->size, t->r) * g->C;
    size_t off = 0;
    CT_CARVE(base, off, t->sz, size_t, (size_t)g->size * g->C);
    CT_CARVE(base, off, t->toff, size_t, BC);
    CT_CARVE(base, off, t->tcap, size_t, BC);
    CT_CARVE(base, off, t->slots, int, t->phase_slots);
    CT_CARVE(base, off, t->rounds, round, t->zmax);
    return off;
}

size_t ct_tuna_scratch_bytes(const ct_tuna_group *grp, int radix)
{
    tuna t;
    tuna_init(&t, grp, NULL, radix);
    return tuna_layout(&t, NULL);
}

/* Grows a request's buffer to need bytes at least, keeping its contents
 * (as ct_ctx_buffer does the context's). */
static char *own_buffer(own_mem *m, int which, size_t need)
{
    if (need > m->cap[which]) {
        const size_t grown = m->cap[which] * 2 > need ? m->cap[which] * 2 : need;
        char *p = realloc(m->buf[which], grown);
        if (p == NULL)
            return NULL;
        m->buf[which] = p;
        m->cap[which] = grown;
    }
    return m->buf[which];
}

/* A buffer of the run (which: BUF_*), the context's or the request's, at
 * least need bytes, its contents kept; NULL on failure. */
static char *buffer(tuna *t, int which, size_t need)
{
    need = need > 0 ? need : 1;
    char *p = t->own != NULL ? own_buffer(t->own, which, need)
                             : ct_ctx_buffer(t->ctx, &tuna_buf[which], need);
    if (p == NULL)
        ct_log_mpi_error(MPI_ERR_NO_MEM, "malloc(TuNA buffer)", __FILE__, __LINE__);
    return p;
}

/* Room for n requests in t->reqs, the context's or the request's, keeping
 * those posted; NULL on failure. */
static MPI_Request *requests(tuna *t, int n)
{
    own_mem *m = t->own;
    if (m == NULL)
        return t->reqs = ct_ctx_requests(t->ctx, n);
    if (n > m->nreqs) {
        const int grown = m->nreqs * 2 > n ? m->nreqs * 2 : n;
        MPI_Request *r = realloc(m->reqs, (size_t)grown * sizeof *r);
        if (r == NULL)
            return NULL;
        m->reqs = r;
        m->nreqs = grown;
    }
    return t->reqs = m->reqs;
}

/* A round buffer of the current digit, counted in its peak. */
static char *digit_buffer(tuna *t, int which, size_t need)
{
    char *p = buffer(t, which, need);
    if (p != NULL)
        t->peak += need;
    return p;
}

/* ------------------------------------------------------------------ */
/* T: one entry per non-direct slot (III-C), sized by what arrives     */
/* ------------------------------------------------------------------ */

static size_t tentry(const tuna *t, int o, int c)
{
    return (size_t)ct_tuna_tindex(o, t->r) * t->g->C + c;
}

/* Where block c of slot o waits in T (valid until T grows). */
static char *tslot(tuna *t, int o, int c)
{
    return t->T + t->toff[tentry(t, o, c)];
}

/* Makes T entry (o, c) hold bytes; its old contents have left already. */
static int tslot_reserve(tuna *t, int o, int c, size_t bytes)
{
    const size_t e = tentry(t, o, c);
    if (bytes <= t->tcap[e])
        return MPI_SUCCESS;
    char *T = buffer(t, BUF_T, t->tused + bytes);
    if (T == NULL)
        return MPI_ERR_NO_MEM;
    t->T = T;
    t->toff[e] = t->tused;
    t->tcap[e] = bytes;
    t->tused = ALIGN8(t->tused + bytes);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

static int post(tuna *t, int send, void *buf, int count, MPI_Datatype type, int peer, int tag)
{
    MPI_Request *reqs = requests(t, t->nreq + 1); /* keeps the pending ones */
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    if (send)
        return PMPI_Isend(buf, count, type, peer, tag, t->comm, &reqs[t->nreq++]);
    return PMPI_Irecv(buf, count, type, peer, tag, t->comm, &reqs[t->nreq++]);
}

/* len data bytes, in messages of at most TUNA_CHUNK bytes (none when len is 0). */
static int post_bytes(tuna *t, int send, const char *buf, size_t len, int peer)
{
    for (size_t off = 0; off < len; off += TUNA_CHUNK) {
        const int n = (int)(len - off < TUNA_CHUNK ? len - off : TUNA_CHUNK);
        int rc = post(t, send, (char *)buf + off, n, MPI_BYTE, peer, t->tag);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* One round                                                           */
/* ------------------------------------------------------------------ */

static void round_plan(tuna *t, round *rd, int x, int z)
{
    const ct_tuna_group *g = t->g;
    const int P = g->size, C = g->C, me = g->index;
    const int dist = (int)(z * t->pw);
    rd->n = ct_tuna_round_slots(P, t->r, x, z, rd->slots);
    /* III-A: send to the rank z r^x ahead, receive from the one z r^x behind
     * (Algorithm 1 lines 12-13 name them the other way round, for its I[]). */
    rd->to = member(g, ct_tuna_peer(P, me, dist));
    rd->from = member(g, ct_tuna_peer(P, me, -dist));
    rd->hn = 0;
    rd->sbytes = rd->known = 0;
    for (int k = 0; k < rd->n; k++) {
        const int o = rd->slots[k];
        const int fin = ct_tuna_arrives(o, t->pw, t->r); /* o's highest digit is x */
        for (int c = 0; c < C; c++) {
            rd->sbytes += t->sz[o * C + c];
            if (known_there(g, fin, c)) /* arriving from member me - o */
                rd->known += g->known(g->arg, ct_tuna_peer(P, me, -o), c);
            else
                rd->hn++;
        }
    }
    rd->direct = rd->n == 1 && C == 1 && rd->hn == 0;
    rd->in = rd->hn > 0 ? IN_PROBED : rd->known == 0 ? IN_NONE
                                    : rd->direct   ? IN_DIRECT
                                                   : IN_KNOWN;
    rd->split = 0;
    rd->discard = 0;
}

/* Where block c of slot o is now at this rank: still in the send buffer when
 * no lower digit has moved it (o mod r^x == 0), else in T. */
static const char *slot_data(tuna *t, int o, int c)
{
    size_t bytes;
    if (ct_tuna_in_send_buffer(o, t->pw))
        return t->g->source(t->g->arg, ct_tuna_peer(t->g->size, t->g->index, o), c, &bytes);
    return tslot(t, o, c);
}

/* Bytes of the round's metadata message as sent: the header, plus the data
 * when the round is small enough to travel combined. */
static size_t round_meta_bytes(const round *rd)
{
    const size_t hb = (size_t)rd->hn * sizeof(hdr_t);
    return hb + rd->sbytes <= TUNA_COMBINED_MAX ? hb + rd->sbytes : hb;
}

/* Bytes the round occupies in the send buffer: header and data. */
static size_t round_send_bytes(const round *rd)
{
    return rd->hn == 0 && rd->sbytes == 0 ? 0 : (size_t)rd->hn * sizeof(hdr_t) + rd->sbytes;
}

/* Header (sizes the receiver cannot know) and data of a round, into out. */
static void round_pack(tuna *t, const round *rd, char *out)
{
    const ct_tuna_group *g = t->g;
    hdr_t *hdr = (hdr_t *)out;
    char *data = out + (size_t)rd->hn * sizeof(hdr_t);
    int h = 0;
    for (int k = 0; k < rd->n; k++) {
        const int o = rd->slots[k], fin = ct_tuna_arrives(o, t->pw, t->r);
        for (int c = 0; c < g->C; c++) {
            const size_t b = t->sz[o * g->C + c];
            if (!known_there(g, fin, c))
                hdr[h++] = (hdr_t)b;
            if (b > 0) {
                ct_memcpy(data, slot_data(t, o, c), b);
                data += b;
            }
        }
    }
}

/* Size of block c of slot o arriving at this rank; h walks the header. */
static size_t arriving_size(const tuna *t, const round *rd, int *h, int o, int c)
{
    const ct_tuna_group *g = t->g;
    if (known_there(g, ct_tuna_arrives(o, t->pw, t->r), c))
        return g->known(g->arg, ct_tuna_peer(g->size, g->index, -o), c);
    return (size_t)rd->rhdr[(*h)++];
}

/* Total data bytes a received header announces; -1 when a size is invalid. */
static long long round_incoming(const tuna *t, const round *rd)
{
    long long total = 0;
    for (int k = 0, h = 0; k < rd->n; k++)
        for (int c = 0; c < t->g->C; c++) {
            const int from_hdr = !known_there(t->g, ct_tuna_arrives(rd->slots[k], t->pw, t->r), c);
            if (from_hdr && rd->rhdr[h] < 0)
                return -1;
            const size_t b = arriving_size(t, rd, &h, rd->slots[k], c);
            if (b > (size_t)(LLONG_MAX / 2) - (size_t)total)
                return -1;
            total += (long long)b;
        }
    return total;
}

/*
 * Where block c of the bundle from member src lands on its last hop. A
 * block its target refuses (NULL: longer than its buffer, or no room) is
 * dropped and the exchange returns MPI_ERR_TRUNCATE after its last digit:
 * stopping at once would leave the peers of later digits waiting.
 */
static char *final_target(tuna *t, int src, int c, size_t bytes)
{
    char *dst = t->g->target(t->g->arg, src, c, bytes);
    if (dst == NULL && t->err == MPI_SUCCESS)
        t->err = MPI_ERR_TRUNCATE;
    return dst;
}

/* Stores the received blocks: final ones through target(), the others in T. */
static int round_unpack(tuna *t, const round *rd)
{
    const ct_tuna_group *g = t->g;
    const int P = g->size, C = g->C, me = g->index;
    const char *data = rd->rdata;
    int rc = MPI_SUCCESS;
    for (int k = 0, h = 0; k < rd->n; k++) {
        const int o = rd->slots[k], fin = ct_tuna_arrives(o, t->pw, t->r);
        const int src = ct_tuna_peer(P, me, -o); /* the member this slot started from */
        for (int c = 0; c < C; c++) {
            const size_t b = arriving_size(t, rd, &h, o, c);
            char *dst;
            if (!fin) {
                t->sz[o * C + c] = b;
                CT_CALL(tslot_reserve(t, o, c, b));
            }
            if (b == 0)
                continue;
            dst = fin ? final_target(t, src, c, b) : tslot(t, o, c);
            if (dst != NULL)
                ct_memcpy(dst, data, b);
            data += b;
        }
    }
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The rounds of one digit, run concurrently                           */
/* ------------------------------------------------------------------ */

/* Receives whose sizes are all known, posted before any send: one block
 * straight into its target (into the known-receive buffer, to be dropped,
 * when the target refuses it), several into the known-receive buffer. */
static int digit_post_known(tuna *t, int nz)
{
    int rc = MPI_SUCCESS;
    const ct_tuna_group *g = t->g;
    size_t total = 0;
    char *buf;
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in == IN_DIRECT) {
            const int src = ct_tuna_peer(g->size, g->index, -rd->slots[0]);
            rd->ddst = final_target(t, src, 0, rd->known);
            if (rd->ddst == NULL) {
                rd->in = IN_KNOWN;
                rd->discard = 1;
            }
        }
        if (rd->in == IN_KNOWN) {
            rd->roff = total;
            total = ALIGN8(total + rd->known);
        }
    }
    buf = digit_buffer(t, BUF_RECV_KNOWN, total);
    if (buf == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in == IN_KNOWN) {
            rd->rdata = buf + rd->roff;
            CT_CALL(post_bytes(t, 0, rd->rdata, rd->known, rd->from));
        } else if (rd->in == IN_DIRECT) {
            CT_CALL(post_bytes(t, 0, rd->ddst, rd->known, rd->from));
        }
    }
out:
    return rc;
}

/* Packs and posts every send of the digit. */
static int digit_post_sends(tuna *t, int nz)
{
    int rc = MPI_SUCCESS;
    const ct_tuna_group *g = t->g;
    size_t total = 0;
    char *buf;
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        rd->soff = total;
        if (!rd->direct)
            total = ALIGN8(total + round_send_bytes(rd));
    }
    buf = digit_buffer(t, t->send_buf, total);
    if (buf == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    t->send_bytes = total;
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        char *out = buf + rd->soff;
        if (rd->direct) { /* straight from the send buffer */
            size_t bytes;
            const char *src =
                g->source(g->arg, ct_tuna_peer(g->size, g->index, rd->slots[0]), 0, &bytes);
            CT_CALL(post_bytes(t, 1, src, rd->sbytes, rd->to));
            continue;
        }
        if (round_send_bytes(rd) == 0)
            continue; /* nothing to say: the receiver knows (hn == 0, no data) */
        round_pack(t, rd, out);
        if (rd->hn == 0) { /* sizes known there: data alone */
            CT_CALL(post_bytes(t, 1, out, rd->sbytes, rd->to));
            continue;
        }
        const size_t meta = round_meta_bytes(rd), hb = (size_t)rd->hn * sizeof(hdr_t);
        CT_CALL(post(t, 1, out, (int)meta, MPI_BYTE, rd->to, t->meta_tag));
        if (meta == hb) /* split: the data follows */
            CT_CALL(post_bytes(t, 1, out + hb, rd->sbytes, rd->to));
    }
out:
    return rc;
}

/* Finds every metadata message of the digit by matched probe: blocking, all
 * of them; else those that have arrived (*found once all have). */
static int digit_probe(tuna *t, int block, int *found)
{
    int rc = MPI_SUCCESS, count, flag = 1;
    MPI_Status st;
    for (; t->probe_k < t->nz; t->probe_k++) {
        round *rd = &t->rounds[t->probe_k];
        if (rd->in != IN_PROBED)
            continue;
        if (block)
            CT_CALL(PMPI_Mprobe(rd->from, t->meta_tag, t->comm, &rd->msg, &st));
        else
            CT_CALL(PMPI_Improbe(rd->from, t->meta_tag, t->comm, &flag, &rd->msg, &st));
        if (!flag)
            break;
        CT_CALL(PMPI_Get_count(&st, MPI_BYTE, &count));
        rd->hlen = (size_t)count;
    }
out:
    *found = t->probe_k == t->nz;
    return rc;
}

/* Receives the probed metadata messages, all at once so that the transfers
 * overlap: reqs[h0, h1). */
static int digit_recv_headers(tuna *t)
{
    int rc = MPI_SUCCESS;
    size_t total = 0;
    char *hbuf;
    for (int k = 0; k < t->nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in != IN_PROBED)
            continue;
        rd->roff = total;
        total = ALIGN8(total + rd->hlen);
    }
    hbuf = digit_buffer(t, BUF_RECV_HDR, total);
    if (hbuf == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    t->h0 = t->nreq;
    for (int k = 0; k < t->nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in != IN_PROBED)
            continue;
        rd->rhdr = (const hdr_t *)(hbuf + rd->roff);
        MPI_Request *reqs = requests(t, t->nreq + 1);
        if (reqs == NULL)
            CT_CALL(MPI_ERR_NO_MEM);
        CT_CALL(PMPI_Imrecv(hbuf + rd->roff, (int)rd->hlen, MPI_BYTE, &rd->msg,
                            &reqs[t->nreq++]));
    }
out:
    t->h1 = t->nreq;
    return rc;
}

/* Reverses reqs[a, b). */
static void reverse(MPI_Request *reqs, int a, int b)
{
    for (b--; a < b; a++, b--) {
        MPI_Request q = reqs[a];
        reqs[a] = reqs[b];
        reqs[b] = q;
    }
}

/* Once the headers are in: checks each announces exactly what arrives,
 * posts the receives of the data that follows split headers, and moves
 * this digit's sends, reqs[s0, s1), behind everything else: the rest,
 * reqs[0, rest), completes before the next digit; the sends stay pending
 * into it (or to the end of the exchange). */
static int digit_recv_data(tuna *t)
{
    int rc = MPI_SUCCESS;
    size_t data = 0;
    char *dbuf;
    for (int k = 0; k < t->nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in != IN_PROBED)
            continue;
        const size_t hb = (size_t)rd->hn * sizeof(hdr_t);
        rd->rdata = (const char *)rd->rhdr + hb;
        /* The header must announce exactly what arrives before anything is stored. */
        const long long in = rd->hlen >= hb ? round_incoming(t, rd) : -1;
        if (in < 0 || (rd->hlen != hb + (size_t)in && rd->hlen != hb))
            CT_CALL(MPI_ERR_TRUNCATE);
        rd->split = rd->hlen == hb ? (size_t)in : 0;
        if (rd->split > 0 && hb + (size_t)in <= TUNA_COMBINED_MAX)
            CT_CALL(MPI_ERR_TRUNCATE); /* the sender would have combined it */
        data = ALIGN8(data + rd->split);
    }
    dbuf = digit_buffer(t, BUF_RECV_DATA, data);
    if (dbuf == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    data = 0;
    for (int k = 0; k < t->nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->in != IN_PROBED || rd->split == 0)
            continue;
        rd->rdata = dbuf + data;
        CT_CALL(post_bytes(t, 0, rd->rdata, rd->split, rd->from));
        data = ALIGN8(data + rd->split);
    }
    /* Rotate reqs[s0, nreq) so the sends come last (handles may move). */
    reverse(t->reqs, t->s0, t->s1);
    reverse(t->reqs, t->s1, t->nreq);
    reverse(t->reqs, t->s0, t->nreq);
    t->rest = t->nreq - (t->s1 - t->s0);
out:
    return rc;
}

/* Rounds (x, z), z = 1 .. r-1 with z r^x < P: disjoint slots (x-th digit
 * z). Plans them, posts the receives whose sizes are known and every send. */
static int digit_begin(tuna *t)
{
    int rc = MPI_SUCCESS, nz = 0, used = 0;
    t->nreq = t->npend; /* the previous digit's sends, still pending */
    t->send_buf = t->x % 2 ? BUF_SEND_ODD : BUF_SEND;
    t->send_bytes = 0;
    t->peak = t->pend_bytes; /* the previous digit's send buffer is still in use */
    for (int z = 1; z <= ct_tuna_digit_rounds(t->g->size, t->r, t->pw); z++, nz++) {
        round *rd = &t->rounds[nz];
        rd->slots = t->slots + used;
        round_plan(t, rd, t->x, z);
        used += rd->n;
    }
    t->nz = nz;
    t->probe_k = 0;
    t->phase = PH_PROBE;
    CT_CALL(digit_post_known(t, nz));
    t->s0 = t->nreq;
    CT_CALL(digit_post_sends(t, nz));
out:
    t->s1 = t->nreq;
    return rc;
}

/* The digit's receives have completed: its sends become the pending ones,
 * its blocks are stored, and the next digit begins (or the last sends are
 * waited for). */
static int digit_end(tuna *t)
{
    int rc = MPI_SUCCESS;
    const int nsend = t->s1 - t->s0;
    if (nsend > 0)
        memmove(t->reqs, t->reqs + t->rest, (size_t)nsend * sizeof *t->reqs);
    t->npend = t->nreq = nsend;
    t->pend_bytes = t->send_bytes;
    for (int k = 0; k < t->nz; k++) {
        const round *rd = &t->rounds[k];
        if ((rd->in == IN_KNOWN && !rd->discard) || rd->in == IN_PROBED)
            CT_CALL(round_unpack(t, rd));
    }
    t->peak_max = t->peak > t->peak_max ? t->peak : t->peak_max;
    /* Digit positions x = 0 .. w-1 in order: a slot's digits are used low to high. */
    t->pw *= t->r;
    t->x++;
    if (t->pw < t->g->size)
        return digit_begin(t);
    t->phase = PH_LAST;
out:
    return rc;
}

/* Completes reqs[first, first + n): blocking, or *flag 0 while one is
 * still in flight. */
static int complete(tuna *t, int first, int n, int block, int *flag)
{
    *flag = 1;
    if (n == 0)
        return MPI_SUCCESS;
    if (block)
        return PMPI_Waitall(n, t->reqs + first, MPI_STATUSES_IGNORE);
    return PMPI_Testall(n, t->reqs + first, flag, MPI_STATUSES_IGNORE);
}

/* ------------------------------------------------------------------ */
/* The engine                                                          */
/* ------------------------------------------------------------------ */

/* The run's start: every slot where it begins, the own bundle copied, the
 * first digit's messages posted. */
static int tuna_begin(tuna *t)
{
    const ct_tuna_group *grp = t->g;
    const int P = grp->size, C = grp->C, me = grp->index;
    t->pw = 1;
    t->x = 0;
    t->npend = t->nreq = 0;
    t->pend_bytes = t->peak_max = t->tused = 0;
    t->err = t->rc = MPI_SUCCESS;
    t->T = buffer(t, BUF_T, 0); /* grown by tslot_reserve */
    if (t->T == NULL)
        return t->rc = MPI_ERR_NO_MEM;
    memset(t->tcap, 0, (size_t)ct_tuna_tsize(P, t->r) * C * sizeof *t->tcap);
    /* Slot o starts as the bundle for member (me + o) mod P (III-A rotation). */
    for (int o = 0; o < P; o++)
        for (int c = 0; c < C; c++)
            (void)grp->source(grp->arg, ct_tuna_peer(P, me, o), c, &t->sz[o * C + c]);
    /* Slot 0 is this rank's own bundle: it never travels. */
    for (int c = 0; c < C; c++) {
        size_t b;
        const char *src = grp->source(grp->arg, me, c, &b);
        char *dst = b > 0 ? final_target(t, me, c, b) : NULL;
        if (dst != NULL)
            ct_memcpy(dst, src, b);
    }
    if (P == 1) {
        t->phase = PH_LAST;
        return MPI_SUCCESS;
    }
    t->rc = digit_begin(t);
    return t->rc;
}

/* After an error: every message still posted cancelled (a receive that has
 * not matched, a send not yet taken) and completed, so that none reads or
 * writes a buffer after the run (a request's own are freed with it). */
static void abandon(tuna *t)
{
    for (int i = 0; i < t->nreq; i++)
        if (t->reqs[i] != MPI_REQUEST_NULL)
            (void)PMPI_Cancel(&t->reqs[i]);
    if (t->nreq > 0)
        (void)PMPI_Waitall(t->nreq, t->reqs, MPI_STATUSES_IGNORE);
    t->nreq = t->npend = 0;
}

/*
 * Takes the run on, phase by phase: blocking, to its end; else as far as it
 * goes without waiting (the metadata probed with MPI_Improbe, the receives
 * tested), *done once it has ended. Returns the run's error class once done.
 * After an error the messages still posted are abandoned (abandon).
 */
static int tuna_advance(tuna *t, int block, int *done)
{
    int rc = t->rc, flag = 1;
    while (rc == MPI_SUCCESS && flag && t->phase != PH_DONE) {
        switch (t->phase) {
        case PH_PROBE:
            rc = digit_probe(t, block, &flag);
            if (rc == MPI_SUCCESS && flag) {
                rc = digit_recv_headers(t);
                t->phase = PH_HEADERS;
            }
            break;
        case PH_HEADERS:
            rc = complete(t, t->h0, t->h1 - t->h0, block, &flag);
            if (rc == MPI_SUCCESS && flag) {
                rc = digit_recv_data(t);
                t->phase = PH_DATA;
            }
            break;
        case PH_DATA:
            rc = complete(t, 0, t->rest, block, &flag);
            if (rc == MPI_SUCCESS && flag)
                rc = digit_end(t);
            break;
        default: /* PH_LAST */
            rc = complete(t, 0, t->npend, block, &flag);
            if (rc == MPI_SUCCESS && flag) {
                t->npend = 0;
                t->phase = PH_DONE;
            }
            break;
        }
    }
    if (rc != MPI_SUCCESS && t->phase != PH_DONE) {
        abandon(t);
        t->rc = rc;
        t->phase = PH_DONE;
    }
    *done = t->phase == PH_DONE;
    if (!*done)
        return MPI_SUCCESS;
    return t->rc != MPI_SUCCESS ? t->rc : t->err;
}

int ct_tuna_exchange(const ct_tuna_group *grp, ct_ctx *ctx, int radix, void *scratch)
{
    int done;
    tuna t;
    tuna_init(&t, grp, ctx, radix);
    tuna_layout(&t, scratch);
    t.comm = ctx->comm;
    t.tag = CT_TAG_ALLTOALLV;
    t.meta_tag = CT_TAG_ALLTOALLV_META;
    (void)tuna_begin(&t);
    const int rc = tuna_advance(&t, 1, &done);
    ctx->call_extra += t.tused + t.peak_max;
    return rc;
}

/* ------------------------------------------------------------------ */
/* A run of a request's                                                */
/* ------------------------------------------------------------------ */

struct ct_tuna_run {
    tuna t;
    ct_tuna_group grp; /* t.g */
    own_mem mem;       /* t.own */
    size_t bytes;      /* of this allocation (the scratch after it) */
};

int ct_tuna_run_new(const ct_tuna_group *grp, MPI_Comm comm, int radix, int tag,
                    ct_tuna_run **out)
{
    const size_t head = CT_ALIGN_UP(sizeof(ct_tuna_run));
    const size_t bytes = head + ct_tuna_scratch_bytes(grp, radix);
    ct_tuna_run *run = calloc(1, bytes);
    *out = run;
    if (run == NULL)
        return MPI_ERR_NO_MEM;
    run->grp = *grp;
    run->bytes = bytes;
    tuna_init(&run->t, &run->grp, NULL, radix);
    tuna_layout(&run->t, (char *)run + head);
    run->t.own = &run->mem;
    run->t.comm = comm;
    run->t.tag = run->t.meta_tag = tag;
    run->t.phase = PH_DONE;
    return MPI_SUCCESS;
}

int ct_tuna_run_start(ct_tuna_run *run) { return tuna_begin(&run->t); }

int ct_tuna_run_advance(ct_tuna_run *run, int block, int *done)
{
    return tuna_advance(&run->t, block, done);
}

size_t ct_tuna_run_bytes(const ct_tuna_run *run)
{
    size_t bytes = run->bytes + (size_t)run->mem.nreqs * sizeof(MPI_Request);
    for (int b = 0; b < NBUFS; b++)
        bytes += run->mem.cap[b];
    return bytes;
}

void ct_tuna_run_free(ct_tuna_run *run)
{
    if (run == NULL)
        return;
    for (int b = 0; b < NBUFS; b++)
        free(run->mem.buf[b]);
    free(run->mem.reqs);
    free(run);
}

/* ------------------------------------------------------------------ */
/* The flat algorithm: the group is the communicator                   */
/* ------------------------------------------------------------------ */

/* The call's two sides as bytes (ct_bytes): the group's blocks. */
typedef struct flat {
    ct_bytes s, r;
} flat;

static const char *flat_source(void *arg, int j, int c, size_t *bytes)
{
    const flat *f = arg;
    (void)c;
    *bytes = ct_bytes_len(&f->s, j);
    return ct_bytes_block(&f->s, j);
}

static char *flat_target(void *arg, int j, int c, size_t bytes)
{
    const flat *f = arg;
    (void)c;
    return bytes <= ct_bytes_len(&f->r, j) ? ct_bytes_block(&f->r, j) : NULL;
}

static size_t flat_known(void *arg, int j, int c)
{
    (void)c;
    return ct_bytes_len(&((const flat *)arg)->r, j);
}

/* The group of the flat algorithm: the whole communicator, one block per slot. */
static ct_tuna_group flat_group(const ct_ctx *ctx, flat *f)
{
    return (ct_tuna_group){.size = ctx->size, .index = ctx->rank, .rank_of = NULL, .C = 1,
                           .known_c = 0, .known_n = 1, .arg = f, .source = flat_source,
                           .target = flat_target, .known = flat_known};
}

int ct_alltoallv_tuna(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    const int P = ctx->size, radix = (int)params[0];
    size_t bytes;
    char *scratch;
    flat f;
    const ct_tuna_group grp = flat_group(ctx, &f);
    CT_CALL(ct_bytes_init(&f.s, a->sendbuf, P, a->sendcounts, a->sdispls, a->sendtype, 0));
    CT_CALL(ct_bytes_init(&f.r, a->recvbuf, P, a->recvcounts, a->rdispls, a->recvtype, 0));
    bytes = ct_tuna_scratch_bytes(&grp, radix);
    ct_bytes_layout(&f.s, NULL, &bytes); /* staging after the engine's scratch */
    ct_bytes_layout(&f.r, NULL, &bytes);
    scratch = ct_ctx_scratch(ctx, bytes > 0 ? bytes : 1);
    if (scratch == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ctx->call_extra += bytes;
    bytes = ct_tuna_scratch_bytes(&grp, radix);
    ct_bytes_layout(&f.s, scratch, &bytes);
    ct_bytes_layout(&f.r, scratch, &bytes);
    CT_CALL(ct_bytes_pack(&f.s, ctx->comm));
    CT_CALL(ct_tuna_exchange(&grp, ctx, radix, scratch));
    CT_CALL(ct_bytes_unpack(&f.r, ctx->comm));
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The nonblocking and persistent forms: one step                      */
/* ------------------------------------------------------------------ */

/* A request's call: its two sides as bytes (staging of its own) and its run. */
typedef struct flat_call {
    flat f;
    ct_tuna_run *run;
    MPI_Comm comm;
} flat_call;

/* At the start: the send side packed (a non-contiguous type), the first
 * digit posted. */
static int step_start(void *state)
{
    flat_call *c = state;
    const int rc = ct_bytes_pack(&c->f.s, c->comm);
    return rc == MPI_SUCCESS ? ct_tuna_run_start(c->run) : rc;
}

/* At completion: the receive side unpacked (a non-contiguous type). */
static int step_end(flat_call *c, int rc)
{
    return rc == MPI_SUCCESS ? ct_bytes_unpack(&c->f.r, c->comm) : rc;
}

static int step_test(void *state, int *done)
{
    flat_call *c = state;
    const int rc = ct_tuna_run_advance(c->run, 0, done);
    return *done ? step_end(c, rc) : rc;
}

static int step_wait(void *state)
{
    flat_call *c = state;
    int done;
    return step_end(c, ct_tuna_run_advance(c->run, 1, &done));
}

static void step_free(void *state)
{
    flat_call *c = state;
    ct_tuna_run_free(c->run);
    ct_bytes_free(&c->f.s);
    ct_bytes_free(&c->f.r);
    free(c);
}

static const ct_step tuna_step = {step_start, step_test, step_wait, step_free};

/*
 * The nonblocking and persistent forms: the exchange above as one step of
 * the request's schedule (ct_tuna_run). What moves when: at the start, the
 * own block and the first digit's sends (every slot whose lowest digit is
 * non-zero); at each test or wait, the digits whose messages have arrived,
 * each forwarding the slots it received to the next digit's peers; at
 * completion, the last digit's blocks into the receive buffer. A digit
 * needs its metadata before it can go on, so a rank blocked in another
 * MPI call must still advance it (restriction progress, as for the other
 * algorithms of several rounds).
 */
int ct_alltoallv_tuna_build(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params,
                            ct_sched *s)
{
    int rc;
    const int P = ctx->size, radix = (int)params[0];
    flat_call *c = calloc(1, sizeof *c);
    if (c == NULL)
        return MPI_ERR_NO_MEM;
    const ct_tuna_group grp = flat_group(ctx, &c->f);
    c->comm = s->comm;
    CT_CALL(ct_bytes_init(&c->f.s, a->sendbuf, P, a->sendcounts, a->sdispls, a->sendtype, 0));
    CT_CALL(ct_bytes_init(&c->f.r, a->recvbuf, P, a->recvcounts, a->rdispls, a->recvtype, 0));
    CT_CALL(ct_bytes_alloc(&c->f.s));
    CT_CALL(ct_bytes_alloc(&c->f.r));
    CT_CALL(ct_tuna_run_new(&grp, s->comm, radix, s->tag, &c->run));
    CT_CALL(ct_sched_reserve(s, 1, 1));
    ct_sched_step(s, &tuna_step, c,
                  sizeof *c + ct_tuna_run_bytes(c->run) + c->f.s.staged_bytes +
                      c->f.r.staged_bytes);
    return MPI_SUCCESS;
out:
    step_free(c);
    return rc;
}
