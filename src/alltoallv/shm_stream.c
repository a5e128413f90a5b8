/*
 * shm_stream.c - personalised exchange through a bounded shared window: the
 * rounds (shm_stream.h).
 */
#include "alltoallv/shm_stream.h"
#include "core/log.h"
#include "core/state.h"

#include <stdlib.h>
#include <string.h>

/* The header at the start of each half; the data follows at s->hdr. */
typedef struct stream_head {
    uint64_t total; /* bytes of the stream */
    uint64_t error; /* the member has nothing to publish: the call fails */
    struct {
        uint64_t off, bytes;
    } block[]; /* [nblocks] where each block lies in the stream */
} stream_head;

static size_t head_bytes(int nblocks)
{
    return CT_ALIGN_UP(sizeof(stream_head) + (size_t)nblocks * 2 * sizeof(uint64_t));
}

size_t ct_shm_stream_bytes(int nblocks)
{
    return 2 * (head_bytes(nblocks) + ct_cfg()->shm_window);
}

static void stream_free(void *p)
{
    ct_shm_stream *s = p;
    if (s == NULL)
        return;
    ct_shm_win_free(s->w); /* collective over s->comm, before it goes */
    if (s->owns_comm && s->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&s->comm);
    free(s);
}

/* The state of a communicator without usable windows: read-only. */
static const ct_shm_stream no_window = {.w = NULL};

/* Creates the window over comm and agrees over ctx->comm (the window's
 * group may be one node of it) whether every group has one. */
static int stream_create(ct_ctx *ctx, MPI_Comm comm, int owns_comm, int nblocks,
                         const char *who, ct_shm_stream **out)
{
    int rc = MPI_SUCCESS, here, everywhere;
    ct_shm_stream *s = calloc(1, sizeof *s);
    ct_shm_win *w = NULL;
    *out = NULL;
    rc = ct_shm_win_create(comm, ct_shm_stream_bytes(nblocks), who, &w);
    here = rc == MPI_SUCCESS && w != NULL && s != NULL;
    CT_CALL(PMPI_Allreduce(&here, &everywhere, 1, MPI_INT, MPI_MIN, ctx->comm));
    if (!everywhere) {
        if (w != NULL) /* the group's window is whole: freed by all its ranks */
            ct_shm_win_free(w);
        if (here)
            ct_log_once("%s: another node could not set up its shared window; the calls on "
                        "this communicator that choose it are served another way", who);
        goto out;
    }
    s->w = w;
    s->comm = comm;
    s->owns_comm = owns_comm;
    s->nblocks = nblocks;
    s->W = ct_cfg()->shm_window;
    s->hdr = head_bytes(nblocks);
    *out = s;
    s = NULL;
out:
    free(s);
    return rc;
}

int ct_shm_stream_get(ct_ctx *ctx, ct_ext_id id, MPI_Comm comm, int owns_comm, int nblocks,
                      const char *who, ct_shm_stream **out)
{
    int rc = MPI_SUCCESS;
    if (ctx->ext[id].p == NULL) {
        ct_shm_stream *s;
        rc = stream_create(ctx, comm, owns_comm, nblocks, who, &s);
        if (s == NULL && owns_comm)
            PMPI_Comm_free(&comm);
        ctx->ext[id].p = s != NULL ? (void *)s : (void *)&no_window;
        ctx->ext[id].release = s != NULL ? stream_free : NULL;
    }
    *out = ctx->ext[id].p == (const void *)&no_window ? NULL : ctx->ext[id].p;
    return rc;
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

static char *half_of(const ct_shm_stream *s, int member, unsigned long seq)
{
    return s->w->part[member] + (seq & 1) * (s->hdr + s->W);
}

/* Where the copy into this rank's stream has got to: block k starts at
 * stream offset start; blocks before k are in the window already. */
typedef struct cursor {
    int k;
    size_t start;
} cursor;

/* Copies stream bytes [lo, hi) into data (the half's data area). */
static void copy_in(char *data, const ct_shm_out *out, int nblocks, size_t lo, size_t hi,
                    cursor *c)
{
    while (c->k < nblocks && c->start < hi) {
        const size_t end = c->start + out[c->k].bytes;
        const size_t from = max_size(lo, c->start), to = min_size(hi, end);
        if (to > from)
            memcpy(data + (from - lo), out[c->k].src + (from - c->start), to - from);
        if (end > hi)
            break; /* the block goes on in the next round */
        c->start = end;
        c->k++;
    }
}

static void write_head(stream_head *h, const ct_shm_out *out, int nblocks, size_t total,
                       int error)
{
    size_t off = 0;
    h->total = total;
    h->error = (uint64_t)error;
    for (int k = 0; k < nblocks && !error; k++) {
        h->block[k].off = off;
        h->block[k].bytes = out[k].bytes;
        off += out[k].bytes;
    }
}

/* Round 0's headers, read by every member alike: the number of rounds, or
 * an error when some member has nothing to publish; and where each wanted
 * block lies in its member's stream (cut to its destination). */
static int read_heads(const ct_shm_stream *s, unsigned long seq, ct_shm_want *want, int nwant,
                      size_t *rounds, int *truncated)
{
    size_t longest = 0;
    int error = 0;
    for (int i = 0; i < s->w->size; i++) {
        const stream_head *h = (const stream_head *)half_of(s, i, seq);
        longest = max_size(longest, (size_t)h->total);
        error |= h->error != 0;
    }
    if (error)
        return MPI_ERR_OTHER;
    *rounds = longest == 0 ? 1 : (longest + s->W - 1) / s->W;
    for (int w = 0; w < nwant; w++) {
        const stream_head *h = (const stream_head *)half_of(s, want[w].member, seq);
        want[w].off = (size_t)h->block[want[w].block].off;
        want[w].bytes = (size_t)h->block[want[w].block].bytes;
        if (want[w].bytes > want[w].cap) {
            want[w].bytes = want[w].cap;
            *truncated = 1;
        }
    }
    return MPI_SUCCESS;
}

/* Copies the parts of the wanted blocks that lie in stream bytes [lo, hi). */
static void copy_out(const ct_shm_stream *s, unsigned long seq, const ct_shm_want *want,
                     int nwant, size_t lo, size_t hi)
{
    for (int w = 0; w < nwant; w++) {
        const size_t from = max_size(lo, want[w].off);
        const size_t to = min_size(hi, want[w].off + want[w].bytes);
        if (to > from)
            memcpy(want[w].dst + (from - want[w].off),
                   half_of(s, want[w].member, seq) + s->hdr + (from - lo), to - from);
    }
}

int ct_shm_stream_run(ct_shm_stream *s, const ct_shm_out *out, int local_rc, ct_shm_want *want,
                      int nwant)
{
    ct_shm_win *w = s->w;
    size_t total = 0, rounds = 1;
    int truncated = 0;
    cursor c = {0, 0};
    for (int k = 0; k < s->nblocks && local_rc == MPI_SUCCESS; k++)
        total += out[k].bytes;
    for (size_t r = 0; r < rounds; r++) {
        const size_t lo = r * s->W, hi = lo + s->W;
        char *mine = half_of(s, w->rank, w->seq);
        if (r == 0)
            write_head((stream_head *)mine, out, s->nblocks, total, local_rc != MPI_SUCCESS);
        if (local_rc == MPI_SUCCESS)
            copy_in(mine + s->hdr, out, s->nblocks, lo, hi, &c);
        const unsigned long seq = w->seq; /* the half just written, on every member */
        ct_shm_publish(w);
        ct_shm_wait_all(w);
        if (r == 0) {
            const int rc = read_heads(s, seq, want, nwant, &rounds, &truncated);
            if (rc != MPI_SUCCESS || local_rc != MPI_SUCCESS) {
                if (local_rc == MPI_SUCCESS)
                    ct_log_once("shm: another rank could not prepare its buffers; the call "
                                "returns MPI_ERR_OTHER");
                return local_rc != MPI_SUCCESS ? local_rc : rc;
            }
        }
        copy_out(s, seq, want, nwant, lo, hi);
    }
    if (truncated)
        ct_log_once("shm: a block is longer than its receive buffer; the call returns "
                    "MPI_ERR_TRUNCATE");
    return truncated ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}
