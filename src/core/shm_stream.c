/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_stream.c - personalised exchange through a bounded shared window: the
 * rounds (shm_stream.h).
 */
#include "core/shm_stream.h"
#include "core/cache.h"
#include "core/log.h"
#include "core/state.h"
#include "core/copy.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The header at the start of each half; the data follows at s->hdr. */
typedef struct stream_head {
    uint64_t total; /* bytes of the stream */
    uint64_t error; /* the member has nothing to publish: the call fails */
    uint64_t table; /* block[] is filled in (even with error: the direct flags) */
    uint64_t direct; /* blocks marked direct */
    uint64_t release; /* the member's cache asks the window back (cache.h) */
    struct {
        uint64_t off, bytes;
    } block[]; /* [nblocks] where each block lies in the stream (off DIRECT: not in it) */
} stream_head;

#define DIRECT UINT64_MAX

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* Bytes a block takes in its stream. */
static size_t in_stream(const ct_shm_out *o) { return o->direct ? 0 : o->bytes; }

static size_t head_bytes(int nblocks)
{
    return CT_ALIGN_UP(sizeof(stream_head) + (size_t)nblocks * 2 * sizeof(uint64_t));
}

size_t ct_shm_stream_bytes(int nblocks)
{
    return 2 * (head_bytes(nblocks) + ct_settings_get()->shm_window);
}

/* The stream's own tables (not the window, not the communicator). */
static void free_tables(ct_shm_stream *s)
{
    free(s->want_first);
    free(s->out);
    free(s->want);
    free(s->reqs);
    free(s->members);
    free(s->spare);
}

static void stream_free(void *p)
{
    ct_shm_stream *s = p;
    if (s == NULL)
        return;
    if (s->w != NULL) {
        ct_shm_stream_progress(s, NULL, 1); /* the nonblocking calls still on it */
        ct_shm_win_free(s->w); /* collective over s->comm, before it goes */
        ct_cache_shared(s->ctx, -(long long)s->charged, s->whole);
        if (s->retire)
            ct_cache_released();
    }
    free_tables(s);
    if (s->owns_comm && s->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&s->comm);
    free(s);
}

/* The state of a communicator without usable windows: read-only. */
static const ct_shm_stream no_window = {.w = NULL};

const ct_ctx_buf_key ct_buf_shm_send = {"shm send"}, ct_buf_shm_recv = {"shm receive"},
                     ct_buf_shm_plan = {"shm plan"};

/* A window the cache limit kept from being made (cache.h): how many calls
 * have asked for it, this one included. */
typedef struct refused {
    ct_shm_stream s; /* w NULL */
    unsigned long asked;
} refused;

/* Creates the window over comm and agrees over ctx->decide_comm (the
 * window's group may be one node of it) whether every group has one. */
static int stream_create(ct_ctx *ctx, MPI_Comm comm, int owns_comm, int nblocks,
                         const char *who, ct_shm_stream **out)
{
    int rc, size, decide_size, here, everywhere;
    ct_shm_stream *s = calloc(1, sizeof *s);
    ct_shm_win *w = NULL;
    *out = NULL;
    CT_CALL(PMPI_Comm_size(comm, &size));
    CT_CALL(PMPI_Comm_size(ctx->decide_comm, &decide_size));
    if (s != NULL) { /* want_first, want_count, pending: [size] each */
        s->spare = calloc(1, sizeof(refused));
        s->want_first = malloc((size_t)size * 3 * sizeof(int));
        s->out = malloc((size_t)nblocks * sizeof *s->out);
        s->want = malloc((size_t)nblocks * sizeof *s->want);
        s->reqs = malloc((size_t)nblocks * 2 * sizeof *s->reqs);
    }
    rc = ct_shm_win_create(comm, ct_shm_stream_bytes(nblocks), who, &w);
    here = rc == MPI_SUCCESS && w != NULL && s != NULL && s->want_first != NULL &&
           s->out != NULL && s->want != NULL && s->reqs != NULL && s->spare != NULL;
    CT_CALL(PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, ctx->decide_comm));
    if (!everywhere) {
        if (w != NULL) /* the group's window is whole: freed by all its ranks */
            ct_shm_win_free(w);
        if (here)
            ct_log_once("%s: another node could not set up its shared window; the calls on "
                        "this communicator that choose it are served another way", who);
        goto out;
    }
    s->want_count = s->want_first + size;
    s->pending = s->want_first + 2 * (size_t)size;
    s->w = w;
    s->comm = comm;
    s->owns_comm = owns_comm;
    s->nblocks = nblocks;
    s->W = ct_settings_get()->shm_window;
    s->hdr = head_bytes(nblocks);
    s->ctx = ctx;
    s->charged = ct_shm_stream_bytes(nblocks);
    s->whole = size == decide_size;
    ct_cache_shared(ctx, (long long)s->charged, s->whole);
    *out = s;
    s = NULL;
out:
    if (s != NULL)
        free_tables(s);
    free(s);
    return rc;
}

/* What ct_shm_stream_get hands to ct_shm_stream_create. */
typedef struct stream_args {
    MPI_Comm comm;
    int nblocks;
    const char *who;
    int room; /* the ranks have agreed there is room for it */
} stream_args;

/* Whether every rank has room for a window of bytes under the cache limit
 * (collective over ctx->decide_comm, before anything is made). */
static int room_everywhere(ct_ctx *ctx, size_t bytes, int *all)
{
    int rc = MPI_SUCCESS, room = ct_cache_room(ctx, bytes);
    *all = 0;
    CT_CALL(PMPI_Allreduce(&room, all, 1, MPI_INT, MPI_MIN, ctx->decide_comm));
    if (!*all)
        ct_cache_refused();
out:
    if (room && !*all) /* the room this rank held goes back */
        ct_cache_unreserve(ctx, bytes);
    return rc;
}

int ct_shm_stream_create(ct_ctx *ctx, void *arg, void **obj)
{
    const stream_args *a = arg;
    const size_t bytes = ct_shm_stream_bytes(a->nblocks);
    ct_shm_stream *s = NULL;
    MPI_Comm comm = a->comm;
    int rc, all;
    *obj = (void *)&no_window;
    all = a->room;
    if (!all)
        CT_CALL(room_everywhere(ctx, bytes, &all));
    if (!all) {
        refused *r = calloc(1, sizeof *r);
        if (r != NULL)
            r->asked = 1; /* this call: the next to ask again is the 2nd */
        *obj = r != NULL ? (void *)r : NULL; /* NULL: asked again at the next call */
        return MPI_SUCCESS;
    }
    if (a->comm == MPI_COMM_NULL) /* the window spans this rank's node */
        CT_CALL(PMPI_Comm_split(ctx->comm, ctx->topo.node, ctx->topo.local_rank, &comm));
    rc = stream_create(ctx, comm, a->comm == MPI_COMM_NULL, a->nblocks, a->who, &s);
    if (s == NULL && a->comm == MPI_COMM_NULL)
        PMPI_Comm_free(&comm);
    if (s != NULL)
        *obj = s;
out:
    if (all && s == NULL) /* the room held for it (ct_cache_room) goes back */
        ct_cache_unreserve(ctx, bytes);
    return rc;
}

void ct_shm_stream_release(void *obj)
{
    ct_shm_stream *s = obj;
    if (s == &no_window)
        return;
    if (s->w == NULL) /* refused */
        free(obj);
    else
        stream_free(s);
}

void *ct_shm_stream_retire(void *obj)
{
    ct_shm_stream *s = obj;
    if (s == &no_window || s->w == NULL || !s->retire)
        return NULL;
    refused *r = s->spare; /* asked again at the next call (its 2nd ask) */
    s->spare = NULL;
    r->asked = 1;
    return r;
}

/* A power of two: the calls at which a refused window is asked for again. */
static int power_of_two(unsigned long n) { return n != 0 && (n & (n - 1)) == 0; }

int ct_shm_stream_get(ct_ctx *ctx, const ct_ctx_key *key, MPI_Comm comm, int nblocks,
                      const char *who, ct_shm_stream **out)
{
    stream_args a = {comm, nblocks, who, 0};
    ct_shm_stream *s = ct_ctx_ext_find(ctx, key);
    int rc = MPI_SUCCESS;
    void *obj;
    if (s != NULL && s != &no_window && s->w == NULL &&
        power_of_two(++((refused *)s)->asked)) { /* the same count on every rank */
        CT_CALL(room_everywhere(ctx, ct_shm_stream_bytes(nblocks), &a.room));
        if (a.room) { /* made in the refused one's place, on every rank */
            void *made = NULL;
            rc = ct_shm_stream_create(ctx, &a, &made);
            if (made != NULL)
                ct_shm_stream_release(ct_ctx_ext_swap(ctx, key, made));
        }
    }
    const int rc_ext = ct_ctx_ext(ctx, key, &a, &obj);
    rc = rc != MPI_SUCCESS ? rc : rc_ext;
    s = obj;
out:
    *out = s == NULL || s == &no_window || s->w == NULL ? NULL : s;
    return rc;
}

static char *half_of(const ct_shm_stream *s, int member, unsigned long seq)
{
    return s->w->part[member] + (seq & 1) * (s->hdr + s->W);
}

/* Copies bytes [at, at + len) of block o to dst. */
static void block_copy(char *dst, const ct_shm_out *o, size_t at, size_t len)
{
    if (o->npiece == 0) {
        ct_memcpy(dst, o->src + at, len);
        return;
    }
    for (int i = 0; i < o->npiece && len > 0; i++) {
        const ct_shm_piece *p = &o->piece[i];
        if (at >= p->bytes) {
            at -= p->bytes;
            continue;
        }
        const size_t n = min_size(len, p->bytes - at);
        ct_memcpy(dst, p->src + at, n);
        dst += n;
        len -= n;
        at = 0;
    }
}

/* Copies stream bytes [lo, hi) into data (the half's data area). */
static void copy_in(char *data, const ct_shm_out *out, int nblocks, size_t lo, size_t hi,
                    ct_shm_cursor *c)
{
    while (c->k < nblocks && c->start < hi) {
        const size_t end = c->start + in_stream(&out[c->k]);
        const size_t from = max_size(lo, c->start), to = min_size(hi, end);
        if (to > from)
            block_copy(data + (from - lo), &out[c->k], from - c->start, to - from);
        if (end > hi)
            break; /* the block goes on in the next round */
        c->start = end;
        c->k++;
    }
}

static void write_head(stream_head *h, const ct_shm_out *out, int nblocks, size_t total,
                       int error, int release)
{
    size_t off = 0;
    h->release = (uint64_t)release;
    h->total = total;
    h->error = (uint64_t)error;
    h->table = out != NULL;
    h->direct = 0;
    for (int k = 0; k < nblocks && out != NULL; k++) {
        h->direct += out[k].direct != 0;
        h->block[k].off = out[k].direct ? DIRECT : off;
        h->block[k].bytes = out[k].bytes;
        off += in_stream(&out[k]);
    }
}

/* Round 0: member i's header, and where its blocks this rank wants lie in
 * its stream (cut to their destinations). */
static void read_head(const ct_shm_stream *s, ct_shm_round *rs, int i, ct_shm_want *want, int n)
{
    const stream_head *h = (const stream_head *)half_of(s, i, rs->seq);
    rs->longest = max_size(rs->longest, (size_t)h->total);
    if (h->direct)
        rs->direct = 1;
    if (h->error)
        rs->error = 1;
    if (h->release)
        rs->release = 1;
    for (int w = 0; w < n; w++) {
        if (!h->table) { /* nothing sent at all */
            want[w].direct = 0;
            want[w].off = want[w].bytes = 0;
            continue;
        }
        want[w].direct = h->block[want[w].block].off == DIRECT;
        want[w].off = want[w].direct ? 0 : (size_t)h->block[want[w].block].off;
        want[w].bytes = (size_t)h->block[want[w].block].bytes;
        if (want[w].direct || want[w].deferred)
            continue; /* the caller receives it (MPI checks its length), or places it */
        if (want[w].bytes > want[w].cap) {
            want[w].bytes = want[w].cap;
            rs->truncated = 1;
        }
    }
}

/* Copies the parts of member i's wanted blocks that the round carries (only
 * the deferred ones: their round-0 parts, once placed). */
static void copy_out(const ct_shm_stream *s, const ct_shm_round *rs, int i,
                     const ct_shm_want *want, int n, int only_deferred)
{
    const char *data = half_of(s, i, rs->seq) + s->hdr;
    for (int w = 0; w < n; w++) {
        if (want[w].direct || (want[w].deferred ? want[w].dst == NULL : only_deferred))
            continue;
        const size_t from = max_size(rs->lo, want[w].off);
        const size_t to = min_size(rs->hi, want[w].off + want[w].bytes);
        if (to > from)
            ct_memcpy(want[w].dst + (from - want[w].off), data + (from - rs->lo), to - from);
    }
}

/* Reads member i's part of the round (it has published it). */
static void read_member(ct_shm_stream *s, ct_shm_round *rs, ct_shm_want *want, int i)
{
    ct_shm_want *mine = s->want_count[i] > 0 ? want + s->want_first[i] : NULL;
    if (rs->first)
        read_head(s, rs, i, mine, s->want_count[i]);
    if (!rs->error)
        copy_out(s, rs, i, mine, s->want_count[i], 0);
}

/*
 * Reads what has arrived of the round: the members in turn from this rank
 * on (the readers start at different parts), each one that has published;
 * then those that had not, in the same order, as they publish, so a rank
 * copies while later members are still writing. Blocking, it waits (gives
 * its core away) only when no member it still needs has published; else it
 * returns at once. It returns whether it has seen every member publish: only
 * then may its next round overwrite the other half (see shm_stream.h).
 */
static int read_round(ct_shm_xchg *x, const ct_shm_idle *idle, int block)
{
    ct_shm_stream *s = x->s;
    ct_shm_win *w = s->w;
    unsigned spins = 0;
    if (x->npending < 0) { /* the round's first look */
        x->npending = 0;
        for (int t = 0; t < w->size; t++) {
            const int i = (w->rank + t) % w->size;
            if (ct_shm_arrived(w, i))
                read_member(s, &x->rs, x->want, i);
            else
                s->pending[x->npending++] = i;
        }
    }
    while (x->npending > 0) {
        int left = 0;
        for (int k = 0; k < x->npending; k++) {
            if (ct_shm_arrived(w, s->pending[k]))
                read_member(s, &x->rs, x->want, s->pending[k]);
            else
                s->pending[left++] = s->pending[k];
        }
        const int moved = left < x->npending;
        x->npending = left;
        if (left == 0)
            break;
        if (!moved && (idle == NULL || !idle->fn(idle->arg))) {
            if (!block)
                return 0;
            ct_shm_pause(w, &spins); /* nothing moved: a block completing is worth a look */
        }
    }
    return 1;
}

/* After round 0: the caller places its deferred wants, which then get their
 * round-0 parts (this rank has not published round 1, so no member has
 * overwritten them). */
static int place_deferred(ct_shm_stream *s, const ct_shm_round *rs, ct_shm_want *want,
                          int nwant, size_t rounds, const ct_shm_place *place)
{
    const int rc = place->fn(place->arg, want, nwant, rounds);
    for (int i = 0; i < s->w->size && rc == MPI_SUCCESS; i++)
        if (s->want_count[i] > 0)
            copy_out(s, rs, i, want + s->want_first[i], s->want_count[i], 1);
    if (rc != MPI_SUCCESS) /* the later rounds leave them alone */
        for (int w = 0; w < nwant; w++)
            if (want[w].deferred)
                want[w].dst = NULL;
    return rc;
}

/* Where each member's wants are: the caller groups them by member. */
static int index_wants(ct_shm_stream *s, const ct_shm_want *want, int nwant)
{
    for (int i = 0; i < s->w->size; i++)
        s->want_count[i] = 0;
    for (int w = 0; w < nwant; w++) {
        const int i = want[w].member;
        if (s->want_count[i] == 0)
            s->want_first[i] = w;
        else if (s->want_first[i] + s->want_count[i] != w)
            return MPI_ERR_INTERN; /* not grouped: a caller's bug */
        s->want_count[i]++;
    }
    return MPI_SUCCESS;
}

/* Does this rank ask the window back in this exchange (cache.h)? Only a
 * blocking call asks, and only while no request of this rank holds the
 * communicator: a nonblocking or persistent request keeps a pointer to the
 * window (a persistent one starts on it again), which a release would
 * leave dangling. A rank whose copy of a collective request is freed may
 * ask while another's copy lives: that one can no longer be started (its
 * start is collective) and, complete, does not look at the window again. */
static int release_wish(const ct_shm_xchg *x)
{
    const ct_shm_stream *s = x->s;
    return x->blocking && s->whole && ct_cache_wish(s->ctx) && !ct_ctx_held(s->ctx);
}

/* Writes round x->r of this rank's stream (round 0 with its header) into
 * the round's half and publishes it. */
static void write_round(ct_shm_xchg *x)
{
    ct_shm_stream *s = x->s;
    ct_shm_win *w = s->w;
    x->rs.lo = x->r * s->W;
    x->rs.hi = x->rs.lo + s->W;
    x->rs.first = x->r == 0;
    x->rs.seq = w->seq; /* the half this round writes, on every member */
    char *mine = half_of(s, w->rank, x->rs.seq);
    if (x->r == 0) {
        s->seq0 = x->rs.seq;
        write_head((stream_head *)mine, x->out, s->nblocks, x->total,
                   x->local_rc != MPI_SUCCESS, release_wish(x));
    }
    if (x->local_rc == MPI_SUCCESS)
        copy_in(mine + s->hdr, x->out, s->nblocks, x->rs.lo, x->rs.hi, &x->c);
    ct_shm_publish(w);
    x->npending = -1;
}

void ct_shm_stream_begin(ct_shm_xchg *x, ct_shm_stream *s, const ct_shm_out *out, int local_rc,
                         ct_shm_want *want, int nwant, const ct_shm_place *place, int blocking)
{
    *x = (ct_shm_xchg){.s = s, .out = out, .local_rc = local_rc, .want = want,
                       .nwant = nwant, .place = place, .blocking = blocking, .rounds = 1};
    s->calls++;
    s->empty = s->all_direct = 0;
    /* the wants are read even when this rank has failed: their direct flags */
    const int irc = want != NULL || nwant == 0 ? index_wants(s, want, nwant) : MPI_ERR_INTERN;
    if (irc != MPI_SUCCESS) {
        for (int i = 0; i < s->w->size; i++)
            s->want_count[i] = 0;
        if (x->local_rc == MPI_SUCCESS)
            x->local_rc = irc;
    }
    for (int k = 0; k < s->nblocks && x->local_rc == MPI_SUCCESS; k++)
        x->total += in_stream(&out[k]);
    for (int k = 0; k < nwant && want != NULL; k++)
        want[k].deferred = place != NULL && want[k].dst == NULL;
    write_round(x);
}

/* Round 0 read: every member's header. Returns whether the exchange goes on. */
static int after_round0(ct_shm_xchg *x)
{
    ct_shm_stream *s = x->s;
    ct_shm_round *rs = &x->rs;
    /* every member read every header: the same on all. A nonblocking
     * exchange asks nothing (ct_shm_stream_begin) and leaves retire alone:
     * another thread may advance it while the window's own thread reads it. */
    if (x->blocking)
        s->retire = rs->release;
    if (rs->error || x->local_rc != MPI_SUCCESS) {
        if (x->local_rc == MPI_SUCCESS)
            ct_log_once("shm: another rank could not prepare its buffers; the call "
                        "returns MPI_ERR_OTHER");
        x->rc = x->local_rc != MPI_SUCCESS ? x->local_rc : MPI_ERR_OTHER;
        return 0;
    }
    x->rounds = rs->longest == 0 ? 1 : (rs->longest + s->W - 1) / s->W;
    s->empty = rs->longest == 0;
    s->all_direct = s->empty && rs->direct;
    if (x->place != NULL)
        x->place_rc = place_deferred(s, rs, x->want, x->nwant, x->rounds, x->place);
    return 1;
}

int ct_shm_stream_advance(ct_shm_xchg *x, const ct_shm_idle *idle, int block, int *done)
{
    *done = 0;
    while (!x->done) {
        if (!read_round(x, idle, block))
            return MPI_SUCCESS;
        if (x->r == 0 && !after_round0(x)) {
            x->done = 1;
            break;
        }
        if (++x->r < x->rounds) {
            write_round(x);
            continue;
        }
        x->done = 1;
        if (x->rs.truncated)
            ct_log_once("shm: a block is longer than its receive buffer; the call returns "
                        "MPI_ERR_TRUNCATE");
        x->rc = x->rs.truncated ? MPI_ERR_TRUNCATE : x->place_rc;
    }
    *done = 1;
    return x->rc;
}

int ct_shm_stream_run(ct_shm_stream *s, const ct_shm_out *out, int local_rc, ct_shm_want *want,
                      int nwant, const ct_shm_idle *idle, const ct_shm_place *place)
{
    ct_shm_xchg x;
    int done;
    ct_shm_stream_begin(&x, s, out, local_rc, want, nwant, place, 1);
    return ct_shm_stream_advance(&x, idle, 1, &done);
}

/* ------------------------------------------------------------------ */
/* The queue of nonblocking exchanges                                  */
/* ------------------------------------------------------------------ */

/* The queue is one thread's at a time: a thread may start a call on a
 * communicator while another completes an earlier one. */
static int try_claim(ct_shm_stream *s)
{
    return !__atomic_exchange_n(&s->queue_busy, 1, __ATOMIC_ACQUIRE);
}

static void unclaim(ct_shm_stream *s) { __atomic_store_n(&s->queue_busy, 0, __ATOMIC_RELEASE); }

/* Begins the head (under the claim), and the jobs after it while one
 * begins without the window: that one leaves the queue, and only then is
 * it marked detached (its owner may free it from then on). */
static void begin_head(ct_shm_stream *s)
{
    ct_shm_job *j;
    while ((j = s->head) != NULL && !j->begin(j)) {
        __atomic_store_n(&s->head, j->next, __ATOMIC_RELEASE);
        if (s->head == NULL)
            s->tail = NULL;
        __atomic_store_n(&j->detached, 1, __ATOMIC_RELEASE);
    }
}

void ct_shm_stream_enqueue(ct_shm_stream *s, ct_shm_job *job)
{
    unsigned spins = 0;
    job->next = NULL;
    job->done = 0;
    job->detached = 0;
    job->rc = MPI_SUCCESS;
    while (!try_claim(s))
        ct_shm_pause(s->w, &spins);
    if (s->tail != NULL)
        s->tail->next = job;
    else
        __atomic_store_n(&s->head, job, __ATOMIC_RELEASE);
    s->tail = job;
    if (s->head == job)
        begin_head(s);
    unclaim(s);
}

/* Advances the head (under the claim); on its completion, begins the next.
 * Returns whether the head completed. */
static int queue_step(ct_shm_stream *s)
{
    ct_shm_job *j = s->head;
    int done = 0;
    if (j == NULL)
        return 0;
    const int rc = j->advance(j, &done);
    if (!done)
        return 0;
    j->rc = rc;
    __atomic_store_n(&s->head, j->next, __ATOMIC_RELEASE);
    if (s->head == NULL)
        s->tail = NULL;
    else
        begin_head(s);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE); /* its owner may free it now */
    return 1;
}

static int reached(const ct_shm_stream *s, const ct_shm_job *job)
{
    return job != NULL ? __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) ||
                             __atomic_load_n(&job->detached, __ATOMIC_ACQUIRE)
                       : ct_shm_stream_idle(s);
}

int ct_shm_stream_progress(ct_shm_stream *s, ct_shm_job *job, int block)
{
    unsigned spins = 0;
    while (!reached(s, job)) {
        if (try_claim(s)) {
            while (!reached(s, job) && queue_step(s))
                continue;
            unclaim(s);
            if (reached(s, job))
                break;
        }
        if (!block) {
            /* A test that found nothing to do: where ranks outnumber cores,
             * the rank it waits for may need this core (an MPI_Test loop
             * kept each start of a persistent shm Alltoallv of 4 ranks on 2
             * cores some 6 ms, a scheduler's time slice), as Open MPI's
             * progress yields under mpi_yield_when_idle. */
            if (s->w->oversubscribed)
                sched_yield();
            return 0;
        }
        ct_shm_pause(s->w, &spins);
    }
    return 1;
}
