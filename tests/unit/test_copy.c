/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_copy.c - ct_memcpy (src/core/copy.h), the byte copy of the data
 * paths: at every distance between destination and source modulo 4096 and
 * at lengths around its piece size, it copies exactly the bytes memcpy
 * would (no byte before or after the destination touched), and it cuts a
 * copy into pieces exactly where copy.h says: at distances 1 to
 * CT_COPY_NEAR - 1 and lengths above CT_COPY_PIECE. No timing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/copy.h"

#define AREA (64 * 1024)
#define GUARD 64

static unsigned char pattern(size_t i) { return (unsigned char)(i * 167u + 13u + (i >> 9)); }

/* Copies n bytes at distance dist (mod 4096) and source offset so, with
 * guard bytes around the destination, and checks every byte. */
static void check_copy(unsigned char *src_area, unsigned char *dst_area, size_t so, size_t dist,
                       size_t n)
{
    unsigned char *src = src_area + so;
    unsigned char *dst = dst_area + ((so + dist) & 4095) + GUARD;
    memset(dst - GUARD, 0xA5, n + 2 * GUARD);
    ct_memcpy(dst, src, n);
    if (memcmp(dst, src, n) != 0)
        fail_msg("copy of %zu bytes at distance %zu, source offset %zu: bytes differ", n, dist,
                 so);
    for (size_t g = 1; g <= GUARD; g++)
        if (dst[-(ptrdiff_t)g] != 0xA5 || dst[n + g - 1] != 0xA5)
            fail_msg("copy of %zu bytes at distance %zu: a guard byte was written", n, dist);
}

static void test_every_distance(void **state)
{
    (void)state;
    unsigned char *src_area = aligned_alloc(4096, AREA), *dst_area = aligned_alloc(4096, AREA);
    assert_non_null(src_area);
    assert_non_null(dst_area);
    for (size_t i = 0; i < AREA; i++)
        src_area[i] = pattern(i);
    const size_t lengths[] = {0,
                              1,
                              CT_COPY_PIECE - 1,
                              CT_COPY_PIECE,
                              CT_COPY_PIECE + 1,
                              2 * CT_COPY_PIECE,
                              2 * CT_COPY_PIECE + 7,
                              32768};
    for (size_t dist = 0; dist < 4096; dist += dist < 2 * CT_COPY_NEAR ? 1 : 61)
        for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++)
            for (size_t so = 0; so < 64; so += 24)
                check_copy(src_area, dst_area, so, dist, lengths[k]);
    free(src_area);
    free(dst_area);
}

/* The predicate on addresses chosen for it, including a distance that
 * wraps (destination below the source). */
static void test_in_pieces(void **state)
{
    (void)state;
    char *base = (char *)(uintptr_t)0x10000000;
    const size_t big = CT_COPY_PIECE + 1;
    assert_false(ct_copy_in_pieces(base + 4096, base, big)); /* distance 0 */
    assert_true(ct_copy_in_pieces(base + 1, base, big));
    assert_true(ct_copy_in_pieces(base + 16, base, 32768));
    assert_true(ct_copy_in_pieces(base + 4096 * 5 + CT_COPY_NEAR - 1, base, big));
    assert_false(ct_copy_in_pieces(base + CT_COPY_NEAR, base, big));
    assert_false(ct_copy_in_pieces(base + 16, base, CT_COPY_PIECE)); /* short: one memcpy */
    assert_false(ct_copy_in_pieces(base, base + 16, big));          /* 4080 past */
    assert_true(ct_copy_in_pieces(base, base + 4096 - 16, big));     /* 16 past, wrapped */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_distance),
        cmocka_unit_test(test_in_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
