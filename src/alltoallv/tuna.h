/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tuna.h - the TuNA engine (alltoallv_tuna.c), shared by tuna, tuna_hier_*
 * and node_aware.
 */
#ifndef CT_TUNA_H
#define CT_TUNA_H

#include "alltoallv/a2av_p2p.h"

/*
 * TuNA ([Fan2024] section III) among a group of ranks of ctx->comm, shared by
 * tuna (the group is the whole communicator) and tuna_hier_* (the group is
 * one node, section IV-A). Works on bytes; every size is a size_t, so no
 * byte count or offset is limited to int.
 *
 * A slot is a bundle of C blocks: slot i of member g holds, in rotated order,
 * the blocks g sends through member (g + i) mod size. source() gives block c
 * of the bundle this rank sends through member j (NULL and 0 bytes for none);
 * target() says where block c of the bundle from member j lands once it has
 * reached this rank, its last hop (NULL when bytes do not fit: an error).
 * Blocks known_c .. known_c + known_n - 1 of a bundle are the ones its
 * member itself receives: their sizes, known(j, c), are known at the
 * receiver, so they travel without metadata on their last hop. tuna_hier
 * knows one position (the block for the member itself), node_aware's lanes
 * every position (one block per rank of the sending node), and its leaders
 * the first Q (the leader's own; the rest it delivers inside its node).
 */

typedef struct ct_tuna_group {
    int size;           /* ranks in the group */
    int index;          /* this rank's index in the group */
    const int *rank_of; /* [size] rank in ctx->comm of each member; NULL: identity */
    int C;              /* blocks per slot */
    int known_c, known_n; /* the positions in a bundle its member receives */
    void *arg;
    const char *(*source)(void *arg, int j, int c, size_t *bytes);
    char *(*target)(void *arg, int j, int c, size_t bytes);
    size_t (*known)(void *arg, int j, int c);
} ct_tuna_group;

/* Bytes of scratch ct_tuna_exchange() needs for this group and radix. */
size_t ct_tuna_scratch_bytes(const ct_tuna_group *grp, int radix);
/* Runs TuNA on the group: every rank of the group calls it with the same
 * radix. No rank needs to know any other rank's block sizes beforehand.
 * scratch holds ct_tuna_scratch_bytes() bytes (the caller counts them in
 * ctx->call_extra; the engine adds the buffers it grows). */
int ct_tuna_exchange(const ct_tuna_group *grp, ct_ctx *ctx, int radix, void *scratch);

/*
 * The same exchange as a request's, split (the step of its schedule,
 * core/sched.h): made once with memory of its own (its scratch, buffers and
 * requests, grown by its first start and kept, so that later starts of a
 * persistent request allocate nothing), its messages on comm with tag (data
 * and metadata alike: within one call no two rounds share a peer, and a
 * peer's metadata precedes its data). A start copies the own bundle and
 * posts the first digit; each advance takes it on as far as it goes without
 * blocking (block 0: the metadata found by MPI_Improbe, the receives
 * tested) or to its end (block 1), *done once it has ended, returning its
 * error class then. The group (copied) and what its callbacks read must
 * live as long as the run.
 */
typedef struct ct_tuna_run ct_tuna_run;
int ct_tuna_run_new(const ct_tuna_group *grp, MPI_Comm comm, int radix, int tag,
                    ct_tuna_run **out);
int ct_tuna_run_start(ct_tuna_run *run);
int ct_tuna_run_advance(ct_tuna_run *run, int block, int *done);
/* Bytes it holds now. */
size_t ct_tuna_run_bytes(const ct_tuna_run *run);
void ct_tuna_run_free(ct_tuna_run *run);

#endif
