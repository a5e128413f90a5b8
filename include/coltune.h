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
 * of comm, never on comm itself.
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

/* ---------------------------------------------------------------- */
/* MPI_Alltoallv (intra-communicators)                               */
/* ---------------------------------------------------------------- */

/*
 * Runs the algorithm named by spec, written as in a rules file
 * ("scattered:block_count=8", "multipair_waitany:stride=sqrt"); spec NULL
 * decides exactly as the intercepted MPI_Alltoallv would (environment, then
 * rules). A spec that does not parse returns MPI_ERR_ARG with a message.
 */
int coltune_alltoallv(const char *spec, const void *sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm);

/* Pairwise exchange, one Sendrecv per step (Namugwanya et al., Alg. 1). */
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

/* Spread-out in batches of block_count peers (MPICH scattered), 1 <= block_count <= P. */
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

#ifdef __cplusplus
}
#endif

#endif
