/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuna_index.h - the index arithmetic of TuNA ([Fan2024] section III), with
 * no MPI dependency so that the unit tests can check it exhaustively.
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

/* w: the number of base-r digits of the slots 0..P-1, i.e. the smallest w
 * with r^w >= P (0 when P <= 1). Requires r >= 2. */
int ct_tuna_digits(int P, int r);

/* r^x (the caller keeps it below about 2^62). */
long long ct_tuna_pow(int r, int x);

/* Digit x of i in base r. */
int ct_tuna_digit(int i, int r, int x);

/* Round (x, z) moves at least one slot: z * r^x < P (its smallest slot). */
int ct_tuna_round_nonempty(int P, int r, int x, int z);

/* K: the number of non-empty rounds, #{(x, z) : 1 <= z < r, z * r^x < P}. */
int ct_tuna_rounds(int P, int r);

/* The slots of round (x, z) in ascending order: every i in [1, P) whose x-th
 * digit is z. Writes them to out (when not NULL) and returns their number. */
int ct_tuna_round_slots(int P, int r, int x, int z, int *out);

/* The largest number of slots of any round. */
int ct_tuna_max_round_slots(int P, int r);

/* Has slot i reached its destination after round x? True when x is its
 * highest non-zero digit, i.e. i < r^(x+1) (for a slot of round x). The
 * listing's "i % r^x == 0" (Algorithm 1 line 16) is a slip. */
int ct_tuna_final_after(int i, int r, int x);

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
