/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * segments.c - segment arithmetic of the segmented intercommunicator
 * Allgather and Allgatherv (see segments.h). No MPI here.
 */
#include "allgather_inter/segments.h"

/* Start of part i when K units are cut into n nearly equal parts, the first
 * K mod n of them one unit larger ([Kang2019] section 4: subgroup sizes;
 * section 4.1: segment boundaries). */
static size_t even_start(size_t K, size_t n, size_t i)
{
    size_t r = K % n;
    return i * (K / n) + (i < r ? i : r);
}

/* Start of part i when K bytes are cut into n parts in units of align bytes
 * (the last unit may be short). */
static size_t aligned_start(size_t K, size_t n, size_t i, size_t align)
{
    size_t b = align * even_start((K + align - 1) / align, n, i);
    return b < K ? b : K;
}

ct_seg_part ct_seg_even(size_t K, int n, size_t align)
{
    ct_seg_part pt = {.kind = CT_SEG_EVEN, .n = n, .K = K, .align = align ? align : 1};
    return pt;
}

ct_seg_part ct_seg_alg1(int nb, size_t block, int n, size_t align)
{
    ct_seg_part pt = {.kind = nb >= n ? CT_SEG_SUBGROUP : CT_SEG_SPLIT,
                      .n = n,
                      .nb = nb,
                      .block = block,
                      .K = (size_t)nb * block,
                      .align = align ? align : 1};
    return pt;
}

/*
 * CT_SEG_SPLIT: the n receivers form nb subgroups (section 4: the first
 * n mod nb hold ceil(n/nb) receivers), and receiver i, the t-th member of
 * subgroup j, takes the t-th of |s_j| nearly equal pieces of block j
 * (in units of align bytes).
 */
static size_t split_bound(const ct_seg_part *pt, int i)
{
    size_t n = (size_t)pt->n, nb = (size_t)pt->nb, c = n / nb, r = n % nb;
    size_t big = r * (c + 1), j, t, size;
    if ((size_t)i == n)
        return pt->K;
    if ((size_t)i < big) {
        j = (size_t)i / (c + 1);
        t = (size_t)i % (c + 1);
        size = c + 1;
    } else {
        j = r + ((size_t)i - big) / c;
        t = ((size_t)i - big) % c;
        size = c;
    }
    return j * pt->block + aligned_start(pt->block, size, t, pt->align);
}

size_t ct_seg_bound(const ct_seg_part *pt, int i)
{
    switch (pt->kind) {
    case CT_SEG_EVEN:
        return aligned_start(pt->K, (size_t)pt->n, (size_t)i, pt->align);
    case CT_SEG_SUBGROUP:
        /* Receiver i takes the blocks of subgroup s_i, whose first rank is
         * i*floor(nb/n) + min(i, nb mod n) (section 4). */
        return even_start((size_t)pt->nb, (size_t)pt->n, (size_t)i) * pt->block;
    case CT_SEG_SPLIT:
        return split_bound(pt, i);
    }
    return 0;
}

/* The last i in [0, n) with bound(i) <= g: its segment is non-empty and
 * holds g, since bound(i+1) > g (bound(n) = K > g). */
int ct_seg_owner(const ct_seg_part *pt, size_t g)
{
    int lo = 0, hi = pt->n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (ct_seg_bound(pt, mid) <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

size_t ct_seg_block_start(const ct_seg_blocks *b, int j)
{
    return b->prefix ? b->prefix[j] : (size_t)j * b->size;
}

/* The last block j with start(j) <= g: it is non-empty and holds g. */
static int block_owner(const ct_seg_blocks *b, size_t g)
{
    int lo = 0, hi = b->n - 1;
    if (b->prefix == NULL)
        return (int)(g / b->size);
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (b->prefix[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }
static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

int ct_seg_sends(const ct_seg_part *pt, size_t lo, size_t hi, ct_seg_xfer *out)
{
    int n = 0;
    if (lo >= hi)
        return 0;
    int first = ct_seg_owner(pt, lo), last = ct_seg_owner(pt, hi - 1);
    for (int k = first; k <= last; k++) {
        size_t a = max_sz(lo, ct_seg_bound(pt, k)), e = min_sz(hi, ct_seg_bound(pt, k + 1));
        if (e <= a)
            continue; /* an empty segment between two others */
        if (out)
            out[n] = (ct_seg_xfer){k, a, e - a};
        n++;
    }
    return n;
}

/* Appends sender j's part of the segment [s, e) to out. */
static int add_recv(const ct_seg_blocks *b, int j, size_t s, size_t e, ct_seg_xfer *out, int n)
{
    size_t a = max_sz(s, ct_seg_block_start(b, j));
    size_t z = min_sz(e, ct_seg_block_start(b, j + 1));
    if (z <= a)
        return n; /* an empty block */
    if (out)
        out[n] = (ct_seg_xfer){j, a, z - a};
    return n + 1;
}

int ct_seg_recvs(const ct_seg_part *pt, int me, const ct_seg_blocks *senders, ct_seg_xfer *out)
{
    size_t s = ct_seg_bound(pt, me), e = ct_seg_bound(pt, me + 1);
    int n = 0;
    if (s >= e)
        return 0;
    int jf = block_owner(senders, s), jl = block_owner(senders, e - 1);
    if (jf == jl)
        return add_recv(senders, jf, s, e, out, 0);
    /* Section 4.1: jf is a multi-target sender when its block began in an
     * earlier segment, jl when its block runs on into a later one. */
    int low_multi = ct_seg_block_start(senders, jf) < s;
    int high_multi = ct_seg_block_start(senders, jl + 1) > e;
    if (high_multi)
        n = add_recv(senders, jl, s, e, out, n);
    for (int j = jf + low_multi; j <= jl - high_multi; j++)
        n = add_recv(senders, j, s, e, out, n);
    if (low_multi)
        n = add_recv(senders, jf, s, e, out, n);
    return n;
}
