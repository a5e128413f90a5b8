/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_context.c - what a context keeps for the modules above core
 * (src/core/context.h), without MPI: ct_ctx_ext makes an object once per
 * key, keeps none that create did not make, and releases them in the
 * reverse order of creation; ct_ctx_buffer gives each key its own buffer,
 * grown with its contents kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/context.h"

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

static const ct_ctx_key key_a = {"a", make, release}, key_b = {"b", make, release};

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ext),
        cmocka_unit_test(test_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
