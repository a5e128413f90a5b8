/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compat.h - what SimGrid SMPI 3.32 lacks that coltune uses, supplied for
 * the simulated build only (smpi/build.sh force-includes this header into
 * every file of coltune and of coltune-bench; the normal build never sees
 * it). Not a second copy of any coltune algorithm: each call below has the
 * MPI signature and MPI semantics, and coltune's own files run unchanged.
 *
 *   MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv
 *       Not implemented in SMPI ("Not yet implemented" abort). Emulated by
 *       probe + receive from the probed source and tag: exact for a rank
 *       with one thread, which every simulated rank is (MPI's
 *       non-overtaking rule makes the receive match the probed message).
 *   MPI_Waitall
 *       SMPI's takes time quadratic in the number of requests (each
 *       completion rescans all pending ones); at P = 1024 one linear
 *       exchange takes hours of wall time. The wrapper waits for the
 *       requests in order: the same simulated completion, linear cost.
 *   MPI_Testany
 *       SMPI never reports an eager ("detached") send complete in
 *       MPI_Testany, so a loop that refills a window of requests as they
 *       complete (multipair_testany) waits forever. The wrapper tests the
 *       active requests one by one with MPI_Test, which does report them.
 *   Intercommunicators
 *       SMPI has none (MPI_Intercomm_create, MPI_Intercomm_merge and
 *       MPI_Comm_remote_size abort). They are emulated: an intercommunicator
 *       handle is a real SMPI communicator over both groups (the "low"
 *       group first) that this file knows as an intercommunicator; the
 *       calls below translate ranks (the remote group's rank r is rank
 *       remote_off + r of that communicator) and give MPI_Comm_size,
 *       MPI_Comm_rank, MPI_Comm_remote_size, MPI_Comm_test_inter,
 *       MPI_Comm_dup, MPI_Comm_free, MPI_Intercomm_merge, point-to-point
 *       calls, MPI_Barrier and MPI_Allreduce their intercommunicator
 *       meaning. MPI_Allgather and MPI_Allgatherv on an intercommunicator
 *       are the "native" reference: the root gathering algorithm of MPICH
 *       (MPIR_Allgather(v)_inter_local_gather_remote_bcast; [Kang2019]
 *       section 3.1), built from SMPI's intra-communicator Gather(v) and
 *       Bcast, so --cfg=smpi/gather:... and smpi/bcast:... choose their
 *       parts. Other collectives on an emulated intercommunicator return
 *       MPI_ERR_COMM with a message rather than run on both groups.
 *       coltune-sim sets COLTUNE_SMPI_SKIP_NATIVE=1 in runs whose native
 *       rows it discards: MPI_Alltoallv and MPI_Alltoall then return at
 *       once (compat.c).
 *       Limitation: statuses that the MPI_Wait and MPI_Test families return for receives
 *       on an intercommunicator carry the combined rank (coltune ignores
 *       them).
 *   Distributed graph topologies
 *       SMPI aborts in MPI_Topo_test and has no distributed graphs. A
 *       communicator made by MPI_Dist_graph_create_adjacent is a duplicate
 *       of the old one that this file knows with its neighbours (ranks
 *       kept, as reorder allows; MPI_Comm_dup keeps them, MPI_Comm_free
 *       forgets them): MPI_Topo_test says MPI_DIST_GRAPH for it and
 *       MPI_UNDEFINED for every other communicator (SMPI's Cartesian ones
 *       included), MPI_Dist_graph_neighbors(_count) return the lists as
 *       given, and MPI_Neighbor_alltoall(v), the native reference, post a
 *       receive from each source and a send to each destination and wait
 *       for them all (the MPI libraries' basic algorithm) on a private
 *       duplicate. The nonblocking and persistent forms are not emulated.
 */
#ifndef CT_SMPI_COMPAT_H
#define CT_SMPI_COMPAT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

int ctsim_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]);
int ctsim_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status);
int ctsim_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status);
int ctsim_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                  MPI_Status *status);
int ctsim_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                 MPI_Request *request);
int ctsim_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                MPI_Status *status);

int ctsim_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                           int remote_leader, int tag, MPI_Comm *newintercomm);
int ctsim_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm);
int ctsim_Comm_remote_size(MPI_Comm comm, int *size);
int ctsim_Comm_test_inter(MPI_Comm comm, int *flag);
int ctsim_Comm_size(MPI_Comm comm, int *size);
int ctsim_Comm_rank(MPI_Comm comm, int *rank);
int ctsim_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
int ctsim_Comm_free(MPI_Comm *comm);
int ctsim_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
int ctsim_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm);

int ctsim_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int ctsim_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm);
int ctsim_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *req);
int ctsim_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm, MPI_Request *req);
int ctsim_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Status *status);
int ctsim_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Request *req);
int ctsim_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                   int recvtag, MPI_Comm comm, MPI_Status *status);
int ctsim_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
int ctsim_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);

int ctsim_Barrier(MPI_Comm comm);
int ctsim_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm);
int ctsim_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int ctsim_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm);
int ctsim_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int ctsim_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm);
int ctsim_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int ctsim_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int ctsim_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int ctsim_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                     const int sourceweights[], int outdegree,
                                     const int destinations[], const int destweights[],
                                     MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
int ctsim_Topo_test(MPI_Comm comm, int *status);
int ctsim_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                     int *weighted);
int ctsim_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                               int sourceweights[], int maxoutdegree, int destinations[],
                               int destweights[]);
int ctsim_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int ctsim_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

/* Every file but compat.c itself calls the wrappers, under both names. */
#ifndef CT_SMPI_COMPAT_IMPL
#define CT_SMPI_WRAP(name) ctsim_##name
#define MPI_Waitall CT_SMPI_WRAP(Waitall)
#define PMPI_Waitall CT_SMPI_WRAP(Waitall)
#define MPI_Testany CT_SMPI_WRAP(Testany)
#define PMPI_Testany CT_SMPI_WRAP(Testany)
#define MPI_Mprobe CT_SMPI_WRAP(Mprobe)
#define PMPI_Mprobe CT_SMPI_WRAP(Mprobe)
#define MPI_Improbe CT_SMPI_WRAP(Improbe)
#define PMPI_Improbe CT_SMPI_WRAP(Improbe)
#define MPI_Imrecv CT_SMPI_WRAP(Imrecv)
#define PMPI_Imrecv CT_SMPI_WRAP(Imrecv)
#define MPI_Mrecv CT_SMPI_WRAP(Mrecv)
#define PMPI_Mrecv CT_SMPI_WRAP(Mrecv)
#define MPI_Intercomm_create CT_SMPI_WRAP(Intercomm_create)
#define PMPI_Intercomm_create CT_SMPI_WRAP(Intercomm_create)
#define MPI_Intercomm_merge CT_SMPI_WRAP(Intercomm_merge)
#define PMPI_Intercomm_merge CT_SMPI_WRAP(Intercomm_merge)
#define MPI_Comm_remote_size CT_SMPI_WRAP(Comm_remote_size)
#define PMPI_Comm_remote_size CT_SMPI_WRAP(Comm_remote_size)
#define MPI_Comm_test_inter CT_SMPI_WRAP(Comm_test_inter)
#define PMPI_Comm_test_inter CT_SMPI_WRAP(Comm_test_inter)
#define MPI_Comm_size CT_SMPI_WRAP(Comm_size)
#define PMPI_Comm_size CT_SMPI_WRAP(Comm_size)
#define MPI_Comm_rank CT_SMPI_WRAP(Comm_rank)
#define PMPI_Comm_rank CT_SMPI_WRAP(Comm_rank)
#define MPI_Comm_dup CT_SMPI_WRAP(Comm_dup)
#define PMPI_Comm_dup CT_SMPI_WRAP(Comm_dup)
#define MPI_Comm_free CT_SMPI_WRAP(Comm_free)
#define PMPI_Comm_free CT_SMPI_WRAP(Comm_free)
#define MPI_Comm_split CT_SMPI_WRAP(Comm_split)
#define PMPI_Comm_split CT_SMPI_WRAP(Comm_split)
#define MPI_Comm_split_type CT_SMPI_WRAP(Comm_split_type)
#define PMPI_Comm_split_type CT_SMPI_WRAP(Comm_split_type)
#define MPI_Send CT_SMPI_WRAP(Send)
#define PMPI_Send CT_SMPI_WRAP(Send)
#define MPI_Ssend CT_SMPI_WRAP(Ssend)
#define PMPI_Ssend CT_SMPI_WRAP(Ssend)
#define MPI_Isend CT_SMPI_WRAP(Isend)
#define PMPI_Isend CT_SMPI_WRAP(Isend)
#define MPI_Issend CT_SMPI_WRAP(Issend)
#define PMPI_Issend CT_SMPI_WRAP(Issend)
#define MPI_Recv CT_SMPI_WRAP(Recv)
#define PMPI_Recv CT_SMPI_WRAP(Recv)
#define MPI_Irecv CT_SMPI_WRAP(Irecv)
#define PMPI_Irecv CT_SMPI_WRAP(Irecv)
#define MPI_Sendrecv CT_SMPI_WRAP(Sendrecv)
#define PMPI_Sendrecv CT_SMPI_WRAP(Sendrecv)
#define MPI_Probe CT_SMPI_WRAP(Probe)
#define PMPI_Probe CT_SMPI_WRAP(Probe)
#define MPI_Iprobe CT_SMPI_WRAP(Iprobe)
#define PMPI_Iprobe CT_SMPI_WRAP(Iprobe)
#define MPI_Barrier CT_SMPI_WRAP(Barrier)
#define PMPI_Barrier CT_SMPI_WRAP(Barrier)
#define MPI_Allreduce CT_SMPI_WRAP(Allreduce)
#define PMPI_Allreduce CT_SMPI_WRAP(Allreduce)
#define MPI_Allgather CT_SMPI_WRAP(Allgather)
#define PMPI_Allgather CT_SMPI_WRAP(Allgather)
#define MPI_Allgatherv CT_SMPI_WRAP(Allgatherv)
#define PMPI_Allgatherv CT_SMPI_WRAP(Allgatherv)
#define MPI_Bcast CT_SMPI_WRAP(Bcast)
#define PMPI_Bcast CT_SMPI_WRAP(Bcast)
#define MPI_Reduce CT_SMPI_WRAP(Reduce)
#define PMPI_Reduce CT_SMPI_WRAP(Reduce)
#define MPI_Gather CT_SMPI_WRAP(Gather)
#define PMPI_Gather CT_SMPI_WRAP(Gather)
#define MPI_Alltoall CT_SMPI_WRAP(Alltoall)
#define PMPI_Alltoall CT_SMPI_WRAP(Alltoall)
#define MPI_Alltoallv CT_SMPI_WRAP(Alltoallv)
#define PMPI_Alltoallv CT_SMPI_WRAP(Alltoallv)
#define MPI_Dist_graph_create_adjacent CT_SMPI_WRAP(Dist_graph_create_adjacent)
#define PMPI_Dist_graph_create_adjacent CT_SMPI_WRAP(Dist_graph_create_adjacent)
#define MPI_Topo_test CT_SMPI_WRAP(Topo_test)
#define PMPI_Topo_test CT_SMPI_WRAP(Topo_test)
#define MPI_Dist_graph_neighbors_count CT_SMPI_WRAP(Dist_graph_neighbors_count)
#define PMPI_Dist_graph_neighbors_count CT_SMPI_WRAP(Dist_graph_neighbors_count)
#define MPI_Dist_graph_neighbors CT_SMPI_WRAP(Dist_graph_neighbors)
#define PMPI_Dist_graph_neighbors CT_SMPI_WRAP(Dist_graph_neighbors)
#define MPI_Neighbor_alltoallv CT_SMPI_WRAP(Neighbor_alltoallv)
#define PMPI_Neighbor_alltoallv CT_SMPI_WRAP(Neighbor_alltoallv)
#define MPI_Neighbor_alltoall CT_SMPI_WRAP(Neighbor_alltoall)
#define PMPI_Neighbor_alltoall CT_SMPI_WRAP(Neighbor_alltoall)
#endif

#endif
