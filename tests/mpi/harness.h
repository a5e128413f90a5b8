/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.h - shared pieces of coltune's MPI tests (cmocka programs run by
 * the test scripts under mpirun at many P).
 *
 * Every check is decided collectively: a rank compares its own result, prints
 * the first differing byte to stderr, and all ranks then agree on the outcome
 * with one allreduce before cmocka asserts it, so a failure on one rank never
 * leaves the others waiting in the next collective.
 */
#ifndef CT_TEST_HARNESS_H
#define CT_TEST_HARNESS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Initialises MPI, silences cmocka's output on ranks other than 0, and
 * agrees on the base seed (TEST_SEED, else time) which rank 0 prints. */
void th_init(int *argc, char ***argv);
int th_rank(void);
int th_size(void);
uint64_t th_seed(void);
/* MPI_COMM_WORLD's nodes as coltune sees them (coltune_comm_topology: the
 * hosts, or COLTUNE_PPN's emulation), and the node of each rank. */
void th_topology(int *Q, int *N);
int th_node_of(int r);

/* Small deterministic generator (splitmix64): same seed, same numbers. */
typedef struct th_rng {
    uint64_t s;
} th_rng;
th_rng th_rng_make(uint64_t seed, uint64_t stream);
uint64_t th_next(th_rng *r);
/* Uniform in [0, n). */
long th_below(th_rng *r, long n);

/* Displacements for n blocks of counts[] elements: back to back in block
 * order, or (shuffled) in a random order with gaps of 0-2 elements. Returns
 * the elements spanned. */
long th_layout(th_rng *r, int n, const int *counts, int *displs, int shuffled);
/* Bytes a buffer of `elements` elements of type t spans, with 16 to spare. */
size_t th_span_bytes(long elements, MPI_Datatype t);

/* 1 when ok holds on every rank of comm. */
int th_all(int ok, MPI_Comm comm);

/* Compares n bytes; on the first difference prints a line to stderr that
 * starts with what (algorithm, parameters, P, seed...) and returns 0. */
int th_same_bytes(const void *got, const void *want, size_t n, const char *what);

/* Skips the current cmocka test for a reason of the configuration (the MPI
 * library, the build), not of P: rank 0 prints "SKIP-PART: <test>: <why>",
 * which scripts/check-all.sh counts and lists. (A test that runs at some P
 * only calls cmocka's skip() at the others.) */
void th_skip_note(const char *test, const char *why);
#define th_skip(why)                 \
    do {                             \
        th_skip_note(__func__, why); \
        skip();                      \
    } while (0)

/* Runs the cmocka tests given on the command line filter (NULL = all). */
struct CMUnitTest;
int th_run(const char *group, struct CMUnitTest *tests, size_t n);

/* Every registered algorithm spec of a collective with every parameter
 * value it accepts on a communicator of P ranks on N nodes of at most Q:
 * single parameters over their whole range (a size threshold, whose range is
 * too wide, at the values where it changes what runs), two parameters in
 * every combination, three in every pair of values (all-pairs).
 * TEST_ALGS (comma-separated names) keeps only those algorithms.
 * Returns the count; free with th_specs_free. */
int th_algorithm_specs(const char *collective, int P, int Q, int N, char ***specs);
/* The same for MPI_COMM_WORLD as coltune sees it (size, nodes, ranks per
 * node, COLTUNE_PPN's emulation included). */
int th_world_specs(const char *collective, char ***specs);
void th_specs_free(char **specs, int n);

#endif
