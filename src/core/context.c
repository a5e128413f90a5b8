/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * context.c - per-communicator contexts and node topology.
 */
#include "core/context.h"
#include "core/device.h"
#include "core/log.h"
#include "core/state.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Topology                                                            */
/* ------------------------------------------------------------------ */

void ct_topo_free(ct_topo *topo)
{
    free(topo->node_of);
    free(topo->local_of);
    free(topo->node_size);
    memset(topo, 0, sizeof *topo);
}

/*
 * node_key[r] in [0, P) names the node of rank r (ranks with equal keys share
 * a node). Nodes are numbered in order of their lowest rank.
 */
static int topo_from_map(int P, int rank, const int *node_key, ct_topo *topo)
{
    int rc = MPI_SUCCESS;
    int *index_of_key = NULL;
    memset(topo, 0, sizeof *topo);
    CT_ALLOC(index_of_key, (size_t)P * sizeof(int));
    CT_ALLOC(topo->node_of, (size_t)P * sizeof(int));
    CT_ALLOC(topo->local_of, (size_t)P * sizeof(int));
    CT_ALLOC(topo->node_size, (size_t)P * sizeof(int)); /* at most P nodes */
    for (int r = 0; r < P; r++)
        index_of_key[r] = -1;
    for (int r = 0; r < P; r++) {
        int k = node_key[r];
        if (index_of_key[k] < 0) {
            index_of_key[k] = topo->N;
            topo->node_size[topo->N++] = 0;
        }
        int n = index_of_key[k];
        topo->node_of[r] = n;
        topo->local_of[r] = topo->node_size[n]++;
    }
    topo->consecutive = 1;
    for (int r = 1; r < P; r++)
        if (topo->node_of[r] != topo->node_of[r - 1] &&
            topo->node_of[r] != topo->node_of[r - 1] + 1)
            topo->consecutive = 0;
    topo->uniform = 1;
    for (int n = 0; n < topo->N; n++) {
        if (topo->node_size[n] > topo->Q)
            topo->Q = topo->node_size[n];
        if (topo->node_size[n] != topo->node_size[0])
            topo->uniform = 0;
    }
    topo->node = topo->node_of[rank];
    topo->local_rank = topo->local_of[rank];
out:
    free(index_of_key);
    if (rc != MPI_SUCCESS)
        ct_topo_free(topo);
    return rc;
}

/* Node keys from COLTUNE_PPN: blocks of ppn consecutive ranks, or (cyclic)
 * rank r on node r mod ceil(P / ppn), as a round-robin launcher places them. */
static void emulated_keys(int P, int ppn, int cyclic, int *key)
{
    int nodes = (P + ppn - 1) / ppn;
    for (int r = 0; r < P; r++)
        key[r] = cyclic ? r % nodes : r / ppn;
}

int ct_topo_emulate(int P, int ppn, int cyclic, ct_topo *topo)
{
    int rc = MPI_SUCCESS;
    int *key = NULL;
    memset(topo, 0, sizeof *topo);
    CT_ALLOC(key, (size_t)P * sizeof(int));
    emulated_keys(P, ppn, cyclic, key);
    CT_CALL(topo_from_map(P, 0, key, topo));
    topo->emulated = 1;
out:
    free(key);
    return rc;
}

/* ------------------------------------------------------------------ */
/* A communicator's topology                                           */
/* ------------------------------------------------------------------ */

/*
 * What each rank tells the others when a context is made, in one allgather
 * (topo_compute): its world's number and its node's leader (ct_state.node,
 * -1 until known), whether it has a GPU runtime, its MPI_COMM_WORLD rank, and
 * a number it drew, which names its world once some context of a
 * communicator with MPI_COMM_WORLD's group has been made (learn_node).
 */
enum { ID_WORLD0, ID_WORLD1, ID_LEADER, ID_GPU, ID_WRANK, ID_DRAW0, ID_DRAW1, ID_INTS };

/* A number to tell one world from another (the processes of an
 * MPI_Comm_spawn'ed job): the clock in nanoseconds, the process id and an
 * address, mixed (SplitMix64's finaliser). */
static void draw_number(int out[2])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    x ^= (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&ts;
    x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9u;
    x = (x ^ x >> 27) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    out[0] = (int)(x & 0x7fffffff);
    out[1] = (int)(x >> 32 & 0x7fffffff);
}

/* This rank's record for the allgather. A process without MPI_COMM_WORLD
 * (MPI-4 sessions, no MPI_Init) has no world rank (-1) and learns nothing. */
static int my_ids(int gpu, int *id)
{
    ct_state *st = ct_state_get();
    int rc = MPI_SUCCESS, world = 0;
    id[ID_WRANK] = -1;
    CT_CALL(PMPI_Initialized(&world));
    if (world)
        CT_CALL(PMPI_Comm_rank(MPI_COMM_WORLD, &id[ID_WRANK]));
    ct_state_lock(st);
    if (!st->node.drawn) {
        draw_number(st->node.draw);
        st->node.drawn = 1;
    }
    id[ID_WORLD0] = st->node.world[0];
    id[ID_WORLD1] = st->node.world[1];
    id[ID_LEADER] = st->node.leader;
    id[ID_DRAW0] = st->node.draw[0];
    id[ID_DRAW1] = st->node.draw[1];
    ct_state_unlock(st);
    id[ID_GPU] = gpu != 0;
out:
    return rc;
}

/* Whether every rank's node is known and named in one world's numbers. */
static int nodes_known(int P, const int *ids)
{
    for (int r = 0; r < P; r++) {
        const int *id = ids + (size_t)r * ID_INTS;
        if (id[ID_LEADER] < 0 || id[ID_WORLD0] != ids[ID_WORLD0] ||
            id[ID_WORLD1] != ids[ID_WORLD1])
            return 0;
    }
    return 1;
}

static int by_leader_then_rank(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* key[r]: the lowest rank of the communicator on r's node, from the nodes'
 * leaders (world ranks, in any range): sorted by (leader, rank), each run of
 * one leader starts with that lowest rank. */
static int keys_from_leaders(int P, const int *ids, int *key)
{
    int rc = MPI_SUCCESS;
    int(*pair)[2] = NULL;
    CT_ALLOC(pair, (size_t)P * sizeof *pair);
    for (int r = 0; r < P; r++) {
        pair[r][0] = ids[(size_t)r * ID_INTS + ID_LEADER];
        pair[r][1] = r;
    }
    qsort(pair, (size_t)P, sizeof *pair, by_leader_then_rank);
    int first = 0;
    for (int i = 0; i < P; i++) {
        if (pair[i][0] != pair[first][0])
            first = i;
        key[pair[i][1]] = pair[first][1];
    }
out:
    free(pair);
    return rc;
}

/* The nodes asked of the MPI library on comm itself (collective): a node's
 * key is its lowest rank. */
static int keys_from_split(MPI_Comm comm, int P, int rank, int *key, int *shared)
{
    int rc = MPI_SUCCESS, shm_size, leader;
    MPI_Comm shm = MPI_COMM_NULL;
    CT_CALL(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
    CT_CALL(PMPI_Comm_size(shm, &shm_size));
    /* Shared-memory domains partition comm: one holds all of comm at one
     * rank exactly when it does at all. */
    *shared = shm_size == P;
    CT_CALL(PMPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shm));
    CT_CALL(PMPI_Allgather(&leader, 1, MPI_INT, key, 1, MPI_INT, comm));
out:
    if (shm != MPI_COMM_NULL)
        PMPI_Comm_free(&shm);
    return rc;
}

/*
 * After the MPI library's split of a communicator whose group is
 * MPI_COMM_WORLD's (MPI_Comm_compare, local: then every rank of it is a
 * process of this world and finds the same), this process learns its node
 * for every later context: the lowest world rank on its node, and the
 * number world rank 0 drew as its world's name. Nothing is collective here:
 * the allgather's records hold it all. Learning is only a saving: a failure
 * leaves the node unknown, and the context is made all the same.
 */
static void learn_node(MPI_Comm comm, int P, int rank, const int *ids, const int *key)
{
    ct_state *st = ct_state_get();
    int wsize, same = MPI_UNEQUAL;
    ct_state_lock(st);
    const int known = st->node.leader >= 0;
    ct_state_unlock(st);
    if (known || ids[(size_t)rank * ID_INTS + ID_WRANK] < 0) /* learnt, or no world */
        return;
    if (PMPI_Comm_size(MPI_COMM_WORLD, &wsize) != MPI_SUCCESS || P != wsize ||
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same) != MPI_SUCCESS || same == MPI_UNEQUAL)
        return; /* IDENT, CONGRUENT or SIMILAR: the world's group, in any order */
    int leader = -1, world[2] = {0, 0};
    for (int r = 0; r < P; r++) {
        const int *id = ids + (size_t)r * ID_INTS;
        if (key[r] == key[rank] && (leader < 0 || id[ID_WRANK] < leader))
            leader = id[ID_WRANK];
        if (id[ID_WRANK] == 0) {
            world[0] = id[ID_DRAW0];
            world[1] = id[ID_DRAW1];
        }
    }
    ct_state_lock(st);
    st->node.world[0] = world[0];
    st->node.world[1] = world[1];
    st->node.leader = leader;
    ct_state_unlock(st);
}

/*
 * Computes the topology of comm (size P, rank) into topo, and whether some
 * rank has a GPU runtime (gpu: this rank's answer); collective. One allgather
 * of each rank's node serves when every rank's is known (learn_node);
 * otherwise the MPI library is asked on comm (keys_from_split): in the first
 * contexts of a process, for a communicator holding processes of several
 * worlds, or where a process did not learn its node. Every rank sees the same
 * records, so all take the same way. The real shared-memory domains are found
 * even when COLTUNE_PPN emulates nodes: algorithms that share memory need
 * them. *gathered: the nodes came from the allgather alone.
 */
static int topo_compute(MPI_Comm comm, int ppn, int cyclic, int gpu, ct_topo *topo,
                        int *device_agree, int *gathered)
{
    int rc = MPI_SUCCESS, P, rank, shared = 1, mine[ID_INTS];
    int *key = NULL, *ids = NULL;
    CT_CALL(PMPI_Comm_size(comm, &P));
    CT_CALL(PMPI_Comm_rank(comm, &rank));
    CT_CALL(my_ids(gpu, mine));
    CT_ALLOC(key, (size_t)P * sizeof(int));
    CT_ALLOC(ids, (size_t)P * ID_INTS * sizeof(int));
    CT_CALL(PMPI_Allgather(mine, ID_INTS, MPI_INT, ids, ID_INTS, MPI_INT, comm));
    *device_agree = 0;
    for (int r = 0; r < P; r++)
        *device_agree |= ids[(size_t)r * ID_INTS + ID_GPU];
    *gathered = nodes_known(P, ids);
    if (*gathered) {
        CT_CALL(keys_from_leaders(P, ids, key));
        for (int r = 1; r < P; r++)
            shared &= key[r] == key[0];
    } else {
        CT_CALL(keys_from_split(comm, P, rank, key, &shared));
        learn_node(comm, P, rank, ids, key);
    }
    if (ppn > 0)
        emulated_keys(P, ppn, cyclic, key);
    CT_CALL(topo_from_map(P, rank, key, topo));
    topo->emulated = ppn > 0;
    topo->shared = shared;
out:
    free(ids);
    free(key);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Contexts                                                            */
/* ------------------------------------------------------------------ */

/* Forgets ctx as the last context looked up (see ct_state.last). */
static void forget_last(const ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    if (st->last.ctx == ctx) {
        st->last.comm = MPI_COMM_NULL;
        st->last.ctx = NULL;
    }
}

/* ------------------------------------------------------------------ */
/* Tags of nonblocking and persistent calls                            */
/* ------------------------------------------------------------------ */

#define HELD_BITS (8 * sizeof(unsigned long))

static int tag_held(const ct_ctx *ctx, int t)
{
    if (ctx->persistent_held == NULL)
        return 1;
    return (int)(__atomic_load_n(&ctx->persistent_held[t / HELD_BITS], __ATOMIC_ACQUIRE) >>
                 (t % HELD_BITS) & 1ul);
}

int ct_ctx_request_tag(ct_ctx *ctx, int persistent, int *tag)
{
    const int test = ct_settings_get()->test_tags;
    if (!persistent) {
        const unsigned nbc_span = test > 0 ? (unsigned)test : CT_TAG_NBC_SPAN;
        *tag = CT_TAG_NBC + (int)(ctx->nbc_calls++ % nbc_span);
        return MPI_SUCCESS;
    }
    const unsigned span = test > 0 ? (unsigned)test : CT_TAG_PERSISTENT_SPAN;
    if (ctx->persistent_calls == 0)
        ctx->persistent_held = calloc(CT_TAG_PERSISTENT_SPAN / HELD_BITS, sizeof(unsigned long));
    for (unsigned tries = 0; tries < span; tries++) {
        const uint64_t n = ctx->persistent_calls++;
        const int t = (int)(n % span);
        int held = 0;
        if (n >= span) { /* wrapped: a live request may hold it */
            held = tag_held(ctx, t);
            const int rc = PMPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_INT, MPI_MAX,
                                          ctx->decide_comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        if (!held) {
            if (ctx->persistent_held != NULL)
                __atomic_fetch_or(&ctx->persistent_held[t / HELD_BITS], 1ul << (t % HELD_BITS),
                                  __ATOMIC_ACQ_REL);
            *tag = CT_TAG_PERSISTENT + t;
            return MPI_SUCCESS;
        }
    }
    if (ctx->decide_rank == 0) {
        ct_log_once("%s#%d: every one of coltune's %u tags of persistent calls is held by a "
                    "live request: new persistent calls on it go to the MPI library",
                    ctx->name, ctx->serial, span);
        if (ct_settings_get()->verbose)
            ct_log("%s#%d: persistent call %llu: every tag held, to the MPI library",
                   ctx->name, ctx->serial, (unsigned long long)ctx->persistent_calls);
    }
    return CT_NO_TAG;
}

void ct_ctx_tag_release(ct_ctx *ctx, int tag)
{
    const int t = tag - CT_TAG_PERSISTENT;
    if (t < 0 || t >= CT_TAG_PERSISTENT_SPAN || ctx->persistent_held == NULL)
        return; /* a nonblocking call's */
    __atomic_fetch_and(&ctx->persistent_held[t / HELD_BITS], ~(1ul << (t % HELD_BITS)),
                       __ATOMIC_ACQ_REL);
}

/* The rest of ctx_free: what pending requests may still use. */
static void ctx_free_comms(ct_ctx *ctx)
{
    if (ctx->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->comm);
    if (ctx->local_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->local_comm);
    if (ctx->union_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->union_comm);
    ct_topo_free(&ctx->topo);
    ct_ctx_drop_buffers(ctx);
    free(ctx->persistent_held);
    free(ctx);
}

static void ctx_free(ct_ctx *ctx)
{
    if (ctx == NULL)
        return;
    forget_last(ctx);
    ct_ctx_ext_release(ctx); /* collective: windows, node comms */
    ctx_free_comms(ctx);
}

/* Does a request of some rank hold ctx, whose communicator is being freed?
 * Asked only where coltune made requests on it (its counts are the same on
 * every rank), collectively: every rank is in MPI_Comm_free. */
static int held_anywhere(ct_ctx *ctx, int *held)
{
    ct_state *st = ct_state_get();
    *held = 0;
    if (ctx->nbc_calls == 0 && ctx->persistent_calls == 0)
        return MPI_SUCCESS;
    ct_state_lock(st);
    *held = ctx->holds > 0;
    ct_state_unlock(st);
    return PMPI_Allreduce(MPI_IN_PLACE, held, 1, MPI_INT, MPI_MAX, ctx->decide_comm);
}

/*
 * The communicator is being freed. What its ranks release together (the
 * modules' objects: windows, node communicators) goes now, at the same call
 * on every rank, unless a request of some rank still holds the context:
 * MPI lets an inactive persistent request be started after its
 * communicator was freed, and its schedule uses those objects. Then every
 * rank keeps them (their release is collective) until MPI_Finalize
 * (ct_ctx_release_predefined). A context that requests hold keeps its
 * private communicators for them, and the last of them frees it
 * (ct_ctx_unhold), unless it is kept.
 */
static int ctx_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    ct_ctx *ctx = attr;
    ct_state *st = ct_state_get();
    int anywhere, rc;
    (void)comm;
    (void)keyval;
    (void)extra;
    forget_last(ctx);
    rc = held_anywhere(ctx, &anywhere);
    if (rc != MPI_SUCCESS)
        anywhere = 1; /* kept: a release that not every rank makes would hang */
    if (!anywhere)
        ct_ctx_ext_release(ctx);
    ct_state_lock(st);
    const int held = ctx->holds > 0;
    ctx->orphaned = held || anywhere;
    ctx->kept = anywhere;
    if (anywhere) {
        if (st->kept_last != NULL)
            st->kept_last->next_kept = ctx;
        else
            st->kept = ctx;
        st->kept_last = ctx;
    }
    ct_state_unlock(st);
    if (!held && !anywhere)
        ctx_free_comms(ctx);
    return rc;
}

void ct_ctx_hold(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    ctx->holds++;
    ct_state_unlock(st);
}

void ct_ctx_unhold(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    const int last = --ctx->holds == 0 && ctx->orphaned && !ctx->kept;
    ct_state_unlock(st);
    if (last)
        ctx_free_comms(ctx);
}

int ct_ctx_held(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    const int held = ctx->holds > 0;
    ct_state_unlock(st);
    return held;
}

int ct_ctx_orphaned(ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    const int orphaned = ctx->orphaned;
    ct_state_unlock(st);
    return orphaned;
}

/* The attribute keyval, created by the first call (the lock is taken only
 * then: every call comes here). The first call also decides whether the
 * last-context cache may be used (ct_state.last). */
static int keyval_get(int *keyval)
{
    ct_state *st = ct_state_get();
    int rc = MPI_SUCCESS, level = MPI_THREAD_MULTIPLE, kv;
    *keyval = __atomic_load_n(&st->keyval, __ATOMIC_ACQUIRE);
    if (*keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    ct_state_lock(st);
    kv = st->keyval;
    if (kv == MPI_KEYVAL_INVALID) {
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete_fn, &kv, NULL);
        if (rc == MPI_SUCCESS && PMPI_Query_thread(&level) == MPI_SUCCESS)
            st->last.usable = level < MPI_THREAD_MULTIPLE;
        __atomic_store_n(&st->keyval, kv, __ATOMIC_RELEASE);
    }
    *keyval = kv;
    ct_state_unlock(st);
    if (rc != MPI_SUCCESS)
        ct_log_mpi_error(rc, "MPI_Comm_create_keyval", __FILE__, __LINE__);
    return rc;
}

/*
 * The two intra-communicators of an intercommunicator context: union_comm
 * over both groups (MPI_Intercomm_merge), and local_comm over the local group
 * ordered by local rank. local_comm is split out of union_comm with a colour
 * both groups can compute without agreeing on anything first: the lowest
 * union rank of the *remote* group, which an allreduce across the
 * intercommunicator delivers (its result is the remote group's reduction).
 */
static int inter_comms(ct_ctx *ctx)
{
    int rc, union_rank, colour;
    CT_CALL(PMPI_Comm_remote_size(ctx->comm, &ctx->remote_size));
    CT_CALL(PMPI_Intercomm_merge(ctx->comm, 0, &ctx->union_comm));
    CT_CALL(PMPI_Comm_set_errhandler(ctx->union_comm, MPI_ERRORS_RETURN));
    CT_CALL(PMPI_Comm_rank(ctx->union_comm, &union_rank));
    CT_CALL(PMPI_Allreduce(&union_rank, &colour, 1, MPI_INT, MPI_MIN, ctx->comm));
    CT_CALL(PMPI_Comm_split(ctx->union_comm, colour, ctx->rank, &ctx->local_comm));
    CT_CALL(PMPI_Comm_set_errhandler(ctx->local_comm, MPI_ERRORS_RETURN));
out:
    return rc;
}

static int ctx_create(MPI_Comm user, ct_ctx **out)
{
    int rc = MPI_SUCCESS, len;
    ct_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return MPI_ERR_NO_MEM;
    ctx->comm = ctx->local_comm = ctx->union_comm = MPI_COMM_NULL;
    ctx->stat_index = -1;
    CT_CALL(PMPI_Comm_dup(user, &ctx->comm));
    /* Errors inside coltune come back as return codes; the shim hands them to
     * the user's error handler on the user's communicator. */
    CT_CALL(PMPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN));
    CT_CALL(PMPI_Comm_test_inter(ctx->comm, &ctx->is_inter));
    CT_CALL(PMPI_Comm_size(ctx->comm, &ctx->size));
    CT_CALL(PMPI_Comm_rank(ctx->comm, &ctx->rank));
    CT_CALL(PMPI_Comm_get_name(user, ctx->name, &len));
    if (len == 0)
        snprintf(ctx->name, sizeof ctx->name, "comm");
    ctx->decide_comm = ctx->comm;
    if (ctx->is_inter) {
        CT_CALL(inter_comms(ctx));
        ctx->decide_comm = ctx->union_comm;
    }
    CT_CALL(PMPI_Comm_rank(ctx->decide_comm, &ctx->decide_rank));
    const ct_settings *set = ct_settings_get();
    int gpu = set->device_always || ct_device_runtimes() != 0, gathered;
    CT_CALL(topo_compute(ctx->decide_comm, set->ppn, set->ppn_cyclic, gpu, &ctx->topo,
                         &ctx->device_agree, &gathered));
    ctx->shape.P = ctx->size + ctx->remote_size;
    ctx->shape.Q = ctx->topo.Q;
    ctx->shape.N = ctx->topo.N;
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    ctx->serial = st->ctx_serial++;
    ct_state_unlock(st);
    if (set->verbose >= 2 && ctx->decide_rank == 0)
        ct_log("%s#%d: P=%ld nodes=%ld ppn=%ld, %s", ctx->name, ctx->serial, ctx->shape.P,
               ctx->shape.N, ctx->shape.Q,
               gathered ? "each rank's node known: one MPI_Allgather"
                        : "nodes asked of MPI_Comm_split_type");
    *out = ctx;
    return MPI_SUCCESS;
out:
    ctx_free(ctx);
    return rc;
}

/* Remembers comm's context as the last one looked up (ct_state.last). */
static void remember_last(MPI_Comm comm, ct_ctx *ctx)
{
    ct_state *st = ct_state_get();
    if (st->last.usable) {
        st->last.comm = comm;
        st->last.ctx = ctx;
    }
}

/* A communicator whose context a thread is making (ct_state.making). */
typedef struct ct_making {
    MPI_Comm comm;
    struct ct_making *next;
} ct_making;

static ct_making **making_of(ct_state *st, MPI_Comm comm)
{
    ct_making **m = &st->making;
    while (*m != NULL && (*m)->comm != comm)
        m = &(*m)->next;
    return m;
}

/*
 * Makes the context of comm and caches it on comm, once however many threads
 * of the process ask at the same time (its first use is collective: one
 * MPI_Comm_dup per process). The first thread to register comm in
 * ct_state.making makes it; the others wait until it is done, then find it
 * on comm (or, if making it failed, try again themselves). No MPI call is
 * made under the lock: the context's delete callback takes it, called by the
 * MPI library, which may hold a lock of its own then.
 */
static int ctx_make(MPI_Comm comm, int keyval, ct_ctx **out)
{
    ct_state *st = ct_state_get();
    ct_making me = {comm, NULL};
    ct_ctx *ctx = NULL;
    void *val = NULL;
    int rc, flag = 0;
    ct_state_lock(st);
    while (*making_of(st, comm) != NULL)
        ct_state_wait(st);
    me.next = st->making;
    st->making = &me;
    ct_state_unlock(st);
    /* Made by another thread before this one registered? */
    CT_CALL(PMPI_Comm_get_attr(comm, keyval, &val, &flag));
    if (flag) {
        ctx = val;
        goto out;
    }
    CT_CALL(ctx_create(comm, &ctx));
    rc = PMPI_Comm_set_attr(comm, keyval, ctx);
    if (rc != MPI_SUCCESS) {
        ct_log_mpi_error(rc, "MPI_Comm_set_attr", __FILE__, __LINE__);
        ctx_free(ctx);
        ctx = NULL;
    }
out:
    ct_state_lock(st);
    *making_of(st, comm) = me.next;
    ct_state_wake(st);
    ct_state_unlock(st);
    *out = ctx;
    return rc;
}

int ct_ctx_get(MPI_Comm comm, ct_ctx **out)
{
    int rc, keyval, flag = 0;
    void *val = NULL;
    ct_ctx *ctx;
    const ct_state *st = ct_state_get();
    if (st->last.ctx != NULL && st->last.comm == comm) { /* usable: see keyval_get */
        *out = st->last.ctx;
        return MPI_SUCCESS;
    }
    *out = NULL;
    if ((rc = keyval_get(&keyval)) != MPI_SUCCESS)
        return rc;
    CT_CALL(PMPI_Comm_get_attr(comm, keyval, &val, &flag));
    ctx = val;
    if (!flag)
        CT_CALL(ctx_make(comm, keyval, &ctx));
    *out = ctx;
    remember_last(comm, ctx);
out:
    return rc;
}

int ct_ctx_lookup(MPI_Comm comm, ct_ctx **out)
{
    int rc, flag = 0;
    void *val = NULL;
    *out = NULL;
    const int keyval = __atomic_load_n(&ct_state_get()->keyval, __ATOMIC_ACQUIRE);
    if (keyval == MPI_KEYVAL_INVALID)
        return MPI_SUCCESS; /* no context was ever created */
    CT_CALL(PMPI_Comm_get_attr(comm, keyval, &val, &flag));
    if (flag)
        *out = val;
out:
    return rc;
}

void *ct_ctx_scratch(ct_ctx *ctx, size_t n)
{
    if (n > ctx->scratch_size) {
        void *p = realloc(ctx->scratch, n);
        if (p == NULL)
            return NULL;
        ctx->scratch = p;
        ctx->scratch_size = n;
    }
    return ctx->scratch;
}

/* The entry of key in ctx->buf, or the first free one (CT_CTX_NBUFS: none). */
static int buffer_index(const ct_ctx *ctx, const ct_ctx_buf_key *key)
{
    int i = 0;
    while (i < CT_CTX_NBUFS && ctx->buf[i].key != key && ctx->buf[i].key != NULL)
        i++;
    return i;
}

size_t ct_ctx_buffer_size(const ct_ctx *ctx, const ct_ctx_buf_key *key)
{
    const int i = buffer_index(ctx, key);
    return i < CT_CTX_NBUFS && ctx->buf[i].key == key ? ctx->buf[i].size : 0;
}

void *ct_ctx_buffer(ct_ctx *ctx, const ct_ctx_buf_key *key, size_t n)
{
    const int which = buffer_index(ctx, key);
    if (which == CT_CTX_NBUFS) /* more keys than CT_CTX_NBUFS */
        return NULL;
    ctx->buf[which].key = key;
    if (n > ctx->buf[which].size) {
        size_t grown = ctx->buf[which].size * 2 > n ? ctx->buf[which].size * 2 : n;
        char *p = realloc(ctx->buf[which].p, grown);
        if (p == NULL)
            return NULL;
        ctx->buf[which].p = p;
        ctx->buf[which].size = grown;
    }
    return ctx->buf[which].p;
}

/* Objects are appended under the state lock and published by the release
 * store of next: a reader sees every entry below the count it loads. */
void *ct_ctx_ext_find(const ct_ctx *ctx, const ct_ctx_key *key)
{
    const int n = __atomic_load_n(&ctx->next, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (ctx->ext[i].key == key)
            return ctx->ext[i].obj;
    return NULL;
}

/* Hangs obj on ctx under key, unless another thread hung one there since
 * ct_ctx_ext looked (returned then, obj not kept) or there is no room
 * (*full). */
static void *ext_append(ct_ctx *ctx, const ct_ctx_key *key, void *obj, int *full)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    void *theirs = ct_ctx_ext_find(ctx, key);
    *full = theirs == NULL && ctx->next == CT_CTX_NEXT;
    if (theirs == NULL && !*full) {
        ctx->ext[ctx->next].key = key;
        ctx->ext[ctx->next].obj = obj;
        __atomic_store_n(&ctx->next, ctx->next + 1, __ATOMIC_RELEASE);
    }
    ct_state_unlock(st);
    return theirs;
}

int ct_ctx_ext(ct_ctx *ctx, const ct_ctx_key *key, void *arg, void **obj)
{
    int full;
    *obj = ct_ctx_ext_find(ctx, key);
    if (*obj != NULL)
        return MPI_SUCCESS;
    int rc = key->create(ctx, arg, obj);
    if (*obj == NULL)
        return rc;
    void *theirs = ext_append(ctx, key, *obj, &full);
    if (theirs != NULL || full) { /* made by another thread meanwhile (local), or no room */
        key->release(*obj);
        *obj = theirs;
        if (full)
            return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN; /* more keys than CT_CTX_NEXT */
    }
    return rc;
}

/* Releases entry i and closes the gap (the others keep their order). */
void *ct_ctx_ext_swap(ct_ctx *ctx, const ct_ctx_key *key, void *obj)
{
    ct_state *st = ct_state_get();
    void *old = NULL;
    ct_state_lock(st);
    for (int i = 0; i < ctx->next && old == NULL; i++)
        if (ctx->ext[i].key == key) {
            old = ctx->ext[i].obj;
            __atomic_store_n(&ctx->ext[i].obj, obj, __ATOMIC_RELEASE);
        }
    ct_state_unlock(st);
    return old;
}

void ct_ctx_ext_retire(ct_ctx *ctx)
{
    const int n = __atomic_load_n(&ctx->next, __ATOMIC_ACQUIRE);
    for (int i = n - 1; i >= 0; i--) { /* as ctx_free: newest first */
        const ct_ctx_key *key = ctx->ext[i].key;
        void *by = key->retire != NULL ? key->retire(ctx->ext[i].obj) : NULL;
        if (by != NULL)
            key->release(ct_ctx_ext_swap(ctx, key, by));
    }
}

size_t ct_ctx_local_bytes(const ct_ctx *ctx)
{
    size_t n = ctx->scratch_size + (size_t)ctx->nreqs * sizeof *ctx->reqs;
    for (int i = 0; i < CT_CTX_NBUFS; i++)
        n += ctx->buf[i].size;
    return n;
}

void ct_ctx_drop_buffers(ct_ctx *ctx)
{
    free(ctx->scratch);
    ctx->scratch = NULL;
    ctx->scratch_size = 0;
    free(ctx->reqs);
    ctx->reqs = NULL;
    ctx->nreqs = 0;
    for (int i = 0; i < CT_CTX_NBUFS; i++) { /* the keys stay: each keeps its entry */
        free(ctx->buf[i].p);
        ctx->buf[i].p = NULL;
        ctx->buf[i].size = 0;
    }
}

void ct_ctx_ext_release(ct_ctx *ctx)
{
    while (ctx->next > 0) {
        ctx->next--;
        ctx->ext[ctx->next].key->release(ctx->ext[ctx->next].obj);
    }
}

MPI_Request *ct_ctx_requests(ct_ctx *ctx, int n)
{
    if (n > ctx->nreqs) {
        MPI_Request *r = realloc(ctx->reqs, (size_t)n * sizeof *r);
        if (r == NULL)
            return NULL;
        ctx->reqs = r;
        ctx->nreqs = n;
    }
    return ctx->reqs;
}

/* The contexts kept for requests (ctx_delete_fn), in the order their
 * communicators were freed, the same on every rank: their objects'
 * collective release, then their memory, unless a request the application
 * never freed still holds one. */
static void release_kept(void)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    ct_ctx *ctx = st->kept;
    st->kept = st->kept_last = NULL;
    ct_state_unlock(st);
    while (ctx != NULL) {
        ct_ctx *next = ctx->next_kept;
        ct_ctx_ext_release(ctx);
        ct_state_lock(st);
        ctx->kept = 0;
        const int held = ctx->holds > 0;
        ct_state_unlock(st);
        if (!held)
            ctx_free_comms(ctx);
        ctx = next;
    }
}

void ct_ctx_release_predefined(void)
{
    int keyval = ct_state_get()->keyval;
    if (keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm predefined[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        void *val;
        int flag = 0;
        /* Only delete what is there: deleting a missing attribute is an error
         * that would reach the (fatal) error handler of the predefined comm. */
        if (PMPI_Comm_get_attr(predefined[i], keyval, &val, &flag) == MPI_SUCCESS && flag)
            PMPI_Comm_delete_attr(predefined[i], keyval);
    }
    release_kept();
}

void ct_ctx_keyval_free(void)
{
    ct_state *st = ct_state_get();
    st->last.usable = 0; /* no lookup after this */
    st->last.comm = MPI_COMM_NULL;
    st->last.ctx = NULL;
    if (st->keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&st->keyval);
}
