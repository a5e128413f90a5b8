/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cache.c - the process-wide limit on what coltune keeps between calls
 * (cache.h).
 */
#include "core/cache.h"
#include "core/state.h"

#include <stdlib.h>

/* What the cache knows of a context, hung on it (ct_ctx_ext) by its first
 * call, so that it goes with the context; under ct_state_lock. */
typedef struct member {
    ct_ctx *ctx;
    struct member *older, *newer; /* the least recently used list */
    size_t local;  /* bytes of the context's buffers at its last call boundary */
    size_t shared; /* bytes of its shared windows */
    size_t releasable; /* of those, the windows the cache may ask back */
    size_t reserved; /* room a window being made holds (ct_cache_room) */
    int busy;      /* calls running on it (ct_cache_enter .. leave) */
    int listed;
    int wish;      /* its windows are asked back (read without the lock: atomic) */
} member;

/* Takes the state lock where several threads may call MPI at once
 * (MPI_THREAD_MULTIPLE: ct_state.last.usable is 0); where one thread calls
 * at a time (usable), the calls are ordered already and the lock, some
 * 10 ns a call twice, is left out. Returns whether it was taken. */
static int cache_lock(ct_state *st)
{
    const int multiple = !st->last.usable;
    if (multiple)
        ct_state_lock(st);
    return multiple;
}

static void cache_unlock(ct_state *st, int locked)
{
    if (locked)
        ct_state_unlock(st);
}

static size_t limit_of(const ct_state *st)
{
    const ct_settings *set = ct_settings_get();
    if (!set->cache_auto)
        return set->cache;
    return st->cache.largest > CT_CACHE_FLOOR / 2 ? 2 * st->cache.largest : CT_CACHE_FLOOR;
}

size_t ct_cache_limit(void)
{
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    const size_t limit = limit_of(st);
    cache_unlock(st, locked);
    return limit;
}

/* The list runs from st->cache.oldest (least recently used) to newest. */
static void unlink_member(ct_state *st, member *m)
{
    if (!m->listed)
        return;
    if (m->older != NULL)
        m->older->newer = m->newer;
    else
        st->cache.oldest = m->newer;
    if (m->newer != NULL)
        m->newer->older = m->older;
    else
        st->cache.newest = m->older;
    m->older = m->newer = NULL;
    m->listed = 0;
}

/* Makes m the most recently used. */
static void touch(ct_state *st, member *m)
{
    if (st->cache.newest == m)
        return;
    unlink_member(st, m);
    member *newest = st->cache.newest;
    m->older = newest;
    m->newer = NULL;
    if (newest != NULL)
        newest->newer = m;
    else
        st->cache.oldest = m;
    st->cache.newest = m;
    m->listed = 1;
}

static int member_create(ct_ctx *ctx, void *arg, void **obj)
{
    (void)arg;
    member *m = calloc(1, sizeof *m);
    if (m != NULL)
        m->ctx = ctx;
    *obj = m;
    return m != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The context goes: the cache forgets it (its windows, made after this
 * record, went before it). */
static void member_release(void *obj)
{
    member *m = obj;
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    unlink_member(st, m);
    st->cache.kept -= m->local + m->shared + m->reserved;
    cache_unlock(st, locked);
    m->ctx->cache = NULL;
    free(m);
}

static const ct_ctx_key member_key = {"cache", member_create, member_release, NULL};

/* ctx's record, made on first use (NULL when out of memory: the context is
 * then not counted); kept in ctx->cache too, to spare every call the
 * search. */
static member *member_of(ct_ctx *ctx)
{
    if (ctx->cache == NULL)
        (void)ct_ctx_ext(ctx, &member_key, NULL, &ctx->cache);
    return ctx->cache;
}

/* Frees idle contexts' buffers, least recently used first, until the total
 * is within limit; the busy ones have a call running (another thread's). */
static void free_buffers(ct_state *st, size_t limit)
{
    for (member *m = st->cache.oldest; m != NULL && st->cache.kept > limit; m = m->newer) {
        if (m->busy > 0 || m->local == 0)
            continue;
        st->cache.kept -= m->local;
        m->local = 0;
        ct_ctx_drop_buffers(m->ctx);
        st->cache.released_buffers++;
    }
}

static void set_wish(member *m, int wish) { __atomic_store_n(&m->wish, wish, __ATOMIC_RELAXED); }

/* A window of need bytes found no room: asks windows back, least recently
 * used first, until what is asked covers the shortfall; the ranks of each
 * release it at the end of its communicator's next exchange on it. The
 * asking context's own are not asked (the call needs them). */
static void ask_windows(ct_state *st, const member *asking, size_t need, size_t limit)
{
    const size_t want = st->cache.kept + need > limit ? st->cache.kept + need - limit : 0;
    size_t asked = 0;
    for (member *m = st->cache.oldest; m != NULL && asked < want; m = m->newer) {
        if (m == asking || m->releasable == 0)
            continue;
        set_wish(m, 1);
        asked += m->releasable;
    }
}

static void note_peak(ct_state *st)
{
    if (st->cache.kept > st->cache.peak)
        st->cache.peak = st->cache.kept;
}

void ct_cache_enter(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    member *m = member_of(ctx);
    if (m == NULL)
        return;
    const int locked = cache_lock(st);
    m->busy++;
    touch(st, m);
    cache_unlock(st, locked);
}

void ct_cache_leave(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    /* The windows whose ranks agreed in this call to release them: each
     * rank of their groups is here (collective, so outside the lock, and
     * whether or not this rank has a record). */
    ct_ctx_ext_retire(ctx);
    member *m = ctx->cache;
    if (m == NULL)
        return;
    const int locked = cache_lock(st);
    const size_t local = ct_ctx_local_bytes(ctx);
    st->cache.kept = st->cache.kept - m->local + local;
    m->local = local;
    if (local + m->shared > st->cache.largest)
        st->cache.largest = local + m->shared;
    m->busy--;
    touch(st, m); /* the most recently used: its buffers go last */
    free_buffers(st, limit_of(st));
    note_peak(st);
    cache_unlock(st, locked);
}

int ct_cache_room(ct_ctx *ctx, size_t bytes)
{
    ct_state *st = ct_state_get();
    member *m = member_of(ctx);
    const int locked = cache_lock(st);
    const size_t limit = limit_of(st);
    const int fits = bytes <= limit;
    if (fits)
        free_buffers(st, limit - bytes);
    const int room = m != NULL && fits && st->cache.kept + bytes <= limit;
    if (room) { /* held until the window is made or given up */
        m->reserved += bytes;
        st->cache.kept += bytes;
    } else if (fits) {
        ask_windows(st, m, bytes, limit);
    }
    cache_unlock(st, locked);
    return room;
}

void ct_cache_unreserve(ct_ctx *ctx, size_t bytes)
{
    ct_state *st = ct_state_get();
    member *m = ctx->cache;
    if (m == NULL)
        return;
    const int locked = cache_lock(st);
    m->reserved -= bytes;
    st->cache.kept -= bytes;
    cache_unlock(st, locked);
}

void ct_cache_refused(void)
{
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    st->cache.refused_windows++;
    cache_unlock(st, locked);
}

int ct_cache_wish(const ct_ctx *ctx)
{
    const member *m = ctx->cache;
    return m != NULL && __atomic_load_n(&m->wish, __ATOMIC_RELAXED);
}

void ct_cache_released(void)
{
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    st->cache.released_windows++;
    cache_unlock(st, locked);
}

void ct_cache_shared(ct_ctx *ctx, long long bytes, int releasable)
{
    ct_state *st = ct_state_get();
    /* a window is freed before the record (made first) goes: never made here */
    member *m = bytes >= 0 ? member_of(ctx) : ctx->cache;
    if (m == NULL)
        return;
    const int locked = cache_lock(st);
    const size_t n = bytes >= 0 ? (size_t)bytes : (size_t)-bytes;
    if (bytes >= 0) {
        const size_t held = m->reserved < n ? m->reserved : n; /* ct_cache_room's */
        m->reserved -= held;
        m->shared += n;
        m->releasable += releasable ? n : 0;
        st->cache.kept += n - held;
    } else {
        m->shared -= n;
        m->releasable -= releasable ? n : 0;
        st->cache.kept -= n;
        if (m->releasable == 0)
            set_wish(m, 0); /* nothing left to ask back */
    }
    note_peak(st);
    cache_unlock(st, locked);
}

void ct_cache_records(long long bytes)
{
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    if (bytes >= 0)
        st->cache.kept += (size_t)bytes;
    else
        st->cache.kept -= (size_t)-bytes;
    note_peak(st);
    cache_unlock(st, locked);
}

void ct_cache_get_report(ct_cache_report *r)
{
    ct_state *st = ct_state_get();
    const int locked = cache_lock(st);
    r->limit = limit_of(st);
    r->peak = st->cache.peak;
    r->kept = st->cache.kept;
    r->released_buffers = st->cache.released_buffers;
    r->refused_windows = st->cache.refused_windows;
    r->released_windows = st->cache.released_windows;
    cache_unlock(st, locked);
}
