/*
 * alltoallv_tuna.c - TuNA, the tunable-radix non-uniform Bruck all-to-all
 * (paper 001 section III, Algorithm 1), and the TuNA engine the hierarchical
 * variants run inside each node (section IV-A, alltoallv_tuna_hier.c).
 *
 * Rotated index (III-A): rank p's block for destination d sits in slot
 * o = (d - p) mod P. Slots are written in base r with w = ceil(log_r P)
 * digits; round (x, z) sends every slot whose x-th digit is z to rank
 * (p + z r^x) mod P and receives the same slots from (p - z r^x) mod P. A
 * slot has then moved by the value of its digits so far; after the round of
 * its highest non-zero digit it is at its destination and goes straight into
 * the receive buffer at the caller's rdispls (no final rotation phase, III-B).
 * Until then it waits in the temporary buffer T, which holds one block of
 * the global maximum size M for each of the B = P - (K + 1) slots that are
 * not direct (III-C; none when r >= P - 1), at index t(o) (tuna_index.c).
 *
 * Each round first tells the receiver the sizes of the blocks it will get
 * (III-B), then moves them. The sizes of blocks that reach their destination
 * in the round are known there (recvcounts) and are left out. To keep a
 * round cheap:
 *  - the rounds of one digit position x (z = 1 .. r-1) move disjoint sets of
 *    slots and run concurrently: w synchronisation steps instead of K;
 *  - header and data travel as ONE message received into a buffer of the
 *    round's upper bound (header + n blocks of M bytes) when the bounds of a
 *    digit's rounds add up to little (TUNA_COMBINED_MAX); otherwise the
 *    header goes first on CT_TAG_ALLTOALLV_META, the data follows without
 *    waiting for it, and the receiver posts an exact-size receive once the
 *    header is in;
 *  - a round that moves no data sends no data message, and a round of one
 *    block that needs no header goes from the send to the receive buffer
 *    without copies (r >= P - 1: every round, i.e. the linear exchange).
 *
 * Cost: K <= w (r - 1) messages per rank in w steps (latency), each slot
 * travelling once per non-zero digit, at most w (r - 1) r^(w-1) blocks in all
 * (bandwidth), each copied into and out of the round buffers per hop; r = 2
 * minimises messages, r = P bytes. Memory: T (B * M bytes), the round buffers
 * and O(P) integers.
 */
#include "alltoallv/alltoallv.h"
#include "alltoallv/tuna_index.h"

#include <stdlib.h>
#include <string.h>

/* Header and data travel together when a digit's rounds are bounded by this.
 * (Both limits may be lowered at build time to exercise the other paths.) */
#ifndef TUNA_COMBINED_MAX
#define TUNA_COMBINED_MAX ((size_t)256 * 1024)
#endif
/* Largest single data message of the split mode; a longer round uses several. */
#ifndef TUNA_CHUNK
#define TUNA_CHUNK ((size_t)1 << 30)
#endif

#define ALIGN_INT(n) (((n) + sizeof(int) - 1) & ~(sizeof(int) - 1))

/* One round (x, z) as both of its ends see it. */
typedef struct round {
    int n, hn;          /* slots; header entries (blocks whose size the receiver cannot know) */
    int to, from;       /* ranks in ctx->comm */
    int direct;         /* one block, size known at the receiver: no copies */
    int rreq;           /* combined mode: index of the data receive, -1 none */
    int *slots;         /* [n] ascending */
    size_t sbytes;      /* data this rank sends */
    size_t known;       /* data this rank receives whose sizes it knows */
    size_t rbytes;      /* data this rank receives */
    int *shdr, *rhdr;   /* header sent / received */
    char *sdata, *rdata;
} round;

typedef struct tuna {
    const ct_tuna_group *g;
    const ct_alltoallv_args *a;
    ct_ctx *ctx;
    int r, zmax, combined;
    int phase_slots;    /* most slots moved by the rounds of one digit */
    size_t phase_bound; /* combined mode: most bytes of the round buffers of one digit */
    size_t M;
    long long pw, span; /* the current digit: r^x, r^(x+1) */
    int *sz;            /* [size * C] current bytes of block c of slot o */
    int *slots;         /* [phase_slots] the slots of the current digit's rounds */
    round *rounds;      /* [zmax] */
    MPI_Status *st;     /* [2 zmax] combined mode */
    int *hdr_out;       /* [phase_slots * C] split mode */
    int *hdr_in;
    char *T;            /* B * C blocks of M bytes; slot o at t(o) (III-C) */
    char *sb, *rb;      /* round buffers of a digit */
    size_t sb_cap, rb_cap;
    int heap; /* sb and rb are heap buffers grown on demand (split mode) */
} tuna;

static int member(const ct_tuna_group *g, int j) { return g->rank_of ? g->rank_of[j] : j; }

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

static void tuna_init(tuna *t, const ct_tuna_group *grp, const ct_alltoallv_args *a, ct_ctx *ctx,
                      int radix, size_t M)
{
    const int P = grp->size, C = grp->C;
    memset(t, 0, sizeof *t);
    t->g = grp;
    t->a = a;
    t->ctx = ctx;
    t->r = radix;
    t->M = M;
    t->zmax = radix - 1 < P - 1 ? radix - 1 : P - 1;
    int x = 0;
    for (long long pw = 1; pw < P; pw *= radix, x++) {
        int slots = 0, nz = 0;
        for (int z = 1; z < radix && z * pw < P; z++, nz++)
            slots += ct_tuna_round_slots(P, radix, x, z, NULL);
        size_t bound = (size_t)slots * C * (sizeof(int) + M) + (size_t)nz * sizeof(int);
        t->phase_slots = slots > t->phase_slots ? slots : t->phase_slots;
        t->phase_bound = bound > t->phase_bound ? bound : t->phase_bound;
    }
    t->combined = t->phase_bound <= TUNA_COMBINED_MAX;
}

/* Carves the scratch (base == NULL: only measures it). */
static size_t tuna_layout(tuna *t, char *base)
{
    const ct_tuna_group *g = t->g;
    const size_t B = (size_t)ct_tuna_tsize(g->size, t->r);
    const size_t hdrs = t->combined ? 0 : (size_t)t->phase_slots * g->C;
    const size_t bufs = t->combined ? t->phase_bound : 0;
    size_t off = 0;
    CT_CARVE(base, off, t->sz, int, (size_t)g->size * g->C);
    CT_CARVE(base, off, t->slots, int, t->phase_slots);
    CT_CARVE(base, off, t->rounds, round, t->zmax);
    CT_CARVE(base, off, t->st, MPI_Status, t->combined ? 2 * t->zmax : 0);
    CT_CARVE(base, off, t->hdr_out, int, hdrs);
    CT_CARVE(base, off, t->hdr_in, int, hdrs);
    CT_CARVE(base, off, t->T, char, B * g->C * t->M);
    CT_CARVE(base, off, t->sb, char, bufs);
    CT_CARVE(base, off, t->rb, char, bufs);
    return off;
}

size_t ct_tuna_scratch_bytes(const ct_tuna_group *grp, int radix, size_t M)
{
    tuna t;
    tuna_init(&t, grp, NULL, NULL, radix, M);
    return tuna_layout(&t, NULL);
}

/* Split mode: grows a heap buffer to need bytes (its contents are not kept). */
static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return MPI_SUCCESS;
    free(*buf);
    *cap = 0;
    *buf = ct_malloc(need);
    if (*buf == NULL) {
        ct_log_mpi_error(MPI_ERR_NO_MEM, "malloc(round buffer)", __FILE__, __LINE__);
        return MPI_ERR_NO_MEM;
    }
    *cap = need;
    return MPI_SUCCESS;
}

/* Where block c of slot o waits in T (III-C: t(o) counts the non-direct slots below o). */
static char *tslot(const tuna *t, int o, int c)
{
    return t->T + ((size_t)ct_tuna_tindex(o, t->r) * t->g->C + c) * t->M;
}

/* Posts a non-blocking send or receive as request *nreq of ctx's array. */
static int post(tuna *t, int send, void *buf, int count, MPI_Datatype type, int peer, int tag,
                int *nreq)
{
    MPI_Request *reqs = ct_ctx_requests(t->ctx, *nreq + 1); /* keeps the pending ones */
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    if (send)
        return PMPI_Isend(buf, count, type, peer, tag, t->ctx->comm, &reqs[(*nreq)++]);
    return PMPI_Irecv(buf, count, type, peer, tag, t->ctx->comm, &reqs[(*nreq)++]);
}

/* The same for len bytes, in messages of at most TUNA_CHUNK bytes. */
static int post_bytes(tuna *t, int send, char *buf, size_t len, int peer, int *nreq)
{
    for (size_t off = 0; off < len; off += TUNA_CHUNK) {
        int n = (int)(len - off < TUNA_CHUNK ? len - off : TUNA_CHUNK);
        int rc = post(t, send, buf + off, n, MPI_BYTE, peer, CT_TAG_ALLTOALLV, nreq);
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
    rd->to = member(g, (me + dist) % P);
    rd->from = member(g, (me - dist + P) % P);
    rd->hn = 0;
    rd->sbytes = rd->known = 0;
    for (int k = 0; k < rd->n; k++) {
        const int o = rd->slots[k];
        const int fin = o < t->span; /* o's highest digit is x: it arrives now */
        for (int c = 0; c < C; c++) {
            rd->sbytes += (size_t)t->sz[o * C + c];
            if (fin && c == g->known_c) /* arriving from member me - o */
                rd->known += (size_t)t->a->recvcounts[member(g, (me - o + P) % P)];
            else
                rd->hn++;
        }
    }
    rd->direct = rd->n == 1 && C == 1 && rd->hn == 0;
    rd->rreq = -1;
}

/* Where block c of slot o is now at this rank: still in the send buffer when
 * no lower digit has moved it (o mod r^x == 0), else in T. */
static const char *slot_data(const tuna *t, int o, int c)
{
    int bytes;
    if (o % t->pw == 0)
        return t->g->source(t->g->arg, (t->g->index + o) % t->g->size, c, &bytes);
    return tslot(t, o, c);
}

/* Header (sizes of the blocks the receiver cannot know) and data of a round. */
static void round_pack(tuna *t, const round *rd)
{
    const ct_tuna_group *g = t->g;
    char *data = rd->sdata;
    int h = 0;
    for (int k = 0; k < rd->n; k++) {
        const int o = rd->slots[k], fin = o < t->span;
        for (int c = 0; c < g->C; c++) {
            const int b = t->sz[o * g->C + c];
            if (!(fin && c == g->known_c))
                rd->shdr[h++] = b;
            if (b > 0) {
                memcpy(data, slot_data(t, o, c), (size_t)b);
                data += b;
            }
        }
    }
}

/* Size of block c of slot o arriving at this rank; h walks the header. */
static int arriving_size(const tuna *t, const round *rd, int *h, int o, int c)
{
    const ct_tuna_group *g = t->g;
    if (o < t->span && c == g->known_c)
        return t->a->recvcounts[member(g, (g->index - o + g->size) % g->size)];
    return rd->rhdr[(*h)++];
}

/* Total data bytes a received header announces; -1 when a size is invalid. */
static long long round_incoming(const tuna *t, const round *rd)
{
    long long total = 0;
    int h = 0;
    for (int k = 0; k < rd->n; k++)
        for (int c = 0; c < t->g->C; c++) {
            int b = arriving_size(t, rd, &h, rd->slots[k], c);
            if (b < 0 || (size_t)b > t->M)
                return -1;
            total += b;
        }
    return total;
}

/* Stores the received blocks: final ones through target(), the others in T. */
static int round_unpack(tuna *t, const round *rd)
{
    const ct_tuna_group *g = t->g;
    const int P = g->size, C = g->C, me = g->index;
    const char *data = rd->rdata;
    int h = 0;
    for (int k = 0; k < rd->n; k++) {
        const int o = rd->slots[k], fin = o < t->span;
        const int src = (me - o + P) % P; /* the member this slot started from */
        for (int c = 0; c < C; c++) {
            const int b = arriving_size(t, rd, &h, o, c);
            char *dst;
            if (!fin)
                t->sz[o * C + c] = b;
            if (b == 0)
                continue;
            dst = fin ? g->target(g->arg, src, c, b) : tslot(t, o, c);
            if (dst == NULL)
                return MPI_ERR_TRUNCATE;
            memcpy(dst, data, (size_t)b);
            data += b;
        }
    }
    return MPI_SUCCESS;
}

/* A round of one block whose size the receiver knows: posted straight from
 * the send to the receive buffer. */
static int round_direct_post(tuna *t, const round *rd, int *nreq)
{
    int rc = MPI_SUCCESS, bytes;
    const ct_tuna_group *g = t->g;
    const int o = rd->slots[0], src = (g->index - o + g->size) % g->size;
    const int in = (int)rd->known, out = t->sz[o * g->C];
    if (in > 0)
        CT_CALL(post(t, 0, g->target(g->arg, src, 0, in), in, MPI_BYTE, rd->from,
                     CT_TAG_ALLTOALLV, nreq));
    if (out > 0)
        CT_CALL(post(t, 1, (void *)g->source(g->arg, (g->index + o) % g->size, 0, &bytes), out,
                     MPI_BYTE, rd->to, CT_TAG_ALLTOALLV, nreq));
out:
    return rc;
}

/* ------------------------------------------------------------------ */
/* The rounds of one digit, run concurrently                           */
/* ------------------------------------------------------------------ */

/* Header and data in one message per round, received into its upper bound. */
static int digit_combined(tuna *t, int nz)
{
    int rc = MPI_SUCCESS, nreq = 0, count;
    size_t soff = 0, roff = 0;
    const size_t blk = (size_t)t->g->C * t->M;
    for (int k = 0; k < nz; k++) { /* receives first */
        round *rd = &t->rounds[k];
        const size_t hb = (size_t)rd->hn * sizeof(int), upper = hb + rd->n * blk;
        if (rd->direct) {
            CT_CALL(round_direct_post(t, rd, &nreq));
            continue;
        }
        if (rd->hn == 0 && rd->known == 0)
            continue; /* nothing comes */
        rd->rhdr = (int *)(t->rb + roff);
        rd->rdata = t->rb + roff + hb;
        rd->rreq = nreq;
        CT_CALL(post(t, 0, t->rb + roff, (int)upper, MPI_BYTE, rd->from, CT_TAG_ALLTOALLV,
                     &nreq));
        roff = ALIGN_INT(roff + upper);
    }
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        const size_t hb = (size_t)rd->hn * sizeof(int);
        if (rd->direct || (rd->hn == 0 && rd->sbytes == 0))
            continue; /* posted above / nothing to send */
        rd->shdr = (int *)(t->sb + soff);
        rd->sdata = t->sb + soff + hb;
        round_pack(t, rd);
        CT_CALL(post(t, 1, t->sb + soff, (int)(hb + rd->sbytes), MPI_BYTE, rd->to,
                     CT_TAG_ALLTOALLV, &nreq));
        soff = ALIGN_INT(soff + hb + rd->sbytes);
    }
    CT_CALL(PMPI_Waitall(nreq, t->ctx->reqs, t->st));
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->rreq < 0)
            continue;
        CT_CALL(PMPI_Get_count(&t->st[rd->rreq], MPI_BYTE, &count));
        /* The header must announce exactly what arrived before anything is stored. */
        if ((size_t)count < (size_t)rd->hn * sizeof(int) ||
            round_incoming(t, rd) != (long long)count - rd->hn * (long long)sizeof(int))
            CT_CALL(MPI_ERR_TRUNCATE);
        CT_CALL(round_unpack(t, rd));
    }
out:
    return rc;
}

/* Headers first (META tag), data right behind them; exact-size receives. */
static int digit_split(tuna *t, int nz)
{
    int rc = MPI_SUCCESS, nreq = 0, nhdr;
    size_t hoff = 0, stot = 0, rtot = 0;
    for (int k = 0; k < nz; k++) { /* header receives first, then direct ones */
        round *rd = &t->rounds[k];
        rd->shdr = t->hdr_out + hoff;
        rd->rhdr = t->hdr_in + hoff;
        hoff += (size_t)rd->hn;
        if (rd->hn > 0)
            CT_CALL(post(t, 0, rd->rhdr, rd->hn, MPI_INT, rd->from, CT_TAG_ALLTOALLV_META, &nreq));
        if (!rd->direct)
            stot += rd->sbytes;
    }
    nhdr = nreq;
    for (int k = 0; k < nz; k++)
        if (t->rounds[k].direct)
            CT_CALL(round_direct_post(t, &t->rounds[k], &nreq));
    CT_CALL(grow(&t->sb, &t->sb_cap, stot));
    stot = 0;
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        if (rd->direct)
            continue;
        rd->sdata = t->sb + stot;
        stot += rd->sbytes;
        round_pack(t, rd);
        if (rd->hn > 0)
            CT_CALL(post(t, 1, rd->shdr, rd->hn, MPI_INT, rd->to, CT_TAG_ALLTOALLV_META, &nreq));
        CT_CALL(post_bytes(t, 1, rd->sdata, rd->sbytes, rd->to, &nreq));
    }
    CT_CALL(PMPI_Waitall(nhdr, t->ctx->reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        long long in = rd->direct ? 0 : round_incoming(t, rd);
        if (in < 0)
            CT_CALL(MPI_ERR_TRUNCATE);
        rd->rbytes = (size_t)in;
        rtot += rd->rbytes;
    }
    CT_CALL(grow(&t->rb, &t->rb_cap, rtot));
    rtot = 0;
    for (int k = 0; k < nz; k++) {
        round *rd = &t->rounds[k];
        rd->rdata = t->rb + rtot;
        rtot += rd->rbytes;
        CT_CALL(post_bytes(t, 0, rd->rdata, rd->rbytes, rd->from, &nreq));
    }
    CT_CALL(PMPI_Waitall(nreq, t->ctx->reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < nz; k++)
        if (!t->rounds[k].direct)
            CT_CALL(round_unpack(t, &t->rounds[k]));
out:
    return rc;
}

/* Rounds (x, z), z = 1 .. r-1 with z r^x < P: disjoint slots (x-th digit z). */
static int tuna_digit(tuna *t, int x)
{
    int nz = 0, used = 0;
    t->span = t->pw * t->r;
    for (int z = 1; z < t->r && z * t->pw < t->g->size; z++, nz++) {
        round *rd = &t->rounds[nz];
        rd->slots = t->slots + used;
        round_plan(t, rd, x, z);
        used += rd->n;
    }
    return t->combined ? digit_combined(t, nz) : digit_split(t, nz);
}

/* ------------------------------------------------------------------ */
/* The engine and the flat algorithm                                   */
/* ------------------------------------------------------------------ */

int ct_tuna_exchange(const ct_tuna_group *grp, const ct_alltoallv_args *a, ct_ctx *ctx,
                     int radix, size_t M, void *scratch)
{
    int rc = MPI_SUCCESS, x = 0;
    const int P = grp->size, C = grp->C, me = grp->index;
    tuna t;
    tuna_init(&t, grp, a, ctx, radix, M);
    tuna_layout(&t, scratch);
    t.heap = !t.combined;
    if (t.heap) /* the split mode sizes its round buffers from the headers */
        t.sb = t.rb = NULL;
    /* Slot o starts as the bundle for member (me + o) mod P (III-A rotation). */
    for (int o = 0; o < P; o++)
        for (int c = 0; c < C; c++)
            (void)grp->source(grp->arg, (me + o) % P, c, &t.sz[o * C + c]);
    /* Slot 0 is this rank's own bundle: it never travels. */
    for (int c = 0; c < C; c++) {
        int b;
        const char *src = grp->source(grp->arg, me, c, &b);
        char *dst = b > 0 ? grp->target(grp->arg, me, c, b) : NULL;
        if (b > 0 && dst == NULL)
            CT_CALL(MPI_ERR_TRUNCATE);
        if (b > 0)
            memcpy(dst, src, (size_t)b);
    }
    /* Digit positions x = 0 .. w-1 in order: a slot's digits are used low to high. */
    for (t.pw = 1; t.pw < P; t.pw *= radix, x++)
        CT_CALL(tuna_digit(&t, x));
out:
    if (t.heap) {
        ctx->call_extra += t.sb_cap + t.rb_cap; /* grown to their peak, never shrunk */
        free(t.sb);
        free(t.rb);
    }
    return rc;
}

int ct_tuna_max_block(const ct_alltoallv_args *a, ct_ctx *ctx, size_t *M)
{
    int rc = MPI_SUCCESS;
    long local = 0, global;
    if (ctx->call_msg_size >= 0) {
        *M = (size_t)ctx->call_msg_size;
        return MPI_SUCCESS;
    }
    for (int j = 0; j < ctx->size; j++)
        local = a->sendcounts[j] > local ? a->sendcounts[j] : local;
    CT_CALL(PMPI_Allreduce(&local, &global, 1, MPI_LONG, MPI_MAX, ctx->comm));
    *M = (size_t)global;
out:
    return rc;
}

/* The flat group: member j is rank j, a bundle is the one block for j. */
static const char *flat_source(void *arg, int j, int c, int *bytes)
{
    const ct_alltoallv_args *a = arg;
    (void)c;
    *bytes = a->sendcounts[j];
    return (const char *)a->sendbuf + a->sdispls[j];
}

static char *flat_target(void *arg, int j, int c, int bytes)
{
    const ct_alltoallv_args *a = arg;
    (void)c;
    return bytes <= a->recvcounts[j] ? (char *)a->recvbuf + a->rdispls[j] : NULL;
}

int ct_alltoallv_tuna(const ct_alltoallv_args *a, ct_ctx *ctx, const long *params)
{
    int rc;
    size_t M, bytes;
    void *scratch;
    ct_tuna_group grp = {.size = ctx->size, .index = ctx->rank, .rank_of = NULL, .C = 1,
                         .known_c = 0, .arg = (void *)a, .source = flat_source,
                         .target = flat_target};
    CT_CALL(ct_tuna_max_block(a, ctx, &M));
    if (M == 0) /* every block is empty, as every rank knows */
        return MPI_SUCCESS;
    bytes = ct_tuna_scratch_bytes(&grp, (int)params[0], M);
    scratch = ct_ctx_scratch(ctx, bytes);
    if (scratch == NULL)
        CT_CALL(MPI_ERR_NO_MEM);
    ctx->call_extra += bytes;
    CT_CALL(ct_tuna_exchange(&grp, a, ctx, (int)params[0], M, scratch));
out:
    return rc;
}
