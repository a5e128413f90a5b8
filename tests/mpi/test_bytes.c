/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bytes.c - the one byte view of a call's blocks (ct_bytes,
 * src/core/datatype.h), in a singleton MPI job: a contiguous type seen in
 * place, a non-contiguous one staged (allocated, or carved out of a
 * caller's buffer) and packed and unpacked block by block, and the stream
 * mode, where a contiguous type is seen in place only when its non-empty
 * blocks already lie back to back; both sides of a call (ct_bytes_pair) in
 * bytes without an array of their own where both are contiguous, and a
 * request's step (bytes_step.h) only where a side is staged. Run by
 * alltoallv.sh on one rank (it links the internal library, as the unit
 * tests do; not under valgrind, whose leak check would judge the MPI
 * library's MPI_Init).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/bytes_step.h"
#include "core/datatype.h"

/* Blocks of ints: counts {2, 0, 3}, displacements {5, 0, 0} in elements. */
static const int counts[] = {2, 0, 3}, displs[] = {5, 0, 0};

static void fill(int *buf, int n, int base)
{
    for (int i = 0; i < n; i++)
        buf[i] = base + i;
}

static void test_contiguous_in_place(void **state)
{
    (void)state;
    int buf[8] = {0};
    ct_bytes v;
    assert_int_equal(ct_bytes_init(&v, buf, 3, ct_vec_int(counts), ct_vec_int(displs), MPI_INT,
                                   0),
                     MPI_SUCCESS);
    assert_false(v.staged);
    assert_ptr_equal(ct_bytes_block(&v, 0), (char *)(buf + 5));
    assert_ptr_equal(ct_bytes_block(&v, 2), (char *)buf);
    assert_int_equal(ct_bytes_len(&v, 0), 2 * sizeof(int));
    assert_int_equal(ct_bytes_len(&v, 1), 0);
    size_t need = 0;
    assert_int_equal(ct_bytes_layout(&v, NULL, &need), 0);
    assert_int_equal(need, 0);
    assert_int_equal(ct_bytes_alloc(&v), MPI_SUCCESS);
    assert_null(v.owned);
    assert_int_equal(ct_bytes_pack(&v, MPI_COMM_SELF), MPI_SUCCESS); /* nothing to do */
    ct_bytes_free(&v);
}

/* Blocks 2, 0, 3 at 5, 0, 0 are not back to back: a stream stages them in
 * block order; block 2's first element is at offset 2 ints. */
static void test_stream_staged(void **state)
{
    (void)state;
    int buf[8], back[8];
    ct_bytes v;
    fill(buf, 8, 100);
    assert_int_equal(ct_bytes_init(&v, buf, 3, ct_vec_int(counts), ct_vec_int(displs), MPI_INT,
                                   1),
                     MPI_SUCCESS);
    assert_true(v.staged);
    assert_int_equal(ct_bytes_alloc(&v), MPI_SUCCESS);
    assert_int_equal(v.staged_bytes, 5 * sizeof(int));
    assert_int_equal(ct_bytes_pack(&v, MPI_COMM_SELF), MPI_SUCCESS);
    const int *s = (const int *)ct_bytes_stream(&v);
    assert_ptr_equal(s, v.staging);
    const int want[] = {105, 106, 100, 101, 102};
    assert_memory_equal(s, want, sizeof want);
    assert_ptr_equal(ct_bytes_block(&v, 2), v.staging + 2 * sizeof(int));
    /* Unpacked into another buffer, each block lands where its displacement says. */
    memset(back, 0, sizeof back);
    v.buf = (char *)back;
    assert_int_equal(ct_bytes_unpack(&v, MPI_COMM_SELF), MPI_SUCCESS);
    const int after[] = {100, 101, 102, 0, 0, 105, 106, 0};
    assert_memory_equal(back, after, sizeof after);
    ct_bytes_free(&v);
}

/* Back to back (empty blocks anywhere): a stream is seen in place, from its
 * first non-empty block. */
static void test_stream_in_place(void **state)
{
    (void)state;
    int buf[8] = {0};
    const int c[] = {0, 2, 0, 3}, d[] = {0, 1, 7, 3};
    ct_bytes v;
    assert_int_equal(ct_bytes_init(&v, buf, 4, ct_vec_int(c), ct_vec_int(d), MPI_INT, 1),
                     MPI_SUCCESS);
    assert_false(v.staged);
    assert_ptr_equal(ct_bytes_stream(&v), (char *)(buf + 1));
    /* MPI_Alltoall-style linear blocks of a contiguous type are a stream too. */
    assert_int_equal(ct_bytes_init(&v, buf, 4, ct_vec_linear(2, 0), ct_vec_linear(0, 2), MPI_INT,
                                   1),
                     MPI_SUCCESS);
    assert_false(v.staged);
    assert_ptr_equal(ct_bytes_stream(&v), (char *)buf);
}

/* A vector type (two ints, one skipped: size 8, extent 12) is staged, in a
 * buffer of the caller's after 64 bytes of its own, and packs to its data. */
static void test_noncontiguous_carved(void **state)
{
    (void)state;
    MPI_Datatype vec, two;
    int buf[24], back[24];
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    assert_int_equal(MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &two), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&two), MPI_SUCCESS);
    fill(buf, 24, 0);
    ct_bytes v;
    assert_int_equal(ct_bytes_init(&v, buf, 3, ct_vec_linear(2, 0), ct_vec_linear(0, 2), two, 0),
                     MPI_SUCCESS);
    assert_true(v.staged);
    size_t need = 64;
    const size_t staged = ct_bytes_layout(&v, NULL, &need);
    assert_int_equal(staged, 3 * 2 * 2 * sizeof(int));
    char *mem = malloc(need), *end = mem + need;
    assert_non_null(mem);
    size_t off = 64;
    assert_int_equal(ct_bytes_layout(&v, mem, &off), staged);
    assert_int_equal(off, need);
    assert_true(v.staging >= mem + 64 && v.staging + staged <= end);
    assert_int_equal(ct_bytes_pack(&v, MPI_COMM_SELF), MPI_SUCCESS);
    /* Block j: elements 2 j and 2 j + 1, each element ints 0 and 2 of its 3. */
    const int want1[] = {6, 8, 9, 11};
    assert_int_equal(ct_bytes_len(&v, 1), sizeof want1);
    assert_memory_equal(ct_bytes_block(&v, 1), want1, sizeof want1);
    memset(back, 0, sizeof back);
    v.buf = (char *)back;
    assert_int_equal(ct_bytes_unpack(&v, MPI_COMM_SELF), MPI_SUCCESS);
    for (int i = 0; i < 24; i++) /* 6 elements back; their holes untouched */
        assert_int_equal(back[i], i < 18 && i % 3 != 1 ? i : 0);
    free(mem);
    MPI_Type_free(&two);
    MPI_Type_free(&vec);
}

/* A call's two sides, both contiguous: MPI_INT blocks of int counts, and
 * blocks of two ints whose data begin 4 bytes into their 8-byte extent
 * (true_lb 4) of MPI_Count counts and MPI_Aint displacements. The byte view
 * reads the call's own arrays (ct_vec_affine): no array, nothing staged. */
static void test_pair_in_place(void **state)
{
    (void)state;
    int sbuf[8];
    char rbuf[64];
    const MPI_Aint at4 = 4;
    const MPI_Count rcounts[] = {1, 0, 2};
    const MPI_Aint rdispls[] = {5, 0, 1};
    MPI_Datatype shifted;
    assert_int_equal(MPI_Type_create_hindexed_block(1, 2, &at4, MPI_INT, &shifted), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&shifted), MPI_SUCCESS);
    ct_bytes_pair v;
    assert_int_equal(ct_bytes_pair_init(&v, sbuf, 3, ct_vec_int(counts), ct_vec_int(displs),
                                        MPI_INT, rbuf, 3, ct_vec_count(rcounts),
                                        ct_vec_aint(rdispls), shifted),
                     MPI_SUCCESS);
    assert_true(ct_bytes_pair_in_place(&v));
    assert_null(v.sarrays);
    assert_null(v.rarrays);
    assert_int_equal(ct_bytes_pair_bytes(&v), 0);
    for (int j = 0; j < 3; j++) {
        assert_int_equal(ct_vec_at(&v.scounts, j), counts[j] * (MPI_Count)sizeof(int));
        assert_ptr_equal(v.sbase + ct_vec_at(&v.sdispls, j), (char *)(sbuf + displs[j]));
        assert_int_equal(ct_vec_at(&v.rcounts, j), rcounts[j] * 8);
        assert_ptr_equal(v.rbase + ct_vec_at(&v.rdispls, j), rbuf + rdispls[j] * 8 + 4);
    }
    ct_bytes_pair_free(&v);
    /* uniform blocks (MPI_Alltoall): linear, in bytes */
    assert_int_equal(ct_bytes_pair_init(&v, sbuf, 2, ct_vec_linear(3, 0), ct_vec_linear(0, 3),
                                        MPI_INT, rbuf, 2, ct_vec_linear(2, 0),
                                        ct_vec_linear(1, 2), shifted),
                     MPI_SUCCESS);
    assert_true(ct_bytes_pair_in_place(&v));
    assert_int_equal(ct_vec_at(&v.scounts, 1), 12);
    assert_int_equal(ct_vec_at(&v.sdispls, 1), 12);
    assert_int_equal(ct_vec_at(&v.rcounts, 1), 16);
    assert_ptr_equal(v.rbase + ct_vec_at(&v.rdispls, 1), rbuf + 3 * 8 + 4);
    ct_bytes_pair_free(&v);
    MPI_Type_free(&shifted);
}

/* A request's byte view: built on the request's own schedule where the view
 * is in place, else on a step that takes the view, arrays and staging (and
 * is freed with the schedule, or at once where the build failed: an
 * --enable-asan build's leak check sees any left). */
static void test_step_where_staged(void **state)
{
    (void)state;
    int sbuf[8], rbuf[24];
    MPI_Datatype vec;
    assert_int_equal(MPI_Type_vector(2, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    assert_int_equal(MPI_Type_commit(&vec), MPI_SUCCESS);
    ct_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.comm = ctx.local_comm = MPI_COMM_SELF;
    ct_sched s;
    ct_sched_prepare(&s, &ctx, 7, 1);
    ct_bytes_pair v;
    ct_bytes_step *step;
    ct_sched *into;
    assert_int_equal(ct_bytes_pair_init(&v, sbuf, 3, ct_vec_int(counts), ct_vec_int(displs),
                                        MPI_INT, rbuf, 3, ct_vec_int(counts),
                                        ct_vec_int(displs), MPI_INT),
                     MPI_SUCCESS);
    assert_int_equal(ct_bytes_step_begin(&s, &ctx, &v, &step, &into), MPI_SUCCESS);
    assert_null(step);
    assert_ptr_equal(into, &s);
    assert_int_equal(ct_bytes_step_end(&s, step, MPI_SUCCESS), MPI_SUCCESS);
    for (int fail = 0; fail <= 1; fail++) {
        assert_int_equal(ct_bytes_pair_init(&v, sbuf, 3, ct_vec_int(counts),
                                            ct_vec_int(displs), MPI_INT, rbuf, 3,
                                            ct_vec_int(counts), ct_vec_int(displs), vec),
                         MPI_SUCCESS);
        assert_false(ct_bytes_pair_in_place(&v));
        assert_true(v.r.staged);
        assert_int_equal(ct_bytes_step_begin(&s, &ctx, &v, &step, &into), MPI_SUCCESS);
        assert_non_null(step);
        assert_ptr_equal(into, &step->inner);
        assert_true(step->v.r.staged);
        assert_non_null(step->v.rarrays); /* taken by the step */
        assert_null(v.rarrays);
        assert_int_equal(into->tag, 7);
        const int rc = fail ? MPI_ERR_OTHER : MPI_SUCCESS;
        assert_int_equal(ct_bytes_step_end(&s, step, rc), rc);
    }
    assert_int_equal(s.nops, 1); /* the step that was built */
    ct_sched_free(&s);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contiguous_in_place),
        cmocka_unit_test(test_stream_staged),
        cmocka_unit_test(test_stream_in_place),
        cmocka_unit_test(test_noncontiguous_carved),
        cmocka_unit_test(test_pair_in_place),
        cmocka_unit_test(test_step_where_staged),
    };
    MPI_Init(&argc, &argv);
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
