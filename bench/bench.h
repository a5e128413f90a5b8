/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - what the parts of coltune-bench share.
 *
 * coltune-bench measures one collective under a list of algorithm specs in
 * the same run. The parts:
 *   coltune-bench.c     main: the timing loop, statistics, table and CSV
 *   options.c           the command line (parsed before MPI_Init)
 *   specs.c             --algs: sweep shorthands expanded into resolved specs
 *   dist.c              block-size distributions ([Fan2024] VI-A, VI-C), fill pattern
 *   drivers.c           the table of collectives (from src/coll_list.h)
 *   driver_<coll>.c     one driver per collective: setup, run, check, teardown
 *   common_inter.c      the intercommunicator, settings of [Kang2019] (allgather(v)_inter)
 *   common_sdde.c       the SDDE send patterns and reference (alltoall(v)_crs)
 *
 * Adding a collective is one driver_<coll>.c: drivers.c takes the
 * collectives from src/coll_list.h.
 */
#ifndef BENCH_H
#define BENCH_H

#include <coltune.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define BENCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BENCH_PRINTF(f, a)
#endif

/* Exit codes. */
enum {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_MISMATCH = 1, /* --check found a result that differs from PMPI_ */
    BENCH_EXIT_USAGE = 2,    /* bad option or value, collective not available */
    BENCH_EXIT_RUNTIME = 3   /* an MPI call failed, out of memory */
};

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

typedef enum bench_dist {
    BENCH_DIST_UNIFORM = 0,
    BENCH_DIST_NORMAL,
    BENCH_DIST_POWERLAW,
    BENCH_DIST_FFT_N1,
    BENCH_DIST_FFT_N2,
    BENCH_DIST_EQUAL, /* every block S bytes, as IMB and OSU send */
    BENCH_DIST_COUNT
} bench_dist;

typedef enum bench_pattern {
    BENCH_PATTERN_NONE = 0,
    BENCH_PATTERN_STENCIL2D,
    BENCH_PATTERN_STENCIL3D,
    BENCH_PATTERN_RANDOM
} bench_pattern;

#define BENCH_MAX_SIZES 64

/* The one options struct: filled from argv before MPI_Init, read-only after. */
typedef struct bench_options {
    const char *coll;     /* --coll */
    const char *algs;     /* --algs, expanded by specs.c once P is known */
    long sizes[BENCH_MAX_SIZES];
    int nsizes;
    bench_dist dist;
    int iters, warmup;
    int burst;            /* --burst: calls per turn, the last timed (--timing b2b: all) */
    int burst_given;
    int b2b;              /* --timing b2b: a turn's calls back to back, timed together */
    unsigned long seed;
    const char *ppn;      /* --ppn "n" or "n:cyclic", NULL when not given */
    int group_p, group_q; /* --group-sizes p:q, 0 when not given */
    bench_pattern pattern;
    int pattern_k;        /* k of random:k */
    int pattern_off;      /* f of random:k:f, the percentage of destinations off the
                             node; -1 for random:k (drawn among all ranks) */
    int setting;          /* --setting 1..8 ([Kang2019] section 5), 0 when not given */
    int check;
    int aa;               /* --aa: the baseline timed twice */
    const char *csv;
    const char *samples;  /* --samples: every timed iteration */
    int progress;         /* 0 with --no-progress */
    int help, list;
    int sweep;            /* --sweep: one line per size, pmpi against one spec */
    int overlap;          /* --overlap: nonblocking calls also timed around a computation
                             as long as their own time */
    int persistent;       /* --persistent: the nonblocking all-to-alls as persistent
                             requests, made once per spec and size, started per call */
    /* Options given explicitly: the --sweep preset fills in the others, and
     * iterations shrink above 64 KiB unless --iters was given. */
    int algs_given, dist_given, sizes_given, iters_given;
} bench_options;

/* Parses argv into o. Returns 0, or -1 with a message naming the bad option
 * and value in err. Needs no MPI. */
int bench_options_parse(int argc, char **argv, bench_options *o, char *err, size_t errlen);
void bench_options_usage(const char *prog);
const char *bench_dist_name(bench_dist d);
/* What the input of collective coll is drawn from, for the table's "input"
 * column: the distribution (alltoallv), "setting5" (intercommunicator
 * collectives: --setting, default 1 for allgather_inter, 5 for
 * allgatherv_inter) or "random:3" (SDDE: --pattern, default random:3). */
void bench_input_name(const bench_options *o, char *buf, size_t len);
/* --setting, or the default of collective coll. */
int bench_setting(const bench_options *o);
/* --pattern, or the default random:3 (sets *k; random:k:f's f is
 * o->pattern_off). */
bench_pattern bench_pattern_of(const bench_options *o, int *k);

/* Parses a size list "16,256,4k,64k" or "16..64k" (doubling). 0 on success. */
int bench_parse_sizes(const char *text, long *sizes, int max, int *n, char *err,
                      size_t errlen);

/* ------------------------------------------------------------------ */
/* The communicator                                                    */
/* ------------------------------------------------------------------ */

/* What every driver and the spec expansion see. Q and N are coltune's view:
 * from COLTUNE_PPN (--ppn) when set, else the shared-memory nodes. */
typedef struct bench_env {
    MPI_Comm comm; /* duplicate of MPI_COMM_WORLD, errors return */
    int rank, P, Q, N;
    int *node_of; /* [P] each rank's node, numbered by lowest rank, as coltune's */
} bench_env;

/* ------------------------------------------------------------------ */
/* Algorithm specs                                                     */
/* ------------------------------------------------------------------ */

#define BENCH_SPEC_LEN 160

/* One algorithm with every parameter resolved to a number. */
typedef struct bench_alg {
    int index;                  /* in coltune's registry */
    const char *name;           /* registry name */
    char params[BENCH_SPEC_LEN]; /* "key=value,key=value", "" without parameters */
    char spec[BENCH_SPEC_LEN];   /* "name:params" (or "name"), as passed to coltune */
    char label[BENCH_SPEC_LEN];  /* what the table and CSV call it: the spec, or for the
                                  * baseline's second copy (--aa) "<baseline>#2" */
    int aa;                      /* this is that second copy */
} bench_alg;

typedef struct bench_alglist {
    bench_alg *v;
    int n, cap;
} bench_alglist;

/*
 * Expands --algs for collective coll on env into resolved specs, baseline
 * (pmpi, or the collective's own when coltune has no pmpi for it) first.
 * With aa, a second copy of the baseline (labelled "<baseline>#2") goes in
 * the middle of the list: the A/A pair, whose ratio is the noise of the
 * measurement itself. Values outside an algorithm's range are dropped with a
 * note (printed by rank 0). Returns 0, or -1 with a usage message in err.
 */
int bench_algs_expand(const char *text, const char *coll, const char *baseline, int aa,
                      const bench_env *env, bench_alglist *out, char *err, size_t errlen);
void bench_alglist_free(bench_alglist *l);
/* Prints the registered algorithms of coll with their ranges at env. */
void bench_algs_list(const char *coll, const bench_env *env);
/* Number of registered algorithms of collective coll. */
int bench_algs_registered(const char *coll);

/* ------------------------------------------------------------------ */
/* Distributions (dist.c)                                              */
/* ------------------------------------------------------------------ */

/* Bytes rank `from` sends to rank `to` in a P-rank exchange with size S under
 * distribution d: a pure function of its arguments, so every rank computes
 * the same count matrix. */
long bench_block_bytes(bench_dist d, unsigned long seed, long S, int P, int from, int to);

/* splitmix64's finaliser: a bijective mix of 64 bits (counter-based draws). */
uint64_t bench_mix(uint64_t x);

/* The byte at offset off of the block from -> to (send buffer fill pattern). */
static inline unsigned char bench_fill_byte(unsigned long seed, int from, int to, size_t off)
{
    return (unsigned char)((unsigned long)from * 131u + (unsigned long)to * 29u + off * 7u +
                           (off >> 8) * 3u + seed);
}

/* ------------------------------------------------------------------ */
/* Drivers                                                             */
/* ------------------------------------------------------------------ */

/* The first byte where a result differs from the PMPI_ reference. */
typedef struct bench_mismatch {
    int found;
    char what[160];     /* set when the difference is not a byte of the receive buffer
                         * (message count, source, size): said instead of the byte */
    int peer;           /* rank whose block holds the byte (-1: beyond the blocks) */
    size_t offset;      /* byte offset in the receive buffer */
    size_t block_offset; /* byte offset in that block */
    unsigned expected, got;
} bench_mismatch;

/* Options a driver reads besides sizes, iterations and algorithms. */
#define BENCH_USES_DIST 0x1u
#define BENCH_USES_GROUPS 0x2u
#define BENCH_USES_PATTERN 0x4u
#define BENCH_USES_SETTING 0x8u
#define BENCH_USES_PERSISTENT 0x10u /* has a persistent form (--persistent) */

/*
 * One collective. Every function is collective over env->comm.
 *   validate (optional) checks the options against env before the first
 *            size; returns 0, or -1 with a usage message in err (exit 2).
 *            Called on every rank; each rank decides alike.
 *   setup    builds buffers for size S; returns an MPI code. A size that cannot
 *            be served (too large for int counts) returns BENCH_SETUP_UNUSABLE
 *            with a message in err.
 *   run      one call of the collective under spec; returns its MPI code.
 *   check    one call under spec, compared byte for byte with the PMPI_
 *            result on the same input; returns the call's MPI code.
 *   teardown frees what setup allocated; called whatever setup returned
 *            (state may be NULL).
 *   internode_msgs (optional, not collective) this rank's inter-node messages
 *            in the last call (coltune_sdde_internode_msgs); the table shows
 *            the maximum over ranks and iterations, "-" without this function.
 * baseline names the algorithm speedups are relative to (NULL: "pmpi"); it is
 * put first in every list. A driver whose setup is NULL is listed but not
 * available in this build.
 */
#define BENCH_SETUP_UNUSABLE (-1)

typedef struct bench_driver {
    const char *name; /* as in --coll and in coltune's registry */
    unsigned uses;
    const char *baseline;
    int (*validate)(const bench_options *o, const bench_env *env, char *err, size_t errlen);
    int (*setup)(const bench_options *o, const bench_env *env, long S, void **state,
                 char *err, size_t errlen);
    int (*run)(void *state, const char *spec);
    /* The nonblocking collectives: starts the call (run is start, then
     * MPI_Wait); NULL for the blocking ones. */
    int (*start)(void *state, const char *spec, MPI_Request *req);
    int (*check)(void *state, const char *spec, bench_mismatch *m);
    void (*teardown)(void *state);
    int (*internode_msgs)(void *state, long *count);
} bench_driver;

/* The driver named name, or NULL when no collective has that name. */
const bench_driver *bench_driver_find(const char *name);
/* Writes the collective names, ", "-separated. */
void bench_driver_names(char *buf, size_t len);

/* One per collective of src/coll_list.h: bench_driver_<name>, driver_<name>.c. */
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) \
    extern const bench_driver bench_driver_##name;
#include "coll_list.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* The persistent requests of one size's state, one per spec, each made by
 * the driver's init at its spec's first start (every rank runs the specs in
 * the same order: the inits are collective alike) and freed at teardown. */
typedef struct bench_preqs {
    int n, cap;
    char (*spec)[BENCH_SPEC_LEN];
    MPI_Request *req;
} bench_preqs;
typedef int (*bench_init_fn)(void *state, const char *spec, MPI_Request *req);
/* Starts spec's request (made first with init; spec NULL, "rules", is one
 * too); *req is its handle. */
int bench_preq_start(bench_preqs *p, bench_init_fn init, void *state, const char *spec,
                     MPI_Request *req);
void bench_preqs_free(bench_preqs *p);

/* A nonblocking driver's run: start(state, spec, &req), then MPI_Wait. */
int bench_start_wait(int (*start)(void *, const char *, MPI_Request *), void *state,
                     const char *spec);

/* Reports a failed MPI call (rank, call, MPI's error string) on stderr. */
void bench_mpi_error(int rc, const char *what, const char *file, int line);

/* Checks an MPI call: on failure reports it and jumps to "out" with rc set. */
#define BENCH_CALL(expr)                                                        \
    do {                                                                        \
        rc = (expr);                                                            \
        if (rc != MPI_SUCCESS) {                                                \
            bench_mpi_error(rc, #expr, __FILE__, __LINE__);                     \
            goto out;                                                           \
        }                                                                       \
    } while (0)

/* Allocates nbytes (at least 1); on failure sets rc = MPI_ERR_NO_MEM and
 * jumps to "out". */
#define BENCH_ALLOC(ptr, nbytes)                                                \
    do {                                                                        \
        size_t bench_n_ = (nbytes);                                             \
        (ptr) = malloc(bench_n_ ? bench_n_ : 1);                                \
        if ((ptr) == NULL) {                                                    \
            rc = MPI_ERR_NO_MEM;                                                \
            bench_mpi_error(rc, "malloc(" #nbytes ")", __FILE__, __LINE__);     \
            goto out;                                                           \
        }                                                                       \
    } while (0)

/* Prints "coltune-bench: note: ..." on stderr when rank is 0. */
void bench_note(int rank, const char *fmt, ...) BENCH_PRINTF(2, 3);

/* Formats a byte size as given on the command line: 4k, 1m, 100. */
void bench_format_size(long bytes, char *buf, size_t len);

/* A size "123", "4k", "2m", "1g" (powers of 1024) in text[0..len), at most
 * max. Returns 0, or -1 for anything else. */
int bench_parse_size(const char *text, size_t len, long max, long *out);

#endif
