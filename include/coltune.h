/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coltune.h - coltune's public C API.
 *
 * coltune serves MPI collectives with algorithms from recent research. Most
 * users never include this header: they preload libcoltune.so and let the
 * rules file choose (see coltune(7)). This header is for applications that
 * want to call one algorithm directly, with its parameters.
 *
 * Every function here has the MPI signature of its collective plus the
 * algorithm's parameters, returns an MPI error code, and passes through the
 * same checks as a forced algorithm: if the algorithm cannot serve the call
 * (a restriction, a parameter out of range for this communicator) the call
 * is served by the MPI library's own routine, as COLTUNE_FALLBACK says
 * (print | silent | error). Internal messages travel on a private duplicate
 * of comm, never on comm itself. COLTUNE_DISABLE does not apply to these
 * calls: naming an algorithm explicitly runs it.
 *
 * Papers are cited by key, as [Fan2024]; coltune(7) lists them under
 * References.
 */
#ifndef COLTUNE_H
#define COLTUNE_H

#include <mpi.h>

#define COLTUNE_VERSION_MAJOR 0
#define COLTUNE_VERSION_MINOR 1
#define COLTUNE_VERSION_PATCH 0
#define COLTUNE_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- */
/* The algorithm registry                                            */
/* ---------------------------------------------------------------- */

/* Number of registered algorithms (every collective). */
int coltune_algorithm_count(void);

/* Algorithm i (0 <= i < count): its collective as written in rules files
 * ("alltoallv", ...), its name and its number of parameters. Returns 0, or -1
 * when i is out of range. */
int coltune_algorithm_info(int i, const char **collective, const char **name, int *nparams);

/* Parameter k of algorithm i, with its range and default evaluated for a
 * communicator of P ranks on N nodes of at most Q ranks. An empty range
 * (min > max) means the algorithm cannot run there. Returns 0 or -1. */
int coltune_algorithm_param(int i, int k, int P, int Q, int N, const char **name, long *min,
                            long *max, long *def);

/* coltune's view of comm (collective on first use of comm): P ranks (both
 * groups for an intercommunicator) on N nodes of at most Q ranks, as the
 * rules and parameter expressions see them (real nodes, or COLTUNE_PPN). */
int coltune_comm_topology(MPI_Comm comm, int *P, int *Q, int *N);

/* What a call of collective ("alltoallv", "alltoall", ... as in rules files)
 * on comm whose largest block is msg_size bytes would run when decided as
 * the intercepted call decides it (the collective's environment variable,
 * then the rules, then pmpi; COLTUNE_DISABLE does not apply), with host
 * buffers and arguments every algorithm accepts: the algorithm and its
 * resolved parameters, as COLTUNE_VERBOSE logs them
 * ("scattered:block_count=4"), written to spec (len bytes). An MPI_Alltoall
 * or intercommunicator MPI_Allgather with empty blocks is "pmpi" (nothing to
 * do). A neighbourhood collective's rules on its graph (degree, offnode)
 * apply once a neighbourhood call on comm has read it, and are passed over
 * before. Collective on first use of comm, local afterwards; under
 * MPI_THREAD_MULTIPLE several threads may call it at once on one comm, its
 * first use included (one makes the context, the others wait). Returns
 * MPI_SUCCESS, MPI_ERR_COMM, or MPI_ERR_ARG (unknown collective, NULL,
 * msg_size < 0, spec too short). */
int coltune_decision(MPI_Comm comm, const char *collective, MPI_Count msg_size, char *spec,
                     int len);

/* ---------------------------------------------------------------- */
/* MPI_Alltoallv (intra-communicators)                               */
/* ---------------------------------------------------------------- */

/*
 * Runs the algorithm named by spec, written as in a rules file
 * ("scattered:block_count=8", "multipair_waitany:stride=sqrt"); spec NULL
 * decides as the intercepted MPI_Alltoallv would (environment, then rules),
 * except that COLTUNE_DISABLE does not apply to an explicit call. A spec that
 * does not parse returns MPI_ERR_ARG with a message.
 */
int coltune_alltoallv(const char *spec, const void *sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm);

/*
 * MPI_Alltoall through the same algorithms (rule collective "alltoall"):
 * spec as for coltune_alltoallv, NULL decides as the intercepted
 * MPI_Alltoall would. MPI_IN_PLACE as in MPI_Alltoall.
 */
int coltune_alltoall(const char *spec, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/*
 * The nonblocking forms, MPI_Ialltoallv and MPI_Ialltoall (rule collectives
 * "ialltoallv" and "ialltoall"): spec names one of the algorithms that
 * split (coltune(7)) or pmpi; NULL decides as the intercepted call would.
 * *request completes in any completion call (MPI_Wait, MPI_Test, ...) of
 * an application that runs with libcoltune (linked or preloaded).
 */
int coltune_ialltoallv(const char *spec, const void *sendbuf, const int sendcounts[],
                       const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Request *request);
int coltune_ialltoall(const char *spec, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request);

/*
 * The persistent forms, MPI_Alltoallv_init and MPI_Alltoall_init (Open MPI
 * 4.1: MPIX_Alltoallv_init, MPIX_Alltoall_init; rule collectives
 * "ialltoallv" and "ialltoall" with persistent=1): decided and planned once,
 * here; every MPI_Start of *request runs it, and it completes as
 * coltune_ialltoallv's does. spec as for coltune_ialltoallv ("adapt" is
 * not a spec: COLTUNE_ADAPT=1 with a NULL spec learns on the starts).
 * MPI_ERR_UNSUPPORTED_OPERATION where the MPI library coltune was built
 * against has no persistent collectives (coltune-info says), and in the
 * SimGrid build, which intercepts no completion call.
 */
int coltune_alltoallv_init(const char *spec, const void *sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request);
int coltune_alltoall_init(const char *spec, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request);

#if defined(MPI_VERSION) && MPI_VERSION >= 4
/*
 * The MPI-4 large-count forms (MPI_Count counts, MPI_Aint displacements),
 * through the same decision and algorithms. Defined only when the MPI library
 * coltune was built against has the large-count routines (MPICH 4; not Open
 * MPI 4.1, whose mpi.h says MPI_VERSION 3): coltune-info and coltune(7) say.
 */
int coltune_alltoallv_c(const char *spec, const void *sendbuf, const MPI_Count sendcounts[],
                        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm);
int coltune_alltoall_c(const char *spec, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm);
#endif

/* Pairwise exchange, one Sendrecv per step ([Namugwanya2023] Alg. 1). */
int coltune_alltoallv_pairwise(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* All exchanges posted at once in spread-out order (Alg. 2). */
int coltune_alltoallv_nonblocking(const void *sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm);

/* All exchanges posted at once in ascending rank order (Open MPI basic linear). */
int coltune_alltoallv_linear(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* Spread-out in batches of block_count peers (MPICH scattered), 1 <= block_count <= P;
 * larger values act as P, as MPICH's throttle. */
int coltune_alltoallv_scattered(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, int block_count);

/* Multi-pair exchanges, 1 <= stride <= P (Alg. 3: Waitall per group of stride;
 * Alg. 4: window refilled on Waitany; Alg. 5: window refilled on Testany). */
int coltune_alltoallv_multipair_blocking(const void *sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype,
                                         void *recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype,
                                         MPI_Comm comm, int stride);
int coltune_alltoallv_multipair_waitany(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm, int stride);
int coltune_alltoallv_multipair_testany(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm, int stride);

/* TuNA, the tunable-radix non-uniform Bruck ([Fan2024] section III):
 * 2 <= radix <= P; 2 gives the fewest rounds (short messages), about sqrt(P)
 * balances rounds and bytes, P is the linear exchange (long messages). */
int coltune_alltoallv_tuna(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           int radix);

/* Hierarchical TuNA (section IV): TuNA with 2 <= radix <= Q+1 among the Q
 * ranks of each node, then an inter-node exchange between ranks of equal
 * local index in batches of block_count. Coalesced: one message of Q blocks
 * per node pair, 1 <= block_count <= N (long messages). Staggered: one block
 * per message, 1 <= block_count <= (N-1)*Q+1 (short messages). Values above
 * the number of inter-node steps act as that number, and radix values from Q
 * up act as Q (the exchange inside the node is then linear). */
int coltune_alltoallv_tuna_hier_coalesced(const void *sendbuf, const int sendcounts[],
                                          const int sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, int radix, int block_count);
int coltune_alltoallv_tuna_hier_staggered(const void *sendbuf, const int sendcounts[],
                                          const int sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, int radix, int block_count);

/* ---------------------------------------------------------------- */
/* MPI_Allgather / MPI_Allgatherv (intercommunicators)               */
/* ---------------------------------------------------------------- */

/*
 * Intercommunicator Allgather and Allgatherv (every rank receives the blocks
 * of every rank of the other group) with the algorithm named by spec, as in
 * a rules file: "segmented" ([Kang2019], "Scalable Algorithms for MPI
 * Intergroup Allgather and Allgatherv", Algorithms 1 and 2), "direct", "shm"
 * or "pmpi"; spec NULL decides as the intercepted call would (environment,
 * then rules; COLTUNE_DISABLE does not apply to an explicit call). comm must be an intercommunicator (else MPI_ERR_COMM);
 * MPI_IN_PLACE, which has no meaning there, is handed to the MPI library
 * unchanged. A spec that does not parse returns MPI_ERR_ARG with a message.
 */
int coltune_allgather_inter(const char *spec, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm);
int coltune_allgatherv_inter(const char *spec, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int displs[], MPI_Datatype recvtype, MPI_Comm comm);

/*
 * Their nonblocking forms, MPI_Iallgather and MPI_Iallgatherv on
 * intercommunicators (rule collectives "iallgather_inter" and
 * "iallgatherv_inter"): spec names one of the algorithms that split
 * ("direct") or "pmpi"; NULL decides as the intercepted call would.
 * *request completes as coltune_ialltoallv's does.
 */
int coltune_iallgather_inter(const char *spec, const void *sendbuf, int sendcount,
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int coltune_iallgatherv_inter(const char *spec, const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request);

#if defined(MPI_VERSION) && MPI_VERSION >= 4
/* The large-count forms of the blocking two (arguments of MPI_Allgather_c and
 * MPI_Allgatherv_c); defined only when the MPI library has them (MPICH 4). */
int coltune_allgather_inter_c(const char *spec, const void *sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm);
int coltune_allgatherv_inter_c(const char *spec, const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);
#endif

/* ---------------------------------------------------------------- */
/* Sparse dynamic data exchange: MPIX_Alltoall_crs, MPIX_Alltoallv_crs */
/* ---------------------------------------------------------------- */

/*
 * The API of [Geyko2023], "A More Scalable Sparse Dynamic Data Exchange"
 * (section III, Table I, Figures 3-4). Each rank knows
 * only what it sends: send_nnz messages, message i to rank dest[i]. The call
 * discovers who sends to this rank and how much, and delivers the data. It is
 * collective over the communicator (intra-communicators only).
 *
 * Send side.
 *   MPIX_Alltoall_crs: message i is sendcount elements of sendtype at
 *   sendvals + i * sendcount * extent(sendtype).
 *   MPIX_Alltoallv_crs: message i is sendcounts[i] elements at
 *   sendvals + sdispls[i] * extent(sendtype); sendvals holds send_size
 *   elements and every message must lie inside them.
 *   A destination may appear at most once; a message of zero elements is
 *   still a message (its receiver learns of it). A message carries at most
 *   INT_MAX - 64 bytes.
 *
 * Receive side: messages are reported sorted by source rank, whatever the
 * algorithm. On return *recv_nnz is the number of messages received and
 * src[k] the source of the k-th.
 *   MPIX_Alltoall_crs: every message is recvcount elements of recvtype, the
 *   k-th at recvvals + k * recvcount * extent(recvtype). A message whose size
 *   differs from recvcount * size(recvtype) is an error (MPI_ERR_TRUNCATE when
 *   larger, MPI_ERR_COUNT when smaller).
 *   MPIX_Alltoallv_crs: recvcounts[k] elements of recvtype from src[k];
 *   rdispls[k] is the prefix sum of recvcounts (packed, in units of the
 *   extent of recvtype) and *recv_size the total.
 *
 * Who allocates the outputs.
 *   MPIX_Alltoall_crs / MPIX_Alltoallv_crs: the caller. On input *recv_nnz
 *   is the capacity of src (and of recvcounts and rdispls), and recvvals
 *   holds *recv_nnz * recvcount elements (MPIX_Alltoall_crs) or *recv_size
 *   elements (MPIX_Alltoallv_crs, *recv_size on input). When xinfo says the
 *   exact count or size is known (MPIX_Info_set_recv_nnz_known,
 *   MPIX_Info_set_recv_size_known), that input value is both the known
 *   value and the capacity. If what arrives does not fit, nothing is written
 *   to src, recvcounts, rdispls or recvvals, *recv_nnz and *recv_size are set
 *   to what would be needed, every rank still completes the exchange, and
 *   the call returns MPI_ERR_TRUNCATE with a one-line message.
 *   MPIX_Alltoall_crs_alloc / MPIX_Alltoallv_crs_alloc: coltune allocates
 *   *src, *recvcounts, *rdispls and *recvvals with exactly the size needed
 *   (never NULL on success, even when nothing arrives); free each with
 *   MPIX_Free. *recv_nnz and *recv_size are outputs only, unless a hint says
 *   the count is known.
 *
 * Hints (MPIX_Info, xinfo may be NULL): an exact receive count lets the
 * personalized algorithm skip its reduction when every rank gives one. A
 * hint must be exact: a wrong known count is erroneous (it may hang).
 *
 * Errors. Arguments are checked on every rank and all ranks agree before any
 * message moves: a rank whose arguments are invalid (negative count or
 * send_nnz, destination out of range or listed twice, message outside
 * send_size, NULL array, MPI_DATATYPE_NULL) returns MPI_ERR_ARG (MPI_ERR_TYPE
 * for a null datatype) with a message naming the index and value; every
 * other rank returns MPI_ERR_OTHER ("another rank passed invalid
 * arguments"). Nothing is sent and no output is written in either case.
 * After the exchange: MPI_ERR_TRUNCATE when more arrives than *recv_nnz (or
 * *recv_size) has room for (nothing is written; the count then says what is
 * needed), MPI_ERR_TYPE when a received message is not a whole number of
 * recvtype elements (MPIX_Alltoallv_crs) or, for the _alloc variants,
 * recvtype has a negative true lower bound, MPI_ERR_COUNT when more than
 * INT_MAX elements arrive in all, MPI_ERR_ARG when a hint says no message
 * arrives but the rank sends one to itself, MPI_ERR_NO_MEM.
 * Errors go through the communicator's error handler, as in MPI.
 *
 * Algorithms (rules files and COLTUNE_ALLTOALL_CRS / COLTUNE_ALLTOALLV_CRS
 * choose among them; "personalized" when nothing is set): personalized,
 * nonblocking, rma (MPIX_Alltoall_crs only), locality_personalized,
 * locality_nonblocking, locality_dense.
 */

typedef struct MPIX_Info MPIX_Info;
typedef struct MPIX_Comm MPIX_Comm;

/* Hints: none set after init. Each returns MPI_SUCCESS or MPI_ERR_ARG
 * (MPIX_Info_init also MPI_ERR_NO_MEM). */
int MPIX_Info_init(MPIX_Info **xinfo);
int MPIX_Info_free(MPIX_Info **xinfo); /* sets *xinfo to NULL */
/* known != 0: on input *recv_nnz is the exact number of messages this rank
 * receives. */
int MPIX_Info_set_recv_nnz_known(MPIX_Info *xinfo, int known);
/* known != 0: on input *recv_size is the exact number of elements this rank
 * receives (MPIX_Alltoallv_crs). */
int MPIX_Info_set_recv_size_known(MPIX_Info *xinfo, int known);

/* Wraps comm (not duplicated: coltune's internal traffic runs on its own
 * private duplicate, cached on comm). Collective over comm: it creates that
 * context now rather than in the first exchange. Free it before comm. */
int MPIX_Comm_init(MPIX_Comm **xcomm, MPI_Comm comm);
int MPIX_Comm_free(MPIX_Comm **xcomm); /* sets *xcomm to NULL */

int MPIX_Alltoall_crs(int send_nnz, const int *dest, int sendcount, MPI_Datatype sendtype,
                      const void *sendvals, int *recv_nnz, int *src, int recvcount,
                      MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                      MPIX_Comm *xcomm);

int MPIX_Alltoallv_crs(int send_nnz, int send_size, const int *dest, const int *sendcounts,
                       const int *sdispls, MPI_Datatype sendtype, const void *sendvals,
                       int *recv_nnz, int *recv_size, int *src, int *recvcounts, int *rdispls,
                       MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                       MPIX_Comm *xcomm);

int MPIX_Alltoall_crs_alloc(int send_nnz, const int *dest, int sendcount,
                            MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                            int **src, int recvcount, MPI_Datatype recvtype, void **recvvals,
                            MPIX_Info *xinfo, MPIX_Comm *xcomm);

int MPIX_Alltoallv_crs_alloc(int send_nnz, int send_size, const int *dest,
                             const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                             const void *sendvals, int *recv_nnz, int *recv_size, int **src,
                             int **recvcounts, int **rdispls, MPI_Datatype recvtype,
                             void **recvvals, MPIX_Info *xinfo, MPIX_Comm *xcomm);

/* Frees what the _alloc variants allocated (NULL is ignored). */
int MPIX_Free(void *ptr);

/*
 * The same four calls on a plain MPI_Comm, with the algorithm named by spec
 * as in a rules file ("nonblocking", "locality_personalized"); spec NULL
 * decides as the MPIX_ calls do (environment, then rules). A spec that does
 * not parse returns MPI_ERR_ARG with a message.
 */
int coltune_alltoall_crs(const char *spec, int send_nnz, const int *dest, int sendcount,
                         MPI_Datatype sendtype, const void *sendvals, int *recv_nnz, int *src,
                         int recvcount, MPI_Datatype recvtype, void *recvvals, MPIX_Info *xinfo,
                         MPI_Comm comm);
int coltune_alltoallv_crs(const char *spec, int send_nnz, int send_size, const int *dest,
                          const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                          const void *sendvals, int *recv_nnz, int *recv_size, int *src,
                          int *recvcounts, int *rdispls, MPI_Datatype recvtype, void *recvvals,
                          MPIX_Info *xinfo, MPI_Comm comm);
int coltune_alltoall_crs_alloc(const char *spec, int send_nnz, const int *dest, int sendcount,
                               MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                               int **src, int recvcount, MPI_Datatype recvtype,
                               void **recvvals, MPIX_Info *xinfo, MPI_Comm comm);
int coltune_alltoallv_crs_alloc(const char *spec, int send_nnz, int send_size, const int *dest,
                                const int *sendcounts, const int *sdispls,
                                MPI_Datatype sendtype, const void *sendvals, int *recv_nnz,
                                int *recv_size, int **src, int **recvcounts, int **rdispls,
                                MPI_Datatype recvtype, void **recvvals, MPIX_Info *xinfo,
                                MPI_Comm comm);

/* ---------------------------------------------------------------- */
/* MPI_Neighbor_alltoallv / MPI_Neighbor_alltoall                     */
/* ---------------------------------------------------------------- */

/*
 * The neighbourhood all-to-alls of a communicator with a topology
 * (distributed graph, graph, Cartesian), under the algorithm named by spec
 * ("direct", "locality"; rule collectives "neighbor_alltoallv" and
 * "neighbor_alltoall"); spec NULL decides as the intercepted call would.
 * Arguments as MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall. A
 * communicator without a topology, or whose graph joins two ranks by two
 * edges (repeated edges, a periodic Cartesian dimension of one or two
 * ranks), goes to the MPI library's routine.
 */
int coltune_neighbor_alltoallv(const char *spec, const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm);
int coltune_neighbor_alltoall(const char *spec, const void *sendbuf, int sendcount,
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm);

/*
 * Their nonblocking forms, MPI_Ineighbor_alltoallv and
 * MPI_Ineighbor_alltoall (rule collectives "ineighbor_alltoallv" and
 * "ineighbor_alltoall"; spec "direct", "locality" or "pmpi", or NULL), completed as
 * coltune_ialltoallv's; and their persistent forms,
 * MPI_Neighbor_alltoallv_init and MPI_Neighbor_alltoall_init (Open MPI 4.1:
 * MPIX_), decided and planned once as coltune_alltoallv_init's (the same
 * rule collectives with persistent=1; MPI_ERR_UNSUPPORTED_OPERATION where
 * the MPI library has no persistent collectives).
 */
int coltune_ineighbor_alltoallv(const char *spec, const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int coltune_ineighbor_alltoall(const char *spec, const void *sendbuf, int sendcount,
                               MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int coltune_neighbor_alltoallv_init(const char *spec, const void *sendbuf,
                                    const int sendcounts[], const int sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request);
int coltune_neighbor_alltoall_init(const char *spec, const void *sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request);

/* Point-to-point messages (or puts) carrying data that this rank sent to
 * ranks on other nodes, as coltune's topology sees nodes (COLTUNE_PPN
 * included), in the last sparse dynamic data exchange on comm; -1 before
 * the first. For benchmarks: collectives inside the algorithms (reductions,
 * barriers, fences) are not counted. */
int coltune_sdde_internode_msgs(MPI_Comm comm, long *count);

#ifdef __cplusplus
}
#endif

#endif
