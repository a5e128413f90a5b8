/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll_list.h - the one list of coltune's collectives and algorithms.
 *
 * Everything else is derived from it (MPICH's coll_algorithms.txt is the
 * model): the ct_coll enum and the collective names, the COLTUNE_* variables,
 * the fallbacks and the calls coltune-info looks for (algorithms.[ch],
 * select/config.c, info/), the registry and the algorithms' prototypes
 * (algorithms.[ch]), coltune-bench's table of drivers (bench/). What is not C
 * (the README and man tables, the tuner, Makefile.am) is checked against it
 * by tests/unit/onelist.sh. Adding an algorithm is its file and one entry
 * here (docs/development.md).
 *
 * An X-macro list: no include guard. A file that includes it defines the
 * macros it needs first; the others expand to nothing, and all are
 * undefined at the end.
 *
 * CT_COLLECTIVE(ID, name, call, fallback, msg_size_known)
 *   ID       CT_COLL_<ID>; COLTUNE_<ID> is the variable that forces an algorithm
 *   name     as written in rules files, logs and statistics
 *   call     the MPI call intercepted for it, without MPI_ ("" for coltune's own
 *            MPIX_ calls); its large-count and Fortran forms are served too
 *   fallback the algorithm that serves a call no rule serves: pmpi (the MPI
 *            library's routine) where the MPI library has one
 *   msg_size_known  1 when every rank knows a call's msg_size from its own
 *            arguments (algorithms.h, ct_coll_msg_size_known)
 *
 * The algorithms, each declared once, with the same fields whatever its
 * collectives: its name (in rules files and COLTUNE_* variables; the function
 * is named after it), restrictions (CT_R_*, adapters CT_A_* and the learner's
 * hints CT_L_*, algorithms.h),
 * a one-line summary with its paper reference, then its parameters, if any:
 * {name, min, max, default, help, clamp} with K(constant) and EXPR(P|Q|N|
 * SQRT_P|SQRT_Q|NM1_Q, offset) bounds, clamp CT_CLAMP where a value above
 * the range acts as its maximum (the help says so), else CT_RANGE. Defaults
 * are clamped into their range at resolve time (select/spec.c), so
 * block_count's default of 32 (MPICH's MPIR_CVAR_ALLTOALL_THROTTLE) means
 * min(32, P); a value given explicitly above the range of a CT_CLAMP
 * parameter is clamped too (scattered:block_count=32 is min(32, P), as in
 * MPICH), and any other value out of range is a restriction.
 *
 * CT_ALLTOALLV_ALG(name, restrictions, summary, params...)
 *   ct_alltoallv_<name>(), src/alltoallv/alltoallv_<name>.c: serves
 *   alltoallv and alltoall (uniform blocks are a special case of its input)
 *   under the same name, parameters and restrictions.
 * CT_ALLTOALLV_SPLIT_ALG(name, restrictions, summary, params...)
 *   the same, for an algorithm described as a schedule of rounds
 *   (core/sched.h): ct_alltoallv_<name>_build(), which serves the blocking
 *   calls (built, then run to completion) and the nonblocking ones,
 *   ialltoallv and ialltoall, under the same name and parameters. A file
 *   that defines only CT_ALLTOALLV_ALG sees these among the others.
 * CT_ALLTOALLV_STEP_ALG(name, restrictions, summary, params...)
 *   the same, for an algorithm that moves its bytes otherwise than by
 *   messages (a shared-memory window), or whose messages depend on what
 *   arrives (TuNA's sizes): ct_alltoallv_<name>() serves the
 *   blocking calls and ct_alltoallv_<name>_build() describes the nonblocking
 *   ones as a schedule of one step (core/sched.h); both run the same phases
 *   of the call. A file that defines only CT_ALLTOALLV_SPLIT_ALG sees these
 *   among those.
 * CT_ALLGATHER_INTER_ALG(name, restrictions, summary, summary_v, params...)
 *   ct_allgather_inter_<name>() and ct_allgatherv_inter_<name>(),
 *   src/allgather_inter/: serves allgather_inter (summary) and
 *   allgatherv_inter (summary_v).
 * CT_ALLGATHER_INTER_SPLIT_ALG(name, restrictions, summary, summary_v, params...)
 *   the same, for an algorithm also described as a schedule of rounds
 *   (core/sched.h): ct_allgather_inter_<name>_build() and
 *   ct_allgatherv_inter_<name>_build() serve the nonblocking forms,
 *   iallgather_inter and iallgatherv_inter, under the same name; the
 *   blocking functions run the same schedule to completion. A file that
 *   defines only CT_ALLGATHER_INTER_ALG sees these among the others.
 * CT_SDDE_ALG(name, variable, restrictions, summary, params...)
 *   ct_sdde_<name>(), src/sdde/sdde_<name>.c: serves alltoall_crs, and
 *   alltoallv_crs too when variable is 1 (0: constant message size only).
 * CT_NEIGHBOR_ALG(name, restrictions, summary, params...)
 *   ct_neighbor_<name>(), src/neighbor/neighbor_<name>.c: serves
 *   neighbor_alltoallv and neighbor_alltoall (uniform blocks) on the
 *   communicator's neighbourhood (src/neighbor/nbr_graph.h).
 * CT_NEIGHBOR_SPLIT_ALG(name, restrictions, summary, params...)
 *   the same, for an algorithm described as a schedule of rounds
 *   (core/sched.h): ct_neighbor_<name>_build(), run to completion by the
 *   blocking calls, and started as a request by the nonblocking and
 *   persistent ones (ineighbor_alltoallv, ineighbor_alltoall) under the same
 *   name. A file that defines only CT_NEIGHBOR_ALG sees these among the
 *   others.
 * CT_NEIGHBOR_STEP_ALG(name, restrictions, summary, params...)
 *   the same, for an algorithm whose messages depend on sizes that arrive:
 *   ct_neighbor_<name>() serves the blocking calls and
 *   ct_neighbor_<name>_build() describes the nonblocking and persistent ones
 *   as a schedule of one step (core/sched.h); both run the same stages. A
 *   file that defines only CT_NEIGHBOR_SPLIT_ALG sees these among those.
 */
#ifndef CT_COLLECTIVE
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known)
#endif
#ifndef CT_ALLTOALLV_ALG
#define CT_ALLTOALLV_ALG(name, restrictions, summary, ...)
#endif
#ifndef CT_ALLTOALLV_SPLIT_ALG
#define CT_ALLTOALLV_SPLIT_ALG(name, restrictions, summary, ...) \
    CT_ALLTOALLV_ALG(name, restrictions, summary, __VA_ARGS__)
#endif
#ifndef CT_ALLTOALLV_STEP_ALG
#define CT_ALLTOALLV_STEP_ALG(name, restrictions, summary, ...) \
    CT_ALLTOALLV_SPLIT_ALG(name, restrictions, summary, __VA_ARGS__)
#endif
#ifndef CT_ALLGATHER_INTER_ALG
#define CT_ALLGATHER_INTER_ALG(name, restrictions, summary, summary_v, ...)
#endif
#ifndef CT_ALLGATHER_INTER_SPLIT_ALG
#define CT_ALLGATHER_INTER_SPLIT_ALG(name, restrictions, summary, summary_v, ...) \
    CT_ALLGATHER_INTER_ALG(name, restrictions, summary, summary_v, __VA_ARGS__)
#endif
#ifndef CT_SDDE_ALG
#define CT_SDDE_ALG(name, variable, restrictions, summary, ...)
#endif
#ifndef CT_NEIGHBOR_ALG
#define CT_NEIGHBOR_ALG(name, restrictions, summary, ...)
#endif
#ifndef CT_NEIGHBOR_SPLIT_ALG
#define CT_NEIGHBOR_SPLIT_ALG(name, restrictions, summary, ...) \
    CT_NEIGHBOR_ALG(name, restrictions, summary, __VA_ARGS__)
#endif
#ifndef CT_NEIGHBOR_STEP_ALG
#define CT_NEIGHBOR_STEP_ALG(name, restrictions, summary, ...) \
    CT_NEIGHBOR_SPLIT_ALG(name, restrictions, summary, __VA_ARGS__)
#endif

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

/* MPI_Alltoallv, and MPI_Alltoall (uniform blocks, the Alltoallv algorithms) */
CT_COLLECTIVE(ALLTOALLV, alltoallv, "Alltoallv", pmpi, 0)
CT_COLLECTIVE(ALLTOALL, alltoall, "Alltoall", pmpi, 1)
/* MPI_Ialltoallv and MPI_Ialltoall: the same calls, nonblocking (the
 * algorithms that split, CT_ALLTOALLV_SPLIT_ALG) */
CT_COLLECTIVE(IALLTOALLV, ialltoallv, "Ialltoallv", pmpi, 0)
CT_COLLECTIVE(IALLTOALL, ialltoall, "Ialltoall", pmpi, 1)
/* MPI_Allgather and MPI_Allgatherv on intercommunicators */
CT_COLLECTIVE(ALLGATHER_INTER, allgather_inter, "Allgather", pmpi, 1)
CT_COLLECTIVE(ALLGATHERV_INTER, allgatherv_inter, "Allgatherv", pmpi, 0)
/* MPI_Iallgather and MPI_Iallgatherv on intercommunicators: the same calls,
 * nonblocking (the algorithms that split, CT_ALLGATHER_INTER_SPLIT_ALG) */
CT_COLLECTIVE(IALLGATHER_INTER, iallgather_inter, "Iallgather", pmpi, 1)
CT_COLLECTIVE(IALLGATHERV_INTER, iallgatherv_inter, "Iallgatherv", pmpi, 0)
/* MPIX_Alltoall_crs and MPIX_Alltoallv_crs: sparse dynamic data exchange,
 * the latter with variable sizes */
CT_COLLECTIVE(ALLTOALL_CRS, alltoall_crs, "", personalized, 0)
CT_COLLECTIVE(ALLTOALLV_CRS, alltoallv_crs, "", personalized, 0)
/* MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall on communicators with a
 * topology (distributed graph, graph, Cartesian). A rank's blocks depend on
 * its own neighbours, so msg_size is agreed even for uniform blocks. */
CT_COLLECTIVE(NEIGHBOR_ALLTOALLV, neighbor_alltoallv, "Neighbor_alltoallv", pmpi, 0)
CT_COLLECTIVE(NEIGHBOR_ALLTOALL, neighbor_alltoall, "Neighbor_alltoall", pmpi, 0)
/* MPI_Ineighbor_alltoallv and MPI_Ineighbor_alltoall: the same calls,
 * nonblocking, and their persistent forms (MPI_Neighbor_alltoall(v)_init),
 * decided once as these (the algorithms that split, CT_NEIGHBOR_SPLIT_ALG) */
CT_COLLECTIVE(INEIGHBOR_ALLTOALLV, ineighbor_alltoallv, "Ineighbor_alltoallv", pmpi, 0)
CT_COLLECTIVE(INEIGHBOR_ALLTOALL, ineighbor_alltoall, "Ineighbor_alltoall", pmpi, 0)

/* ------------------------------------------------------------------ */
/* Alltoallv and Alltoall                                              */
/* ------------------------------------------------------------------ */

CT_ALLTOALLV_ALG(pmpi, 0,
    "forward to the MPI library's own routine for the call (PMPI_Alltoallv, "
    "PMPI_Alltoall or their large-count forms)")
CT_ALLTOALLV_SPLIT_ALG(pairwise, CT_R_PROGRESS,
    "pairwise exchange: one send and one receive per step ([Namugwanya2023] Alg. 1)")
CT_ALLTOALLV_SPLIT_ALG(nonblocking, 0,
    "all sends and receives posted in spread-out order, one Waitall "
    "([Namugwanya2023] Alg. 2; [Fan2024] II(d))")
CT_ALLTOALLV_SPLIT_ALG(linear, 0,
    "all sends and receives posted in ascending rank order "
    "(Open MPI basic linear; [Fan2024] II(d))")
CT_ALLTOALLV_SPLIT_ALG(scattered, CT_R_PROGRESS,
    "spread-out order in batches of block_count peers, waiting on each "
    "batch (MPICH scattered; [Fan2024] II(d))",
    {"block_count", K(1), EXPR(P, 0), K(32), "peers per batch (values above P act as P)",
     CT_CLAMP})
CT_ALLTOALLV_SPLIT_ALG(multipair_blocking, CT_R_PROGRESS,
    "pairwise order, stride exchanges in flight, Waitall per group ([Namugwanya2023] Alg. 3)",
    {"stride", K(1), EXPR(P, 0), K(8), "exchanges per group", CT_RANGE})
CT_ALLTOALLV_SPLIT_ALG(multipair_waitany, CT_R_PROGRESS,
    "pairwise order, stride exchanges in flight, refilled on Waitany "
    "([Namugwanya2023] Alg. 4)",
    {"stride", K(1), EXPR(P, 0), K(8), "exchanges in flight", CT_RANGE})
CT_ALLTOALLV_SPLIT_ALG(multipair_testany, CT_R_PROGRESS,
    "pairwise order, stride exchanges in flight, refilled on Testany "
    "([Namugwanya2023] Alg. 5)",
    {"stride", K(1), EXPR(P, 0), K(8), "exchanges in flight", CT_RANGE})
/* tuna: any type, any offsets, and no collective before it (no M) */
CT_ALLTOALLV_STEP_ALG(tuna, CT_R_PROGRESS,
    "tunable-radix non-uniform Bruck: metadata then data per round, tight "
    "temporary buffer ([Fan2024] III, Alg. 1)",
    {"radix", K(2), EXPR(P, 0), K(2),
     "Bruck radix: 2 fewest rounds, sqrt balanced, P-1 or P linear", CT_RANGE})
CT_ALLTOALLV_STEP_ALG(tuna_hier_coalesced, CT_A_BYTES | CT_R_INT_OFFSETS | CT_R_PROGRESS,
    "intra-node TuNA, then inter-node scattered with one message of Q blocks "
    "per node pair ([Fan2024] IV, Alg. 3)",
    {"radix", K(2), EXPR(Q, 1), K(2),
     "intra-node TuNA radix (values >= Q act as Q; Q+1 lets Q=1 run)", CT_CLAMP},
    {"block_count", K(1), EXPR(N, 0), K(1),
     "node pairs per batch (values above N-1 act as N-1)", CT_CLAMP})
CT_ALLTOALLV_STEP_ALG(tuna_hier_staggered, CT_A_BYTES | CT_R_INT_OFFSETS | CT_R_PROGRESS,
    "intra-node TuNA, then inter-node scattered with one block per step "
    "([Fan2024] IV, Alg. 2)",
    {"radix", K(2), EXPR(Q, 1), K(2),
     "intra-node TuNA radix (values >= Q act as Q; Q+1 lets Q=1 run)", CT_CLAMP},
    {"block_count", K(1), EXPR(NM1_Q, 1), K(1),
     "blocks per batch (values above (N-1)*Q act as (N-1)*Q)", CT_CLAMP})
CT_ALLTOALLV_STEP_ALG(shm, CT_R_SHARED_MEMORY | CT_L_WARM_UP,
    "through a shared-memory window: each rank copies its blocks in, one "
    "synchronisation, each copies its blocks out (bounded window, rounds); "
    "large blocks point-to-point",
    {"large", K(0), K(1L << 30), K(49152),
     "blocks of at least this many bytes go point-to-point, copied once by "
     "the MPI library instead of twice through the window (0: none)", CT_RANGE})
CT_ALLTOALLV_STEP_ALG(node_aware,
                      CT_A_BYTES | CT_R_NODE_SHARED_MEMORY | CT_R_PROGRESS | CT_L_ACROSS_NODES |
                          CT_L_WARM_UP,
    "each node gathers its blocks per destination through its shared-memory "
    "window, then coalesced messages between ranks of equal local index "
    "(every rank, or a few leaders that deliver through the window): TuNA "
    "over the nodes ([Fan2024] III) where nodes are equal, else one message "
    "per node pair (IV-B, Alg. 3)",
    {"radix", K(2), EXPR(N, 1), K(2),
     "TuNA radix over the nodes (values >= N-1 send to every node at once; "
     "N+1 lets N=1 run)", CT_RANGE},
    {"block_count", K(1), EXPR(N, 0), EXPR(N, 0),
     "nodes of different sizes: node pairs per batch (values above N-1 act as N-1)",
     CT_CLAMP},
    {"leaders", K(1), EXPR(Q, 0), EXPR(Q, 0),
     "equal nodes: ranks per node that exchange between nodes (Q: every "
     "rank; fewer: they carry the others' blocks, one more synchronisation "
     "in the node)", CT_RANGE})

/* ------------------------------------------------------------------ */
/* Intercommunicator Allgather and Allgatherv                          */
/* ------------------------------------------------------------------ */

#define CT_SUMMARY_AG_DIRECT                                                            \
    "every rank sends its block straight to every remote rank, all at once: each byte " \
    "copied once, no intra-group step (for shared memory and few nodes)"
#define CT_SUMMARY_AG_SHM                                                              \
    "every rank copies its block into a shared-memory window, every rank copies the " \
    "remote blocks out, in rounds of COLTUNE_SHM_WINDOW: one node only"
#define CT_HELP_AG_LINEAR                                                   \
    "intra-group step: 0 the MPI library's allgather(v), 1 every segment " \
    "sent to every group member at once"

CT_ALLGATHER_INTER_ALG(pmpi, 0,
    "forward to PMPI_Allgather (the library's root gathering, [Kang2019] section 3.1)",
    "forward to PMPI_Allgatherv (the library's root gathering, [Kang2019] section 3.1)")
CT_ALLGATHER_INTER_SPLIT_ALG(segmented, CT_A_BYTES | CT_R_INT_OFFSETS | CT_R_PROGRESS,
    "larger group's blocks whole to one partner, smaller group's blocks cut "
    "into segments over the larger group, then one intra-group allgather(v) "
    "per group ([Kang2019] Alg. 1)",
    "each group's byte stream cut into equal segments, one per remote rank, "
    "received in section 4.1 order, then one intra-group allgatherv per group "
    "([Kang2019] Alg. 2)",
    {"linear", K(0), K(1), K(0), CT_HELP_AG_LINEAR, CT_RANGE})
CT_ALLGATHER_INTER_SPLIT_ALG(direct, 0, CT_SUMMARY_AG_DIRECT, CT_SUMMARY_AG_DIRECT)
CT_ALLGATHER_INTER_ALG(shm, CT_R_SHARED_MEMORY | CT_L_WARM_UP, CT_SUMMARY_AG_SHM, CT_SUMMARY_AG_SHM)

/* ------------------------------------------------------------------ */
/* Sparse dynamic data exchange ([Geyko2023] section IV)               */
/* ------------------------------------------------------------------ */

CT_SDDE_ALG(personalized, 1, 0,
    "Reduce_scatter of per-destination message counts, sends, probed "
    "receives ([Geyko2023] Alg. 1)")
CT_SDDE_ALG(nonblocking, 1, 0,
    "NBX: synchronous sends, probe loop, Ibarrier once the sends complete "
    "([Geyko2023] Alg. 2)")
CT_SDDE_ALG(rma, 0, 0,
    "puts into a cached window of one slot and one flag per origin, "
    "fence-synchronised ([Geyko2023] Alg. 3)")
CT_SDDE_ALG(locality_personalized, 1, 0,
    "one aggregated message per destination node, then personalized "
    "redistribution inside the node ([Geyko2023] Alg. 4)")
CT_SDDE_ALG(locality_nonblocking, 1, 0,
    "aggregated inter-node NBX, then personalized redistribution inside "
    "the node ([Geyko2023] Alg. 5)")
CT_SDDE_ALG(locality_dense, 1, CT_A_AGREES,
    "an aggregate to every other node and a buffer to every rank of the "
    "node, empty or not: no reduction ([Geyko2023] Alg. 4 over lanes)")

/* ------------------------------------------------------------------ */
/* Neighbor_alltoallv and Neighbor_alltoall                            */
/* ------------------------------------------------------------------ */

CT_NEIGHBOR_ALG(pmpi, 0,
    "forward to the MPI library's own routine for the call (PMPI_Neighbor_alltoallv, "
    "PMPI_Neighbor_alltoall or their large-count forms)")
CT_NEIGHBOR_SPLIT_ALG(direct, 0,
    "one Irecv per source and one Isend per destination, one Waitall "
    "(what MPI libraries do; the reference of [Collom2023])")
CT_NEIGHBOR_STEP_ALG(locality, CT_A_BYTES | CT_R_PROGRESS,
    "messages to other nodes aggregated per node pair through one rank of "
    "each node, then redistributed on the node ([Collom2023]); large blocks "
    "directly",
    {"large", K(0), K(1L << 30), K(4096),
     "blocks of at least this many bytes to another node go directly, not "
     "through the aggregates, and all of a call's do where its largest is "
     "known to be one of these (0: none)", CT_RANGE},
    {"steps", K(2), K(3), K(3),
     "3: one aggregate per pair of nodes, gathered on the sending node "
     "(three steps); 2: one per rank and destination node, sent by its "
     "origin to the rank of the same local index there ([Bienz2020])",
     CT_RANGE},
    {"shm", K(0), K(1), K(0),
     "1: the messages between ranks of one node go through the node's "
     "shared-memory window (one synchronisation of the node per call) "
     "instead of point-to-point; 0: point-to-point",
     CT_RANGE},
    {"shm_large", K(0), K(1L << 30), K(65536),
     "with shm=1, messages inside the node of at least this many bytes go "
     "point-to-point, copied once by the MPI library instead of twice "
     "through the window (0: none)", CT_RANGE})

#undef CT_COLLECTIVE
#undef CT_ALLTOALLV_ALG
#undef CT_ALLTOALLV_SPLIT_ALG
#undef CT_ALLTOALLV_STEP_ALG
#undef CT_ALLGATHER_INTER_ALG
#undef CT_ALLGATHER_INTER_SPLIT_ALG
#undef CT_SDDE_ALG
#undef CT_NEIGHBOR_ALG
#undef CT_NEIGHBOR_SPLIT_ALG
#undef CT_NEIGHBOR_STEP_ALG
