/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdde_exchange.h - sparse dynamic data exchange (MPIX_Alltoall_crs and
 * MPIX_Alltoallv_crs; [Geyko2023] sections III-IV): what the algorithms
 * share with each other and with the driver (sdde.h, sdde.c).
 *
 * The driver validates the user's arguments, packs the messages into bytes,
 * agrees with every rank (one allreduce, which also carries the decision's
 * msg_size) that all arguments are valid, delivers a rank's message to itself
 * without communication, and runs the chosen algorithm. An algorithm that
 * declares CT_A_AGREES carries that agreement in its own exchange: when the
 * decision needs no per-call facts (forced, or rules without msg_size) and
 * an earlier call on the communicator has agreed, the driver skips the
 * allreduce, a rank with invalid arguments takes part with
 * no messages (x->invalid), and every rank learns x->any_invalid. An algorithm sends
 * x->out (this rank's messages to other ranks, as bytes) and puts every
 * message it receives into the box x->got, in any order; the driver then
 * writes them sorted by source into the caller's arrays, checking capacities,
 * or into arrays it allocates.
 *
 * Every message travels on the context's private communicator (or the cached
 * intra-node communicator). A probe of one call never matches a message of
 * a later one. Tags carry the parity of the call, so adjacent calls never
 * share a tag; and no rank finishes call n+1 before every rank has finished
 * call n: it needs either the agreement allreduce of n+1, or (CT_A_AGREES)
 * an exchange in which it hears, directly or through a forwarding rank, from
 * every rank's call n+1.
 */
#ifndef CT_SDDE_EXCHANGE_H
#define CT_SDDE_EXCHANGE_H

#include "algorithms.h"
#include "core/context.h"

#include <limits.h>

/* Largest message, in bytes: a record (an 8-byte header and a message) of the
 * locality-aware algorithms must still fit an int count of MPI_BYTE. */
#define CT_SDDE_MAX_MSG_BYTES ((long)INT_MAX - 64)

/* Largest message the locality-aware algorithms send: an aggregated buffer is
 * cut into pieces of at most this many bytes, at record boundaries. */
#ifndef CT_SDDE_PIECE_BYTES
#define CT_SDDE_PIECE_BYTES INT_MAX
#endif

/* Messages to send: message i is bytes[i] bytes at ptr[i], to rank dest[i]. */
typedef struct ct_sdde_out {
    int n, cap;
    int *dest;
    const char **ptr;
    int *bytes;
} ct_sdde_out;

/* Received messages: message k came from src, its bytes are at data + off. */
typedef struct ct_sdde_msg {
    int src;
    int bytes;
    size_t off;
} ct_sdde_msg;

typedef struct ct_sdde_box {
    ct_sdde_msg *msgs;
    int n, cap;
    char *data;
    size_t used, size;
} ct_sdde_box;

/* What src/sdde keeps per communicator (ct_ctx_ext), freed with the context. */
typedef struct ct_sdde_cache {
    unsigned calls;      /* exchanges run so far: its parity is added to the tags */
    int agreed;          /* a call here passed the agreement allreduce: every rank
                            has this cache, so CT_A_AGREES may skip it from now on */
    long internode_msgs; /* messages this rank sent to other nodes in the last call */
    /* Locality-aware algorithms: */
    MPI_Comm node_comm; /* this rank's node, ranked by local index; MPI_COMM_NULL
                           until first used */
    int *node_first;    /* [N+1] node n's ranks are node_ranks[node_first[n]..] */
    int *node_ranks;    /* [P] every rank, by node then local index */
    /* rma: one window, grown (collectively) when a call needs more. */
    MPI_Win win;
    char *win_base;
    size_t win_bytes;
    int rma_unusable; /* MPI_Win_allocate failed on some rank: rma runs personalized */
} ct_sdde_cache;

/* One call, as the algorithms see it. */
typedef struct ct_sdde {
    ct_ctx *ctx;
    ct_sdde_cache *cache;
    int tag_parity;    /* 0 or 1: add to every CT_TAG_SDDE* tag */
    ct_sdde_out out;   /* this rank's messages to other ranks */
    int known_nrecv;   /* messages from other ranks this rank receives, when every
                          rank knows its count (hint); -1 otherwise */
    ct_sdde_box got;   /* messages received (the driver's own message to itself
                          included), in arrival order */
    long internode;    /* messages sent to other nodes (algorithms add theirs) */
    long msg_size;     /* the decision's msg_size (largest message any rank sends,
                          bytes) when it was computed, else -1 */
    /* CT_A_AGREES algorithms, when the driver skipped its agreement: */
    int invalid;     /* this rank's arguments are invalid (x->out is empty) */
    int any_invalid; /* set by the algorithm: some rank's arguments are invalid */
} ct_sdde;

static inline int ct_sdde_tag(const ct_sdde *x, int base) { return base + x->tag_parity; }

/* ------------------------------------------------------------------ */
/* Helpers for the algorithms (sdde_exchange.c)                        */
/* ------------------------------------------------------------------ */

/* Room for one more message of bytes bytes from src; NULL when out of memory.
 * The pointer is valid until the next call on the box. */
char *ct_sdde_box_add(ct_sdde_box *b, int src, size_t bytes);
/* Adds a copy of a message (bytes bytes at data) from src: MPI_SUCCESS, or
 * MPI_ERR_NO_MEM. */
int ct_sdde_box_copy(ct_sdde_box *b, int src, const void *data, size_t bytes);
void ct_sdde_box_free(ct_sdde_box *b);

/* Appends a message to an out list (ptr may be fixed up later). */
int ct_sdde_out_push(ct_sdde_out *o, int dest, const char *ptr, int bytes);
void ct_sdde_out_free(ct_sdde_out *o);

/* Receives a matched message (MPI_Mprobe/MPI_Improbe) into box. */
int ct_sdde_recv_matched(ct_sdde_box *box, MPI_Message *msg, MPI_Status *st);

/* Adds to x->internode the messages of o whose destination (a rank of
 * ctx->comm) lies on another node. */
void ct_sdde_count_internode(ct_sdde *x, const ct_sdde_out *o);

/* The two exchanges every algorithm but rma is made of, on comm with tag:
 * sends o, receives into box whatever other ranks send. */
/* [Geyko2023] Alg. 1 (sdde_personalized.c): nrecv >= 0 is the number of
 * messages this rank receives when every rank knows its own; -1 counts them
 * with MPI_Reduce_scatter_block. */
int ct_sdde_exchange_personalized(MPI_Comm comm, int tag, const ct_sdde_out *o, int nrecv,
                                  ct_sdde_box *box);
/* [Geyko2023] Alg. 2 (sdde_nonblocking.c): NBX. */
int ct_sdde_exchange_nbx(MPI_Comm comm, int tag, const ct_sdde_out *o, ct_sdde_box *box);

/* ------------------------------------------------------------------ */
/* Locality-aware aggregation (sdde_locality.c, [Geyko2023] section IV-D) */
/* ------------------------------------------------------------------ */

/*
 * Every message goes through the rank with this rank's local index on the
 * destination node (local index modulo that node's size when the node is
 * smaller), which redistributes inside its node. The algorithm files run:
 *   ct_sdde_aggregate      buf[node] of records (dest, size, data) for every
 *                          other node, cut into pieces in L->out (and counted
 *                          in x->internode);
 *   (their own exchange of L->out on ctx->comm, into L->in);
 *   ct_sdde_redistribute   the records received and this rank's messages to
 *                          its own node, sent on to their destinations with
 *                          a personalized exchange on the node communicator.
 * With lanes != 0 (locality_dense) an aggregate goes to every other node and
 * a buffer to every other rank of the node, each closed by an END record, and
 * both exchanges are ct_sdde_exchange_lanes: no reduction.
 */
typedef struct ct_sdde_local {
    char *agg;       /* the aggregated records, back to back */
    ct_sdde_out out; /* pieces of agg, one or more per destination node */
    ct_sdde_box in;  /* pieces received from other nodes */
} ct_sdde_local;

int ct_sdde_aggregate(ct_sdde *x, ct_sdde_local *L, int lanes);
int ct_sdde_redistribute(ct_sdde *x, ct_sdde_local *L, int lanes);
/* Aggregates this rank receives from other nodes when every rank sends one
 * to its partner on every other node. */
int ct_sdde_lane_senders(const ct_sdde *x);
/* Sends o; receives into box until senders aggregates have ended, and ORs
 * into *flags the flags their END records carry. */
int ct_sdde_exchange_lanes(MPI_Comm comm, int tag, const ct_sdde_out *o, int senders,
                           ct_sdde_box *box, int *flags);
void ct_sdde_local_free(ct_sdde_local *L);

#endif
