/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cache.h - one process-wide limit on what coltune keeps between calls
 * (COLTUNE_CACHE): the contexts' reusable buffers (context.h: scratch,
 * requests, ct_ctx_buffer), their shared windows (shm_stream.h) and the
 * online learners' records.
 *
 * Every call an algorithm runs is bracketed by ct_cache_enter and
 * ct_cache_leave (driver.c); the first hangs the cache's record of the
 * context on it (ct_ctx_ext), which goes with the context. At leave, the process's total is compared with
 * the limit, and while it is over, the buffers of the least recently used
 * contexts that no call is running on are freed; the context whose call
 * ends comes last of all, so a call that needs more than the limit
 * allocates for itself and frees after.
 *
 * A shared window is a collective object, which one rank may not free
 * alone: it is made only where it fits. Its making is collective anyway,
 * and one allreduce before it agrees whether every rank has room (after
 * freeing idle buffers); where some rank has not, the call is served
 * without it, as where /dev/shm is short, and the window is asked for
 * again at that communicator's 2nd, 4th, 8th, ... call of the algorithm.
 * A rank that found no room also asks windows back, least recently used
 * first, until what it asks covers the shortfall: a wish, which the
 * window's ranks read from each other in the first round of its next
 * exchange (shm_stream.c); if any wished, all release it together when
 * that call ends (ct_ctx_ext_retire, from ct_cache_leave), and its
 * communicator asks for it again at its next call. A window over one node
 * of a communicator of several (node_aware) is not asked back: making it
 * again takes every node, which its ranks on one node cannot agree for the
 * others. Nor does a rank ask a window back while a request of its holds
 * the communicator (shm_stream.c: a persistent request starts on it again).
 * The windows never take more than the limit.
 *
 * The limit is COLTUNE_CACHE bytes, or, by default (auto), the larger of
 * CT_CACHE_FLOOR and twice the largest need of one call seen so far (what
 * one context keeps at the end of its call), so that a job of one
 * communicator never frees between its calls and a job of hundreds keeps a
 * few times its largest call's need.
 */
#ifndef CT_CACHE_H
#define CT_CACHE_H

#include "core/context.h"

/* A call begins on ctx: ctx becomes the most recently used, and nothing of
 * it is freed until ct_cache_leave. */
void ct_cache_enter(ct_ctx *ctx);
/* The call on ctx ends: counts what ctx keeps, and frees what exceeds the
 * limit, least recently used first. */
void ct_cache_leave(ct_ctx *ctx);

/* Whether bytes more (a window ctx is about to make) fit the limit on this
 * rank, after freeing idle contexts' buffers: if so, they are held for it
 * (so that no other thread's window takes them meanwhile) until
 * ct_cache_shared counts the window or ct_cache_unreserve gives them up;
 * where they do not, the least recently used releasable windows of other
 * contexts are asked back. Local. A refusal is counted by
 * ct_cache_refused, once the ranks have agreed on one. */
int ct_cache_room(ct_ctx *ctx, size_t bytes);
void ct_cache_unreserve(ct_ctx *ctx, size_t bytes);
void ct_cache_refused(void);
/* A window of ctx made (bytes > 0: what ct_cache_room held for it becomes
 * the window's) or freed (bytes < 0); releasable: the cache may ask it
 * back. */
void ct_cache_shared(ct_ctx *ctx, long long bytes, int releasable);
/* Whether ctx's windows are asked back (written into an exchange's first
 * round; atomic). */
int ct_cache_wish(const ct_ctx *ctx);
/* A window was released because it was asked back. */
void ct_cache_released(void);
/* Records that are neither buffers nor windows (the learners'): counted,
 * never freed by the cache. */
void ct_cache_records(long long bytes);

/* The limit now. */
size_t ct_cache_limit(void);

/* What the limit did, for COLTUNE_STATS. */
typedef struct ct_cache_report {
    size_t limit, peak, kept;
    unsigned long released_buffers, refused_windows, released_windows;
} ct_cache_report;
void ct_cache_get_report(ct_cache_report *r);

#endif
