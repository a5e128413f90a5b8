/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm.h - a shared-memory window over a communicator whose ranks share a
 * node, and the flags its ranks synchronise through.
 *
 * MPI_Win_allocate_shared (MPI-3 shared-memory model, [Hoefler2013]) gives
 * every rank a part of the window that every other rank can load from and
 * store to. Each part starts with a flag on its
 * own cache line: a rank publishes a count there, and the others wait until
 * every rank's count has reached a value. That is all the synchronisation
 * the algorithms built on it need (alltoallv/shm_stream.h), and it costs a
 * fraction of an MPI_Barrier: no message matching, and a waiter that has
 * more ranks than cores to share gives its core away at once.
 *
 * A window is created collectively and every rank learns whether it worked
 * on every rank (a small /dev/shm, a failed mapping, an injected failure for
 * the tests): on failure all ranks get NULL together, and the caller serves
 * the call another way.
 */
#ifndef CT_SHM_H
#define CT_SHM_H

#include "core/ct_common.h"

typedef struct ct_shm_win {
    MPI_Win win;
    MPI_Comm comm; /* the ranks that share it (not owned) */
    int size, rank;
    size_t bytes;        /* usable bytes of each part (after the flag line) */
    char **part;         /* [size] each rank's part, usable bytes */
    unsigned long seq;   /* the value this rank last published */
    int oversubscribed;  /* more ranks than online cores: wait by yielding */
    int locked;          /* in the window's passive epoch (MPI_Win_lock_all) */
} ct_shm_win;

/*
 * Creates a window of bytes usable bytes per rank over comm (an
 * intra-communicator whose ranks share memory), collectively. *out is the
 * window, or NULL on every rank when it could not be set up on some rank
 * (what failed is logged once, naming who, the caller). Returns an MPI error
 * only when the agreement itself failed.
 */
int ct_shm_win_create(MPI_Comm comm, size_t bytes, const char *who, ct_shm_win **out);

/* Frees the window (collective over its comm, like MPI_Win_free). */
void ct_shm_win_free(ct_shm_win *w);

/*
 * Publishes this rank's next count (w->seq + 1): everything this rank stored
 * in the window before is visible to a rank that sees the count.
 */
void ct_shm_publish(ct_shm_win *w);

/* Has rank r published count w->seq (this rank's latest; the ranks reach
 * each count in step)? If so, r's stores before it are visible to this
 * rank. */
int ct_shm_arrived(const ct_shm_win *w, int r);

/* Between two looks at the flags: gives the core away when the ranks
 * outnumber the cores (or after a while of spinning). spins starts at 0. */
void ct_shm_pause(const ct_shm_win *w, unsigned *spins);

#endif
