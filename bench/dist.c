/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dist.c - block sizes of the benchmark's exchanges.
 *
 * Every block's size is a pure function of (seed, distribution, S, P, from,
 * to): a counter-based generator (splitmix64 finaliser over the key) instead
 * of a stateful one, so every rank computes any entry of the P x P count
 * matrix in O(1) without communication, and rank j's receive count from i is
 * by construction i's send count to j. The distributions follow [Fan2024]:
 *   uniform   Section V-A: sizes uniform in [0, S], mean S/2
 *   normal    Section VI-C, Fig. 16(a): mean 1000, stddev 240 with blocks of
 *             at most 1024 bytes; scaled to S and redrawn until inside [0, S]
 *   powerlaw  Section VI-C, Fig. 16(b), exponent 0.95: the k-th largest of a
 *             rank's blocks holds S * 0.95^k bytes; here k is drawn uniformly
 *             from [0, P) for every block, so the sizes decay geometrically
 *             and large blocks are rare
 *   fft-n1    Section VI-A, N1: ranks below ceil(0.625 P) fill their first
 *             ceil(0.78125 P) blocks (8 FP64 = 64 bytes in the paper: S here)
 *   fft-n2    Section VI-A, N2: every rank sends 64 FP64 per block, the last
 *             rank 16 FP64 (S and S/4 here)
 *   equal     every block S bytes: what IMB and OSU send (Alltoallv with the
 *             counts of an Alltoall)
 */
#include "bench.h"

#include <math.h>

/* splitmix64's finaliser: a bijective mix of 64 bits. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t bench_mix(uint64_t x) { return mix(x); }

/* The draw-th uniform number in [0, 1) of block from -> to. */
static double uniform01(unsigned long seed, bench_dist d, long S, int from, int to,
                        unsigned draw)
{
    uint64_t h = mix((uint64_t)seed);
    h = mix(h ^ (uint64_t)d);
    h = mix(h ^ (uint64_t)S);
    h = mix(h ^ (uint64_t)(uint32_t)from);
    h = mix(h ^ ((uint64_t)(uint32_t)to << 32));
    h = mix(h ^ draw);
    return (double)(h >> 11) * 0x1.0p-53;
}

static long uniform_block(unsigned long seed, long S, int from, int to)
{
    long v = (long)(uniform01(seed, BENCH_DIST_UNIFORM, S, from, to, 0) * (double)(S + 1));
    return v > S ? S : v;
}

/* Box-Muller draws, redrawn while outside [0, S]. */
static long normal_block(unsigned long seed, long S, int from, int to)
{
    const double mean = (double)S * 1000.0 / 1024.0, sd = (double)S * 240.0 / 1024.0;
    const double two_pi = 6.283185307179586;
    for (unsigned t = 0; t < 200; t += 2) {
        double u1 = 1.0 - uniform01(seed, BENCH_DIST_NORMAL, S, from, to, t); /* (0, 1] */
        double u2 = uniform01(seed, BENCH_DIST_NORMAL, S, from, to, t + 1);
        double v = mean + sd * sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
        if (v >= 0.0 && v <= (double)S)
            return (long)v;
    }
    return (long)mean; /* never reached in practice: each draw is accepted with p > 0.5 */
}

static long powerlaw_block(unsigned long seed, long S, int P, int from, int to)
{
    int k = (int)(uniform01(seed, BENCH_DIST_POWERLAW, S, from, to, 0) * (double)P);
    return (long)((double)S * pow(0.95, (double)k));
}

/* ceil(P * num / den) for the fractions of Section VI-A. */
static long ceil_frac(int P, long num, long den) { return ((long)P * num + den - 1) / den; }

long bench_block_bytes(bench_dist d, unsigned long seed, long S, int P, int from, int to)
{
    switch (d) {
    case BENCH_DIST_UNIFORM:
        return uniform_block(seed, S, from, to);
    case BENCH_DIST_NORMAL:
        return normal_block(seed, S, from, to);
    case BENCH_DIST_POWERLAW:
        return powerlaw_block(seed, S, P, from, to);
    case BENCH_DIST_FFT_N1: /* 0.625 = 5/8, 0.78125 = 25/32 */
        return (from < ceil_frac(P, 5, 8) && to < ceil_frac(P, 25, 32)) ? S : 0;
    case BENCH_DIST_FFT_N2:
        return from < P - 1 ? S : S / 4;
    case BENCH_DIST_EQUAL:
        return S;
    case BENCH_DIST_COUNT:
        break;
    }
    return 0;
}
