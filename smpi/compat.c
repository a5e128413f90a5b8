/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compat.c - MPI calls SimGrid SMPI 3.32 lacks, for the simulated build
 * (see compat.h for what and why). Global state here is per simulated rank:
 * smpirun privatizes the globals of the program, which holds this file.
 */
#define CT_SMPI_COMPAT_IMPL
#include "compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal traffic of the emulated collectives runs on a private duplicate
 * (inter.coll), so this tag meets nobody else's messages. */
#define TAG_ROOTS 7901
#define TAG_NBR 7902

#define CALL(expr)                                                              \
    do {                                                                        \
        rc = (expr);                                                            \
        if (rc != MPI_SUCCESS)                                                  \
            goto out;                                                           \
    } while (0)

/* ------------------------------------------------------------------ */
/* Testany                                                             */
/* ------------------------------------------------------------------ */

int ctsim_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    /* MPI_Test does see eager sends complete: one test per active request,
     * in index order (each costs the simulated smpi/test time, as a scan of
     * the requests costs time in a real MPI_Testany). */
    int rc, active = 0;
    *flag = 0;
    *index = MPI_UNDEFINED;
    for (int k = 0; k < count; k++) {
        if (reqs[k] == MPI_REQUEST_NULL)
            continue;
        active = 1;
        if ((rc = PMPI_Test(&reqs[k], flag, status)) != MPI_SUCCESS || *flag) {
            *index = k;
            return rc;
        }
    }
    if (!active) { /* no active request: flag true, index undefined, empty status */
        *flag = 1;
        return PMPI_Testany(count, reqs, index, flag, status);
    }
    return MPI_SUCCESS;
}

/* SMPI's MPI_Waitall calls its MPI_Waitany once per request, and each of
 * those scans every request still pending: quadratic in the number of
 * requests, which at P = 1024 is hours of wall time for one linear
 * exchange. Waiting for the requests one after the other ends at the same
 * simulated time (the last completion) in linear time. */
int ctsim_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = MPI_SUCCESS, failed = 0;
    for (int k = 0; k < count; k++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
        int krc = PMPI_Wait(&reqs[k], st);
        if (krc != MPI_SUCCESS) {
            failed = 1;
            rc = krc;
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = krc;
        }
    }
    return failed && statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : rc;
}

/* ------------------------------------------------------------------ */
/* Emulated intercommunicators                                         */
/* ------------------------------------------------------------------ */

typedef struct inter {
    MPI_Comm comm;  /* the handle: both groups, the low group first */
    MPI_Comm local; /* this rank's group, by rank in it */
    MPI_Comm coll;  /* private duplicate of comm for the emulated collectives */
    int local_size, remote_size;
    int local_off, remote_off; /* first rank of each group in comm */
    int low;                   /* this rank's group is the low one */
    struct inter *next;
} inter;

static inter *inters;

static inter *find(MPI_Comm c)
{
    for (inter *i = inters; i != NULL && c != MPI_COMM_NULL; i = i->next)
        if (i->comm == c)
            return i;
    return NULL;
}

static int refuse(const char *call)
{
    fprintf(stderr, "coltune (SMPI build): %s on an intercommunicator is not emulated "
            "(SimGrid SMPI has no intercommunicators; see smpi/compat.h)\n", call);
    return MPI_ERR_COMM;
}

/* Records comm (over both groups, low group first) as an intercommunicator
 * whose local group has lsize ranks. Collective over comm. */
static int add_inter(MPI_Comm comm, int lsize, int rsize, int low)
{
    int rc;
    inter *i = calloc(1, sizeof *i);
    if (i == NULL)
        return MPI_ERR_NO_MEM;
    i->comm = comm;
    i->local = i->coll = MPI_COMM_NULL;
    i->local_size = lsize;
    i->remote_size = rsize;
    i->low = low;
    i->local_off = low ? 0 : rsize;
    i->remote_off = low ? lsize : 0;
    CALL(PMPI_Comm_split(comm, low ? 0 : 1, 0, &i->local));
    CALL(PMPI_Comm_dup(comm, &i->coll));
    i->next = inters;
    inters = i;
    return MPI_SUCCESS;
out:
    if (i->local != MPI_COMM_NULL)
        PMPI_Comm_free(&i->local);
    free(i);
    return rc;
}

int ctsim_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                           int remote_leader, int tag, MPI_Comm *newintercomm)
{
    int rc, lrank, lsize, me, hdr[2], rhdr[2] = {0, 0};
    int *lw = NULL, *rw = NULL, *all = NULL;
    MPI_Group world = MPI_GROUP_NULL, both = MPI_GROUP_NULL;
    *newintercomm = MPI_COMM_NULL;
    if (find(local_comm) != NULL)
        return refuse("MPI_Intercomm_create with an intercommunicator as local_comm");
    CALL(PMPI_Comm_rank(local_comm, &lrank));
    CALL(PMPI_Comm_size(local_comm, &lsize));
    CALL(PMPI_Comm_rank(MPI_COMM_WORLD, &me));
    rc = MPI_ERR_NO_MEM;
    if ((lw = malloc((size_t)lsize * sizeof *lw)) == NULL)
        goto out;
    /* The local group's world ranks, in local rank order; the leaders swap
     * group sizes and leader ranks, then the lists. */
    CALL(PMPI_Allgather(&me, 1, MPI_INT, lw, 1, MPI_INT, local_comm));
    if (lrank == local_leader) {
        hdr[0] = lsize;
        hdr[1] = me;
        CALL(ctsim_Sendrecv(hdr, 2, MPI_INT, remote_leader, tag, rhdr, 2, MPI_INT,
                            remote_leader, tag, peer_comm, MPI_STATUS_IGNORE));
    }
    CALL(PMPI_Bcast(rhdr, 2, MPI_INT, local_leader, local_comm));
    rc = MPI_ERR_NO_MEM;
    if ((rw = malloc((size_t)rhdr[0] * sizeof *rw + 1)) == NULL ||
        (all = malloc((size_t)(lsize + rhdr[0]) * sizeof *all)) == NULL)
        goto out;
    if (lrank == local_leader)
        CALL(ctsim_Sendrecv(lw, lsize, MPI_INT, remote_leader, tag, rw, rhdr[0], MPI_INT,
                            remote_leader, tag, peer_comm, MPI_STATUS_IGNORE));
    CALL(PMPI_Bcast(rw, rhdr[0], MPI_INT, local_leader, local_comm));
    /* The group whose leader has the lower world rank comes first. */
    int low = lw[local_leader] < rhdr[1];
    memcpy(all + (low ? 0 : rhdr[0]), lw, (size_t)lsize * sizeof *all);
    memcpy(all + (low ? lsize : 0), rw, (size_t)rhdr[0] * sizeof *all);
    CALL(PMPI_Comm_group(MPI_COMM_WORLD, &world));
    CALL(PMPI_Group_incl(world, lsize + rhdr[0], all, &both));
    CALL(PMPI_Comm_create_group(MPI_COMM_WORLD, both, tag, newintercomm));
    rc = add_inter(*newintercomm, lsize, rhdr[0], low);
    if (rc != MPI_SUCCESS)
        PMPI_Comm_free(newintercomm);
out:
    if (both != MPI_GROUP_NULL)
        PMPI_Group_free(&both);
    if (world != MPI_GROUP_NULL)
        PMPI_Group_free(&world);
    free(lw);
    free(rw);
    free(all);
    return rc;
}

int ctsim_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    int rc, P, urank, *highs = NULL;
    inter *i = find(intercomm);
    if (i == NULL)
        return MPI_ERR_COMM;
    CALL(PMPI_Comm_size(intercomm, &P));
    CALL(PMPI_Comm_rank(intercomm, &urank));
    rc = MPI_ERR_NO_MEM;
    if ((highs = malloc((size_t)P * sizeof *highs)) == NULL)
        goto out;
    CALL(PMPI_Allgather(&high, 1, MPI_INT, highs, 1, MPI_INT, i->coll));
    /* MPI: the group that passed high = 0 comes first; equal flags leave the
     * order to the implementation (here: the low group first). The low group
     * holds rank 0, the high group rank P - 1. */
    int other = i->low ? highs[P - 1] : highs[0];
    int first = high != other ? !high : i->low;
    CALL(PMPI_Comm_split(intercomm, 0, (first ? 0 : P) + urank, newintracomm));
out:
    free(highs);
    return rc;
}

int ctsim_Comm_remote_size(MPI_Comm comm, int *size)
{
    inter *i = find(comm);
    if (i == NULL)
        return MPI_ERR_COMM; /* an intra-communicator has no remote group */
    *size = i->remote_size;
    return MPI_SUCCESS;
}

int ctsim_Comm_test_inter(MPI_Comm comm, int *flag)
{
    if (find(comm) != NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Comm_test_inter(comm, flag);
}

int ctsim_Comm_size(MPI_Comm comm, int *size)
{
    inter *i = find(comm);
    if (i == NULL)
        return PMPI_Comm_size(comm, size);
    *size = i->local_size;
    return MPI_SUCCESS;
}

int ctsim_Comm_rank(MPI_Comm comm, int *rank)
{
    inter *i = find(comm);
    int rc = PMPI_Comm_rank(comm, rank);
    if (i != NULL && rc == MPI_SUCCESS)
        *rank -= i->local_off;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Distributed graph topologies                                        */
/* ------------------------------------------------------------------ */

/* A communicator made by MPI_Dist_graph_create_adjacent: its neighbours as
 * given (MPI_Dist_graph_neighbors returns them in that order), and a
 * private duplicate for the native neighbourhood collectives. */
typedef struct graph {
    MPI_Comm comm, coll;
    int indegree, outdegree, weighted;
    int *lists; /* sources, destinations, then their weights if weighted */
    struct graph *next;
} graph;

static graph *graphs;

static graph *find_graph(MPI_Comm c)
{
    for (graph *g = graphs; g != NULL && c != MPI_COMM_NULL; g = g->next)
        if (g->comm == c)
            return g;
    return NULL;
}

static void copy_ints(int *to, const int *from, int n)
{
    if (n > 0)
        memcpy(to, from, (size_t)n * sizeof *to);
}

/* Records comm as a graph communicator (collective over comm: the private
 * duplicate). */
static int add_graph(MPI_Comm comm, int indegree, const int *sources, const int *sw,
                     int outdegree, const int *dests, const int *dw, int weighted)
{
    int rc = MPI_SUCCESS;
    const size_t n = (size_t)(indegree + outdegree) * (weighted ? 2 : 1);
    graph *g = calloc(1, sizeof *g);
    if (g == NULL || (g->lists = malloc((n ? n : 1) * sizeof(int))) == NULL) {
        free(g);
        return MPI_ERR_NO_MEM;
    }
    g->comm = comm;
    g->indegree = indegree;
    g->outdegree = outdegree;
    g->weighted = weighted;
    copy_ints(g->lists, sources, indegree);
    copy_ints(g->lists + indegree, dests, outdegree);
    if (weighted) {
        copy_ints(g->lists + indegree + outdegree, sw, indegree);
        copy_ints(g->lists + 2 * indegree + outdegree, dw, outdegree);
    }
    CALL(PMPI_Comm_dup(comm, &g->coll));
    g->next = graphs;
    graphs = g;
    return MPI_SUCCESS;
out:
    free(g->lists);
    free(g);
    return rc;
}

/* Unlinks and frees comm's graph, if it has one. */
static void drop_graph(MPI_Comm comm)
{
    graph **link = &graphs;
    while (*link != NULL && (*link)->comm != comm)
        link = &(*link)->next;
    if (*link == NULL)
        return;
    graph *g = *link;
    *link = g->next;
    if (PMPI_Comm_free(&g->coll) != MPI_SUCCESS)
        fprintf(stderr, "coltune (SMPI build): MPI_Comm_free of a graph's duplicate failed\n");
    free(g->lists);
    free(g);
}

int ctsim_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                     const int sourceweights[], int outdegree,
                                     const int destinations[], const int destweights[],
                                     MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder; /* ranks are kept, as reorder allows */
    const int weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    int rc;
    if (find(comm_old) != NULL)
        return refuse("MPI_Dist_graph_create_adjacent");
    CALL(PMPI_Comm_dup(comm_old, comm_dist_graph));
    rc = add_graph(*comm_dist_graph, indegree, sources, sourceweights, outdegree, destinations,
                   destweights, weighted);
    if (rc != MPI_SUCCESS)
        PMPI_Comm_free(comm_dist_graph);
out:
    return rc;
}

int ctsim_Topo_test(MPI_Comm comm, int *status)
{
    *status = find_graph(comm) != NULL ? MPI_DIST_GRAPH : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int ctsim_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                     int *weighted)
{
    const graph *g = find_graph(comm);
    if (g == NULL)
        return MPI_ERR_TOPOLOGY;
    *indegree = g->indegree;
    *outdegree = g->outdegree;
    *weighted = g->weighted;
    return MPI_SUCCESS;
}

int ctsim_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                               int sourceweights[], int maxoutdegree, int destinations[],
                               int destweights[])
{
    const graph *g = find_graph(comm);
    if (g == NULL)
        return MPI_ERR_TOPOLOGY;
    const int in = maxindegree < g->indegree ? maxindegree : g->indegree;
    const int out = maxoutdegree < g->outdegree ? maxoutdegree : g->outdegree;
    copy_ints(sources, g->lists, in);
    copy_ints(destinations, g->lists + g->indegree, out);
    if (g->weighted && sourceweights != MPI_UNWEIGHTED)
        copy_ints(sourceweights, g->lists + g->indegree + g->outdegree, in);
    if (g->weighted && destweights != MPI_UNWEIGHTED)
        copy_ints(destweights, g->lists + 2 * g->indegree + g->outdegree, out);
    return MPI_SUCCESS;
}

/* The native neighbourhood all-to-all: a receive from each source and a
 * send to each destination, then one wait, as the MPI libraries' basic
 * implementations do, on the graph's private duplicate; each block's
 * count and its offset in bytes from the buffer. */
static int neighbor_exchange(const graph *g, const void *sendbuf, const int *scounts,
                             const MPI_Aint *soffs, MPI_Datatype sendtype, void *recvbuf,
                             const int *rcounts, const MPI_Aint *roffs, MPI_Datatype recvtype)
{
    int rc = MPI_SUCCESS, n = 0;
    MPI_Request *reqs = malloc(((size_t)(g->indegree + g->outdegree) + 1) * sizeof *reqs);
    if (reqs == NULL)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < g->indegree; j++, n++)
        CALL(PMPI_Irecv((char *)recvbuf + roffs[j], rcounts[j], recvtype, g->lists[j], TAG_NBR,
                        g->coll, &reqs[n]));
    for (int k = 0; k < g->outdegree; k++, n++)
        CALL(PMPI_Isend((const char *)sendbuf + soffs[k], scounts[k], sendtype,
                        g->lists[g->indegree + k], TAG_NBR, g->coll, &reqs[n]));
out:
    { /* a failed post: what was posted still completes before reqs goes */
        const int wrc = ctsim_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        rc = rc == MPI_SUCCESS ? wrc : rc;
    }
    free(reqs);
    return rc;
}

/* Counts and byte offsets of a call's blocks: v's (counts and displs in
 * extents), or count each, one after the other. */
static int blocks(int n, const int *counts, const int *displs, int count, MPI_Datatype type,
                  int **c, MPI_Aint **off)
{
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(type, &lb, &extent);
    *c = malloc(((size_t)n + 1) * sizeof **c);
    *off = malloc(((size_t)n + 1) * sizeof **off);
    if (*c == NULL || *off == NULL)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < n && rc == MPI_SUCCESS; j++) {
        (*c)[j] = counts != NULL ? counts[j] : count;
        (*off)[j] = (displs != NULL ? (MPI_Aint)displs[j] : (MPI_Aint)j * count) * extent;
    }
    return rc;
}

static int neighbor_any(const void *sendbuf, const int *sendcounts, const int *sdispls,
                        int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int *recvcounts, const int *rdispls, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    const graph *g = find_graph(comm);
    int rc, *sc = NULL, *rcn = NULL;
    MPI_Aint *so = NULL, *ro = NULL;
    if (g == NULL)
        return MPI_ERR_TOPOLOGY;
    CALL(blocks(g->outdegree, sendcounts, sdispls, sendcount, sendtype, &sc, &so));
    CALL(blocks(g->indegree, recvcounts, rdispls, recvcount, recvtype, &rcn, &ro));
    rc = neighbor_exchange(g, sendbuf, sc, so, sendtype, recvbuf, rcn, ro, recvtype);
out:
    free(sc);
    free(so);
    free(rcn);
    free(ro);
    return rc;
}

int ctsim_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_any(sendbuf, sendcounts, sdispls, 0, sendtype, recvbuf, recvcounts,
                        rdispls, 0, recvtype, comm);
}

int ctsim_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor_any(sendbuf, NULL, NULL, sendcount, sendtype, recvbuf, NULL, NULL,
                        recvcount, recvtype, comm);
}

/* A duplicate keeps the topology (MPI-4.0 section 7.4.2). */
int ctsim_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    inter *i = find(comm);
    const graph *g = find_graph(comm);
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (i != NULL)
        rc = add_inter(*newcomm, i->local_size, i->remote_size, i->low);
    else if (g != NULL)
        rc = add_graph(*newcomm, g->indegree, g->lists, g->lists + g->indegree + g->outdegree,
                       g->outdegree, g->lists + g->indegree,
                       g->lists + 2 * g->indegree + g->outdegree, g->weighted);
    if (rc != MPI_SUCCESS)
        PMPI_Comm_free(newcomm);
    return rc;
}

int ctsim_Comm_free(MPI_Comm *comm)
{
    inter **link = &inters;
    while (*link != NULL && (*link)->comm != *comm)
        link = &(*link)->next;
    if (*link != NULL) {
        /* Unlinked first: freeing comm runs attribute delete callbacks,
         * which may free other communicators through here. */
        inter *i = *link;
        *link = i->next;
        PMPI_Comm_free(&i->local);
        PMPI_Comm_free(&i->coll);
        free(i);
    }
    drop_graph(*comm);
    return PMPI_Comm_free(comm);
}

int ctsim_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Comm_split");
    return PMPI_Comm_split(comm, color, key, newcomm);
}

int ctsim_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Comm_split_type");
    return PMPI_Comm_split_type(comm, type, key, info, newcomm);
}

/* ------------------------------------------------------------------ */
/* Point-to-point: the remote group's rank r is rank remote_off + r    */
/* ------------------------------------------------------------------ */

static int peer(MPI_Comm comm, int r)
{
    inter *i = find(comm);
    return i != NULL && r >= 0 ? r + i->remote_off : r; /* ANY_SOURCE, PROC_NULL < 0 */
}

static void local_view(MPI_Comm comm, MPI_Status *st)
{
    inter *i = find(comm);
    if (i != NULL && st != MPI_STATUS_IGNORE && st->MPI_SOURCE >= 0)
        st->MPI_SOURCE -= i->remote_off;
}

int ctsim_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return PMPI_Send(buf, count, type, peer(comm, dest), tag, comm);
}

int ctsim_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    return PMPI_Ssend(buf, count, type, peer(comm, dest), tag, comm);
}

int ctsim_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    return PMPI_Isend(buf, count, type, peer(comm, dest), tag, comm, req);
}

int ctsim_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm, MPI_Request *req)
{
    return PMPI_Issend(buf, count, type, peer(comm, dest), tag, comm, req);
}

int ctsim_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Status *status)
{
    int rc = PMPI_Recv(buf, count, type, peer(comm, source), tag, comm, status);
    local_view(comm, status);
    return rc;
}

int ctsim_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    return PMPI_Irecv(buf, count, type, peer(comm, source), tag, comm, req);
}

int ctsim_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                   int recvtag, MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, peer(comm, dest), sendtag, recvbuf,
                           recvcount, recvtype, peer(comm, source), recvtag, comm, status);
    local_view(comm, status);
    return rc;
}

int ctsim_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    int rc = PMPI_Probe(peer(comm, source), tag, comm, status);
    local_view(comm, status);
    return rc;
}

int ctsim_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    int rc = PMPI_Iprobe(peer(comm, source), tag, comm, flag, status);
    local_view(comm, status);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Matched probes                                                      */
/* ------------------------------------------------------------------ */

/* A matched message: where the probe found it. MPI_Message is a pointer in
 * SMPI; MPI_MESSAGE_NO_PROC (NULL) stands for a probe of MPI_PROC_NULL. */
typedef struct matched {
    int source, tag; /* as the caller sees them (local view) */
    MPI_Comm comm;
} matched;

static int match(const MPI_Status *st, MPI_Comm comm, MPI_Message *message)
{
    matched *m;
    if (st->MPI_SOURCE == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    if ((m = malloc(sizeof *m)) == NULL)
        return MPI_ERR_NO_MEM;
    m->source = st->MPI_SOURCE;
    m->tag = st->MPI_TAG;
    m->comm = comm;
    *message = m;
    return MPI_SUCCESS;
}

int ctsim_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    MPI_Status st;
    int rc = ctsim_Probe(source, tag, comm, &st);
    if (rc == MPI_SUCCESS)
        rc = match(&st, comm, message);
    if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int ctsim_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                  MPI_Status *status)
{
    MPI_Status st;
    int rc = ctsim_Iprobe(source, tag, comm, flag, &st);
    if (rc == MPI_SUCCESS && *flag)
        rc = match(&st, comm, message);
    if (rc == MPI_SUCCESS && *flag && status != MPI_STATUS_IGNORE)
        *status = st;
    return rc;
}

int ctsim_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                 MPI_Request *request)
{
    matched *m = *message;
    int rc;
    if (m == NULL) /* MPI_MESSAGE_NO_PROC */
        return PMPI_Irecv(buf, count, type, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
    rc = ctsim_Irecv(buf, count, type, m->source, m->tag, m->comm, request);
    free(m);
    *message = MPI_MESSAGE_NULL;
    return rc;
}

int ctsim_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                MPI_Status *status)
{
    matched *m = *message;
    int rc;
    if (m == NULL) /* MPI_MESSAGE_NO_PROC */
        return PMPI_Recv(buf, count, type, MPI_PROC_NULL, 0, MPI_COMM_SELF, status);
    rc = ctsim_Recv(buf, count, type, m->source, m->tag, m->comm, status);
    free(m);
    *message = MPI_MESSAGE_NULL;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

int ctsim_Barrier(MPI_Comm comm)
{
    inter *i = find(comm);
    return PMPI_Barrier(i != NULL ? i->coll : comm);
}

/* Intercommunicator Allreduce: each group receives the reduction of the
 * other group's contributions (local reduce, roots swap, local bcast). */
int ctsim_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
    int rc, lrank;
    MPI_Aint lb, extent;
    char *tmp = NULL;
    inter *i = find(comm);
    if (i == NULL)
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_ERR_ARG; /* not allowed on intercommunicators */
    CALL(PMPI_Type_get_extent(type, &lb, &extent));
    CALL(PMPI_Comm_rank(i->local, &lrank));
    rc = MPI_ERR_NO_MEM;
    if ((tmp = malloc((size_t)count * (size_t)extent + 1)) == NULL)
        goto out;
    CALL(PMPI_Reduce(sendbuf, tmp - lb, count, type, op, 0, i->local));
    if (lrank == 0)
        CALL(PMPI_Sendrecv(tmp - lb, count, type, i->remote_off, TAG_ROOTS, recvbuf, count, type,
                           i->remote_off, TAG_ROOTS, i->coll, MPI_STATUS_IGNORE));
    CALL(PMPI_Bcast(recvbuf, count, type, 0, i->local));
out:
    free(tmp);
    return rc;
}

/*
 * The root gathering algorithm of MPICH (allgather_inter_local_gather_
 * remote_bcast.c, allgatherv_inter_remote_gather_local_bcast.c; [Kang2019]
 * section 3.1): each group gathers its blocks at its root (as bytes), then
 * the low group's root sends them to the high group's root, which
 * broadcasts them in its group, then the same the other way. The stages
 * run one after the other, as in MPICH.
 */
typedef struct rootgather {
    inter *i;
    int lrank;
    const char *gathered; /* this group's blocks at its root */
    int gathered_bytes;
    void *recvbuf; /* the remote group's blocks, as count x type */
    int count;
    MPI_Datatype type;
} rootgather;

static int send_to_remote(const rootgather *g)
{
    if (g->lrank != 0)
        return MPI_SUCCESS;
    return PMPI_Send(g->gathered, g->gathered_bytes, MPI_BYTE, g->i->remote_off, TAG_ROOTS,
                     g->i->coll);
}

static int recv_from_remote(const rootgather *g)
{
    int rc = MPI_SUCCESS;
    if (g->lrank == 0)
        rc = PMPI_Recv(g->recvbuf, g->count, g->type, g->i->remote_off, TAG_ROOTS, g->i->coll,
                       MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS ? rc : PMPI_Bcast(g->recvbuf, g->count, g->type, 0, g->i->local);
}

static int exchange(const rootgather *g)
{
    int rc;
    if (g->i->low) {
        CALL(send_to_remote(g));
        CALL(recv_from_remote(g));
    } else {
        CALL(recv_from_remote(g));
        CALL(send_to_remote(g));
    }
out:
    return rc;
}

int ctsim_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc, ssize;
    char *tmp = NULL;
    inter *i = find(comm);
    if (i == NULL)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_ERR_ARG;
    rootgather g = {.i = i, .recvbuf = recvbuf, .count = recvcount * i->remote_size,
                    .type = recvtype};
    CALL(PMPI_Comm_rank(i->local, &g.lrank));
    CALL(PMPI_Type_size(sendtype, &ssize));
    int nbytes = sendcount * ssize;
    g.gathered_bytes = nbytes * i->local_size;
    rc = MPI_ERR_NO_MEM;
    if (g.lrank == 0 && (tmp = malloc((size_t)g.gathered_bytes + 1)) == NULL)
        goto out;
    g.gathered = tmp;
    CALL(PMPI_Gather(sendbuf, sendcount, sendtype, tmp, nbytes, MPI_BYTE, 0, i->local));
    CALL(exchange(&g));
out:
    free(tmp);
    return rc;
}

int ctsim_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    int rc, ssize, nbytes, *counts = NULL, *offs = NULL;
    char *tmp = NULL;
    MPI_Datatype blocks = MPI_DATATYPE_NULL;
    inter *i = find(comm);
    if (i == NULL)
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    if (sendbuf == MPI_IN_PLACE)
        return MPI_ERR_ARG;
    rootgather g = {.i = i, .recvbuf = recvbuf, .count = 1};
    CALL(PMPI_Comm_rank(i->local, &g.lrank));
    CALL(PMPI_Type_size(sendtype, &ssize));
    nbytes = sendcount * ssize;
    rc = MPI_ERR_NO_MEM;
    if ((counts = malloc((size_t)i->local_size * sizeof *counts)) == NULL ||
        (offs = malloc((size_t)i->local_size * sizeof *offs)) == NULL)
        goto out;
    CALL(PMPI_Gather(&nbytes, 1, MPI_INT, counts, 1, MPI_INT, 0, i->local));
    g.gathered_bytes = 0;
    for (int r = 0; g.lrank == 0 && r < i->local_size; r++) {
        offs[r] = g.gathered_bytes;
        g.gathered_bytes += counts[r];
    }
    rc = MPI_ERR_NO_MEM;
    if (g.lrank == 0 && (tmp = malloc((size_t)g.gathered_bytes + 1)) == NULL)
        goto out;
    g.gathered = tmp;
    CALL(PMPI_Gatherv(sendbuf, sendcount, sendtype, tmp, counts, offs, MPI_BYTE, 0, i->local));
    /* The remote group's blocks land at displs[] through one indexed type. */
    CALL(PMPI_Type_indexed(i->remote_size, recvcounts, displs, recvtype, &blocks));
    CALL(PMPI_Type_commit(&blocks));
    g.type = blocks;
    CALL(exchange(&g));
out:
    if (blocks != MPI_DATATYPE_NULL)
        PMPI_Type_free(&blocks);
    free(tmp);
    free(counts);
    free(offs);
    return rc;
}

int ctsim_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Bcast");
    return PMPI_Bcast(buf, count, type, root, comm);
}

int ctsim_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Reduce");
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

int ctsim_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Gather");
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

/* COLTUNE_SMPI_SKIP_NATIVE=1 (set by coltune-sim, never by default): the
 * native MPI_Alltoallv (and MPI_Alltoall) returns at once without moving data. coltune-bench
 * always times the native routine beside the algorithms it is given;
 * coltune-sim measures the natives in runs of their own and drops those
 * rows, so in its algorithm runs that call would only cost wall time (SMPI's
 * linear exchanges take wall time cubic in P: hours at P = 1024). */
static int skip_native(void)
{
    static int skip = -1;
    if (skip < 0) {
        const char *v = getenv("COLTUNE_SMPI_SKIP_NATIVE");
        skip = v != NULL && strcmp(v, "1") == 0;
    }
    return skip;
}

int ctsim_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Alltoall");
    if (skip_native())
        return MPI_SUCCESS;
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int ctsim_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (find(comm) != NULL)
        return refuse("MPI_Alltoallv");
    if (skip_native())
        return MPI_SUCCESS;
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
}
