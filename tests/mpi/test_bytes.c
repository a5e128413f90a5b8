/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_bytes.c - the one byte view of a call's blocks (ct_bytes,
 * src/core/datatype.h), in a singleton MPI job: a contiguous type seen in
 * place, a non-contiguous one staged (allocated, or carved out of a
 * caller's buffer) and packed and unpacked block by block, and the stream
 * mode, where a contiguous type is seen in place only when its non-empty
 * blocks already lie back to back. Run by alltoallv.sh on one rank (it
 * links the internal library, as the unit tests do; not under valgrind,
 * whose leak check would judge the MPI library's MPI_Init).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contiguous_in_place),
        cmocka_unit_test(test_stream_staged),
        cmocka_unit_test(test_stream_in_place),
        cmocka_unit_test(test_noncontiguous_carved),
    };
    MPI_Init(&argc, &argv);
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
