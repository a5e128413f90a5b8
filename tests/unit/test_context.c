/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_context.c - what a context keeps for the modules above core
 * (src/core/context.h), without MPI: ct_ctx_ext makes an object once per
 * key, keeps none that create did not make, and releases them in the
 * reverse order of creation; ct_ctx_buffer gives each key its own buffer,
 * grown with its contents kept; the process-wide cache (src/core/cache.h)
 * frees the least recently used contexts' buffers first, never those of a
 * context a call is running on, the calling context's own last, and sets
 * its automatic limit from the largest need of one call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/cache.h"
#include "core/context.h"
#include "core/state.h"

static int made, released[4], nreleased;

/* arg: the value the object holds; 0 makes no object. */
static int make(ct_ctx *ctx, void *arg, void **obj)
{
    (void)ctx;
    made++;
    int *v = NULL;
    if (*(int *)arg != 0 && (v = malloc(sizeof *v)) != NULL)
        *v = *(int *)arg;
    *obj = v;
    return v != NULL ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void release(void *obj)
{
    released[nreleased++] = *(int *)obj;
    free(obj);
}

static const ct_ctx_key key_a = {"a", make, release, NULL}, key_b = {"b", make, release, NULL};

static void test_ext(void **state)
{
    (void)state;
    ct_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    void *obj;
    int none = 0, one = 1, two = 2;
    assert_null(ct_ctx_ext_find(ctx, &key_a));
    /* create made nothing: its code comes back, and nothing is kept */
    assert_int_equal(ct_ctx_ext(ctx, &key_a, &none, &obj), MPI_ERR_OTHER);
    assert_null(obj);
    assert_null(ct_ctx_ext_find(ctx, &key_a));
    assert_int_equal(ct_ctx_ext(ctx, &key_a, &one, &obj), MPI_SUCCESS);
    assert_int_equal(*(int *)obj, 1);
    assert_int_equal(ct_ctx_ext(ctx, &key_b, &two, &obj), MPI_SUCCESS);
    assert_int_equal(*(int *)obj, 2);
    /* made once per key: later calls find it, whatever they pass */
    assert_int_equal(ct_ctx_ext(ctx, &key_a, &two, &obj), MPI_SUCCESS);
    assert_int_equal(*(int *)obj, 1);
    assert_ptr_equal(ct_ctx_ext_find(ctx, &key_a), obj);
    assert_int_equal(made, 3);
    ct_ctx_ext_release(ctx);
    assert_int_equal(nreleased, 2);
    assert_int_equal(released[0], 2); /* the last made goes first */
    assert_int_equal(released[1], 1);
    assert_null(ct_ctx_ext_find(ctx, &key_a));
    free(ctx);
}

static const ct_ctx_buf_key buf_x = {"x"}, buf_y = {"y"};

static void test_buffers(void **state)
{
    (void)state;
    ct_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    assert_int_equal(ct_ctx_buffer_size(ctx, &buf_x), 0);
    char *x = ct_ctx_buffer(ctx, &buf_x, 10);
    char *y = ct_ctx_buffer(ctx, &buf_y, 10);
    assert_non_null(x);
    assert_non_null(y);
    assert_ptr_not_equal(x, y); /* two keys, two buffers */
    memset(x, 'x', 10);
    memset(y, 'y', 10);
    assert_int_equal(ct_ctx_buffer_size(ctx, &buf_x), 10);
    x = ct_ctx_buffer(ctx, &buf_x, 1000); /* grown: contents kept */
    assert_non_null(x);
    assert_true(ct_ctx_buffer_size(ctx, &buf_x) >= 1000);
    for (int i = 0; i < 10; i++)
        assert_int_equal(x[i], 'x');
    assert_ptr_equal(ct_ctx_buffer(ctx, &buf_y, 5), y); /* big enough already */
    assert_ptr_equal(ct_ctx_buffer(ctx, &buf_x, 0), x);
    for (int i = 0; i < CT_CTX_NBUFS; i++)
        free(ctx->buf[i].p);
    free(ctx);
}

/* One call on ctx that grows its buffer to n bytes. */
static void call(ct_ctx *ctx, size_t n)
{
    ct_cache_enter(ctx);
    assert_non_null(ct_ctx_buffer(ctx, &buf_x, n));
    ct_cache_leave(ctx);
}

static size_t kept(void)
{
    ct_cache_report r;
    ct_cache_get_report(&r);
    return r.kept;
}

static void test_cache(void **state)
{
    (void)state;
    ct_state *st = ct_state_get();
    const ct_settings *saved = st->settings;
    ct_settings set = {.cache = 1000};
    st->settings = &set;
    ct_ctx *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b), *c = calloc(1, sizeof *c);
    assert_true(a != NULL && b != NULL && c != NULL);
    call(a, 400);
    call(b, 400);
    assert_int_equal(kept(), 800);
    call(c, 400); /* 1200: a, the least recently used, goes */
    assert_int_equal(kept(), 800);
    assert_int_equal(ct_ctx_local_bytes(a), 0);
    assert_int_equal(ct_ctx_local_bytes(b), 400);
    call(b, 400); /* b is now more recent than c */
    call(a, 400); /* 1200: c goes, not b */
    assert_int_equal(ct_ctx_local_bytes(c), 0);
    assert_int_equal(ct_ctx_local_bytes(b), 400);
    assert_int_equal(kept(), 800);
    call(a, 2000); /* more than the limit: b goes, then a itself */
    assert_int_equal(ct_ctx_local_bytes(b), 0);
    assert_int_equal(ct_ctx_local_bytes(a), 0);
    assert_int_equal(kept(), 0);
    /* a call running on b (another thread's) keeps b's buffers */
    ct_cache_enter(b);
    assert_non_null(ct_ctx_buffer(b, &buf_x, 400));
    call(c, 900);
    assert_int_equal(kept(), 900);
    ct_cache_leave(b); /* 1300: c, idle and older, goes */
    assert_int_equal(ct_ctx_local_bytes(c), 0);
    assert_int_equal(ct_ctx_local_bytes(b), 400);
    /* room for a window: idle buffers are freed for it, a busy one is not;
     * the room is held until the window is counted or given up */
    assert_true(ct_cache_room(a, 800));
    assert_int_equal(ct_ctx_local_bytes(b), 0);
    assert_int_equal(kept(), 800);
    assert_false(ct_cache_room(c, 300)); /* held: not another's */
    ct_cache_shared(a, 800, 1);          /* the window takes what was held */
    assert_int_equal(kept(), 800);
    ct_cache_shared(a, -800, 1);
    assert_int_equal(kept(), 0);
    assert_true(ct_cache_room(a, 800));
    ct_cache_unreserve(a, 800); /* not made after all */
    assert_int_equal(kept(), 0);
    assert_false(ct_cache_room(a, 1001));
    ct_cache_enter(a);
    assert_non_null(ct_ctx_buffer(a, &buf_x, 400));
    call(c, 400);
    ct_cache_enter(c);
    assert_false(ct_cache_room(c, 700)); /* c's 400 are in use (a's count from its leave) */
    ct_cache_leave(c);
    ct_cache_leave(a);
    /* windows count until they are freed; one that finds no room asks the
     * least recently used releasable ones back (b's, not c's node window,
     * nor the asking context's own), until the shortfall is covered */
    assert_int_equal(kept(), 800);
    ct_cache_shared(b, 100, 1);
    ct_cache_shared(c, 100, 0);
    assert_int_equal(kept(), 1000);
    assert_false(ct_cache_wish(b));
    ct_cache_enter(a); /* a and c in calls: no idle buffer to free */
    ct_cache_enter(c);
    assert_false(ct_cache_room(a, 50));
    assert_true(ct_cache_wish(b));
    assert_false(ct_cache_wish(c));
    assert_false(ct_cache_wish(a));
    ct_cache_leave(c);
    ct_cache_leave(a);
    ct_cache_shared(b, -100, 1); /* released: nothing left to ask */
    assert_false(ct_cache_wish(b));
    ct_cache_shared(c, -100, 0);
    assert_int_equal(kept(), 800);
    /* automatic: the floor, then twice the largest need of one call */
    set.cache_auto = 1;
    assert_int_equal(ct_cache_limit(), CT_CACHE_FLOOR);
    call(c, 40u << 20);
    assert_int_equal(ct_cache_limit(), 80u << 20);
    assert_int_equal(ct_ctx_local_bytes(c), 40u << 20); /* a job of one call keeps it */
    ct_ctx *all[3] = {a, b, c};
    for (int i = 0; i < 3; i++) { /* as ctx_free: the records go with the contexts */
        ct_ctx_ext_release(all[i]);
        ct_ctx_drop_buffers(all[i]);
        free(all[i]);
    }
    assert_int_equal(kept(), 0);
    st->settings = saved;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ext),
        cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
