/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuna_index.h - the index arithmetic and schedule of TuNA ([Fan2024] section
 * III) that the engine (alltoallv_tuna.c) calls, with no MPI dependency so
 * that the unit tests can check it exhaustively.
 *
 * Rotated ("Bruck") indexing: rank p keeps the block for destination d in
 * slot o = (d - p) mod P. Slot o is written in base r with w = ceil(log_r P)
 * digits. Round (x, z), 0 <= x < w, 1 <= z < r, moves every slot whose x-th
 * digit equals z (section III-A; Algorithm 1 line 9 says "is 1": a slip) by
 * z * r^x ranks forward; a round is empty, and skipped, when z * r^x >= P.
 * After the round of its highest non-zero digit a slot has reached its
 * destination; before that it waits in the temporary buffer T (III-B).
 *
 * All arithmetic is on integers (no log()); products that may exceed int are
 * computed in long long.
 */
#ifndef CT_TUNA_INDEX_H
#define CT_TUNA_INDEX_H

/* r^x (the caller keeps it below about 2^62). */
long long ct_tuna_pow(int r, int x);

/*
 * The schedule, as ct_tuna_exchange (alltoallv_tuna.c) walks it: the digit
 * positions x = 0, 1, ... of weight pw = r^x while pw < P, low to high; the
 * rounds z = 1 .. ct_tuna_digit_rounds(P, r, pw) of each; in round (x, z)
 * the slots ct_tuna_round_slots(P, r, x, z), each read from the send buffer
 * or from T (ct_tuna_in_send_buffer) and, at the receiver, either final
 * (ct_tuna_arrives) or stored in T at ct_tuna_tindex. tests/unit/test_tuna.c
 * checks these against brute force and replays the schedule with them.
 */

/* The non-empty rounds of the digit of weight pw: z = 1 .. the result, i.e.
 * every z < r with z * pw < P (none when pw >= P). */
static inline int ct_tuna_digit_rounds(int P, int r, long long pw)
{
    int n = 0;
    while (n + 1 < r && (n + 1) * pw < P)
        n++;
    return n;
}

/* K: the number of non-empty rounds over all digits (III-A: K <= w (r - 1)). */
int ct_tuna_rounds(int P, int r);

/* The slots of round (x, z) in ascending order: every i in [1, P) whose x-th
 * digit is z. Writes them to out (when not NULL) and returns their number. */
int ct_tuna_round_slots(int P, int r, int x, int z, int *out);

/* Is slot o, sent in a round of the digit of weight pw, still in the send
 * buffer (no lower digit has moved it: o mod pw == 0), or in T? */
static inline int ct_tuna_in_send_buffer(int o, long long pw) { return o % pw == 0; }

/* Does slot o, moved in a round of the digit of weight pw, reach its
 * destination in that round? True when that digit is its highest non-zero
 * one, i.e. o < r * pw. The listing's "i % r^x == 0" (Algorithm 1 line 16)
 * is a slip. */
static inline int ct_tuna_arrives(int o, long long pw, int r) { return o < pw * r; }

/* The member d places after member me in a group of P, -P < d < P:
 * (me + d) mod P. Round (x, z) sends to d = z r^x and receives from -z r^x;
 * slot o of me holds the block for d = o, and the slot o block that arrives
 * at me came from d = -o (the rotated index of III-A). */
static inline int ct_tuna_peer(int P, int me, long long d) { return (int)((me + d + P) % P); }

/* A direct slot has exactly one non-zero digit (z * r^x): it travels once,
 * from the send buffer straight to its destination, and never enters T. */
int ct_tuna_is_direct(int i, int r);

/* B = P - (K + 1): the number of slots T must hold (section III-C), one per
 * non-direct slot; 0 when P <= 1. Zero exactly when r >= P - 1. */
int ct_tuna_tsize(int P, int r);

/* The o -> t map of section III-C for a non-direct slot o >= 1:
 * t = o - 1 - dx * (r - 1) - dz, where dx = floor(log_r o) (the paper's
 * "ceil" is a slip) is o's highest digit position and dz that digit, i.e. o
 * minus the self slot minus the direct slots below o. Returns -1 for o = 0
 * and for direct slots. */
int ct_tuna_tindex(int o, int r);

#endif
