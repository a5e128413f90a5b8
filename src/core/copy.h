/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * copy.h - the one byte copy of coltune's data paths: memcpy, except at the
 * distances where the C library's large copy is slow.
 *
 * glibc (2.36, Debian 12) copies a block of 4 KiB or more with `rep movsb`
 * on processors that report fast short rep movsb (FSRM: AMD Zen 3 and later,
 * Intel Ice Lake and later). On AMD EPYC (Zen 3), measured on this project's
 * machine, that copy runs at 2-3 GB/s instead of 40-45 GB/s when the
 * destination lies 1 to 31 bytes past the source modulo 4096 (32 KiB
 * blocks, any source alignment; every other distance is fast; 2 KiB and
 * smaller copies, done with vector loads and stores, are fast at every
 * distance). The distance between a user's buffer and a shared window
 * depends on where the library and the allocator placed them, which changes
 * from run to run: a run whose buffers fell at such a distance from the
 * window ran MPI_Alltoallv at 0.7-0.8x native instead of 1.5-1.9x (P = 16,
 * 32 KiB blocks), for the whole run.
 *
 * A copy at a distance of 1 to CT_COPY_NEAR - 1 bytes (mod 4096) goes in
 * pieces of CT_COPY_PIECE bytes, under every glibc's rep movsb threshold
 * (2 KiB with SSE2, more with AVX): 40 GB/s at that distance, where one
 * memcpy made 2-3. Any other copy is one memcpy.
 */
#ifndef CT_COPY_H
#define CT_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    CT_COPY_PIECE = 2048, /* bytes a piece: glibc copies it without rep movsb */
    CT_COPY_NEAR = 64     /* distances (mod 4096) below it, but not 0, are cut */
};

/* Whether copying n bytes from src to dst goes in pieces (see above). */
static inline int ct_copy_in_pieces(void *dst, const void *src, size_t n)
{
    const size_t dist = (size_t)((uintptr_t)dst - (uintptr_t)src) & 4095;
    return n > CT_COPY_PIECE && dist != 0 && dist < CT_COPY_NEAR;
}

/* memcpy(dst, src, n), never at a slow distance. */
static inline void ct_memcpy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (ct_copy_in_pieces(dst, src, n)) {
        for (; n > CT_COPY_PIECE; n -= CT_COPY_PIECE, d += CT_COPY_PIECE, s += CT_COPY_PIECE)
            memcpy(d, s, CT_COPY_PIECE);
    }
    memcpy(d, s, n);
}

#endif
