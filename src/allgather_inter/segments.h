/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * segments.h - who sends which byte range to whom in the segmented
 * intercommunicator Allgather and Allgatherv ([Kang2019] sections 4 and
 * 4.1). Pure arithmetic without MPI, so tests/unit/test_segments.c can check
 * it against a brute-force byte map.
 *
 * Vocabulary (section 4.1's global byte index). A group's *stream* is the
 * concatenation of its members' blocks in rank order; byte y of block x has
 * index sum_{i<x} k_i + y. The exchange step cuts each group's stream into
 * one contiguous *segment* per member of the other group, in rank order (a
 * partition, described by its boundaries bound(0) = 0 <= ... <= bound(n) =
 * K). A sender sends the intersection of its block with every segment it
 * overlaps to that segment's receiver; a receiver gets exactly its segment.
 * An intra-group allgatherv with counts bound(k+1) - bound(k) and
 * displacements bound(k) then leaves the whole stream, in rank order, at
 * every member of the receiving group.
 *
 * Both groups compute the same partitions from values both know (group
 * sizes, block sizes or totals), so the schedules mirror each other without
 * communication.
 */
#ifndef CT_SEGMENTS_H
#define CT_SEGMENTS_H

#include <stddef.h>

/*
 * Segment boundaries are rounded to multiples of an alignment quantum
 * (the prose of section 4.1 asks for segments of "roughly" K/n bytes):
 * with CT_SEG_ALIGN = 64 (a cache line) segments differ by at most 64 bytes
 * instead of 1, and every piece lands on a cache-line boundary of the
 * stream. Byte-granular cuts made Open MPI 4.1's shared-memory intra-group
 * allgatherv about 30% slower (10:3 groups, 1 MiB per rank). align = 1
 * gives the paper's exact byte-granular boundaries.
 */
#define CT_SEG_ALIGN 64

typedef enum ct_seg_kind {
    CT_SEG_EVEN,     /* section 4.1: K bytes cut into n nearly equal segments */
    CT_SEG_SUBGROUP, /* Alg. 1, the larger group's stream: whole blocks, receiver j
                        takes the blocks of subgroup s_j */
    CT_SEG_SPLIT     /* Alg. 1, the smaller group's stream: block j is cut evenly
                        among the receivers of subgroup s_j */
} ct_seg_kind;

/* A partition of a stream among n receivers. */
typedef struct ct_seg_part {
    ct_seg_kind kind;
    int n;        /* receivers: the size of the receiving group, >= 1 */
    int nb;       /* blocks: the size of the sending group (SUBGROUP, SPLIT) */
    size_t block; /* bytes per block (SUBGROUP, SPLIT) */
    size_t K;     /* bytes of the whole stream */
    size_t align; /* boundaries are multiples of align (or the stream's end) */
} ct_seg_part;

/* Section 4.1: with u = ceil(K/align) units of align bytes, segment i starts
 * at align * (i*floor(u/n) + min(i, u mod n)) (capped at K), so the first
 * u mod n segments hold one unit more (the paper's s_{A,i}, for align 1). */
ct_seg_part ct_seg_even(size_t K, int n, size_t align);

/*
 * Algorithm 1: a stream of nb blocks of block bytes each sent to n
 * receivers. When nb >= n the sending group is the larger one: subgroup s_j
 * of the senders (ceil(nb/n) ranks for j < nb mod n, floor(nb/n) after,
 * section 4) sends its whole blocks to receiver j. When nb < n the roles
 * swap: the receivers form nb subgroups and block j is cut evenly (in units
 * of align bytes) among the receivers of s_j. nb == n gives block j to
 * receiver j either way.
 */
ct_seg_part ct_seg_alg1(int nb, size_t block, int n, size_t align);

/* Boundary i (0 <= i <= n) of a partition: segment i is [bound(i), bound(i+1)). */
size_t ct_seg_bound(const ct_seg_part *pt, int i);

/* The receiver whose segment holds byte g (0 <= g < K). */
int ct_seg_owner(const ct_seg_part *pt, size_t g);

/* Where the sending group's blocks lie in its stream. */
typedef struct ct_seg_blocks {
    int n;                /* blocks (senders) */
    size_t size;          /* the size of every block when prefix is NULL */
    const size_t *prefix; /* [n+1]: block j is [prefix[j], prefix[j+1]) */
} ct_seg_blocks;

size_t ct_seg_block_start(const ct_seg_blocks *b, int j);

/* One point-to-point message of the exchange. */
typedef struct ct_seg_xfer {
    int peer;      /* the receiver (in a send list) or the sender (receive list) */
    size_t offset; /* index of its first byte in the sending group's stream */
    size_t bytes;  /* > 0: empty intersections are never sent */
} ct_seg_xfer;

/*
 * The sends of the block [lo, hi) of a stream partitioned by pt, in
 * ascending receiver order (section 4.1: a multi-target sender serves its
 * receivers by rank). Writes them to out unless it is NULL; returns the count.
 */
int ct_seg_sends(const ct_seg_part *pt, size_t lo, size_t hi, ct_seg_xfer *out);

/*
 * The receives of receiver me under partition pt from the senders whose
 * blocks are described by senders, in the order of section 4.1: the
 * higher-rank multi-target sender first (its block runs on past this
 * segment), then the senders whose blocks lie inside the segment by rank,
 * then the lower-rank multi-target sender (its block began before the
 * segment). Writes them to out unless it is NULL; returns the count.
 */
int ct_seg_recvs(const ct_seg_part *pt, int me, const ct_seg_blocks *senders, ct_seg_xfer *out);

#endif
