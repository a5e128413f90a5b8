/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm.c - shared-memory windows and their flags (shm.h).
 *
 * Memory ordering. Shared windows are in MPI's unified memory model (checked
 * at creation), where a store is visible to another process once it is
 * ordered before the flag it reads; MPI_Win_sync in a passive epoch is the
 * standard's name for that ordering. A full fence is used: memcpy may use
 * non-temporal stores, which a release store alone does not order on x86.
 */
#include "core/shm.h"
#include "core/log.h"
#include "core/request.h"
#include "core/state.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The flag line that starts each rank's part. */
#define FLAG_BYTES ((size_t)64)

static unsigned long *flag_of(const ct_shm_win *w, int r)
{
    return (unsigned long *)(void *)(w->part[r] - FLAG_BYTES);
}

void ct_shm_publish(ct_shm_win *w)
{
    /* The standard's ordering, and a full fence whatever it amounts to: a
     * failed MPI_Win_sync is reported, and the fence still orders the
     * copies (the others are waiting for this count: it must come). */
    const int rc = PMPI_Win_sync(w->win);
    if (rc != MPI_SUCCESS)
        ct_log_mpi_error(rc, "MPI_Win_sync", __FILE__, __LINE__);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(flag_of(w, w->rank), ++w->seq, __ATOMIC_RELEASE);
}

/* Spinning pays only when every waiter has a core of its own; otherwise the
 * rank it waits for may be the one it keeps from running. A wait that goes
 * on gives the library's progress, and coltune's other requests, a turn
 * every IDLE_EVERY pauses (ct_request_idle: the rank waited for may be
 * waiting for this one's other operations). */
#define SPIN_MAX 2000u
#define IDLE_EVERY 32u

void ct_shm_pause(const ct_shm_win *w, unsigned *spins)
{
    const unsigned n = ++*spins;
    if (w->oversubscribed || n > SPIN_MAX) {
        if (n % IDLE_EVERY == 0)
            ct_request_idle();
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int ct_shm_arrived(const ct_shm_win *w, int r)
{
    return __atomic_load_n(flag_of(w, r), __ATOMIC_ACQUIRE) >= w->seq;
}

void ct_shm_win_free(ct_shm_win *w)
{
    if (w == NULL)
        return;
    if (w->locked)
        PMPI_Win_unlock_all(w->win);
    if (w->win != MPI_WIN_NULL) /* collective, like the context's release */
        PMPI_Win_free(&w->win);
    free(w->part);
    free(w);
}

/* This rank's part of the setup once the window exists: all local. */
static int map_parts(ct_shm_win *w)
{
    int rc = MPI_SUCCESS, flag, *model;
    CT_ALLOC(w->part, (size_t)w->size * sizeof(char *));
    CT_CALL(PMPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
    CT_CALL(PMPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &flag));
    if (!flag || *model != MPI_WIN_UNIFIED) {
        ct_log_once("shm: the MPI library's shared window is not in the unified memory model");
        return MPI_ERR_WIN;
    }
    for (int r = 0; r < w->size; r++) {
        MPI_Aint bytes;
        int disp_unit;
        char *base;
        CT_CALL(PMPI_Win_shared_query(w->win, r, &bytes, &disp_unit, &base));
        if (base == NULL || (size_t)bytes < FLAG_BYTES + w->bytes)
            return MPI_ERR_WIN;
        w->part[r] = base + FLAG_BYTES;
    }
    *flag_of(w, w->rank) = 0;
    /* one passive epoch for the window's life: MPI_Win_sync orders the copies */
    CT_CALL(PMPI_Win_lock_all(MPI_MODE_NOCHECK, w->win));
    w->locked = 1;
out:
    return rc;
}

/* A failure the tests inject (COLTUNE_TEST_SHM_FAIL=rank): the window is
 * created, but this rank reports it could not use it, as a rank whose part
 * could not be mapped would. */
static int injected_failure(int rank)
{
    return ct_settings_get()->test_shm_fail == rank;
}

static int allocate(ct_shm_win *w, MPI_Win *win)
{
    int rc;
    MPI_Info info = MPI_INFO_NULL;
    char *base = NULL;
    /* a hint only: each part in its own pages, no false sharing */
    if (PMPI_Info_create(&info) == MPI_SUCCESS &&
        PMPI_Info_set(info, "alloc_shared_noncontig", "true") != MPI_SUCCESS)
        PMPI_Info_free(&info);
    rc = PMPI_Win_allocate_shared((MPI_Aint)(FLAG_BYTES + w->bytes), 1, info, w->comm, &base,
                                  win);
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    return rc;
}

/*
 * Where the MPI library keeps shared windows: Open MPI's osc/sm in a file
 * under osc_sm_backing_directory (default /dev/shm; mpirun --mca passes it
 * in the environment), MPICH in /dev/shm.
 */
static const char *backing_dir(void)
{
#ifdef OPEN_MPI
    const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
    if (dir != NULL && *dir != '\0')
        return dir;
#endif
    return "/dev/shm";
}

/*
 * Is there room for the window on this node? A failed MPI_Win_allocate_shared
 * is not always survivable: Open MPI 4.1's osc/sm returns the error on the
 * rank that creates the backing file while the others wait for it in a
 * broadcast, for ever. Nor is an overfull one: a file on a full tmpfs is
 * created sparse and its first touch past the end kills the process with
 * SIGBUS. So the ranks first check the space (a container's /dev/shm is 64
 * MiB by default) and skip the window together when it is short. The check
 * leaves room for the library's own segments; it cannot see another job
 * filling the directory between the check and the allocation.
 */
static int room_for(size_t node_bytes)
{
    struct statvfs fs;
    const char *dir = backing_dir();
    if (statvfs(dir, &fs) != 0)
        return 1; /* no way to tell: let the library try */
    const double avail = (double)fs.f_bavail * (double)fs.f_frsize;
    if (avail >= 2.0 * (double)node_bytes + (4 << 20))
        return 1;
    ct_log_once("shm: %s has too little free space for a shared window of %zu KiB per node "
                "(twice that is asked for, to leave room for the MPI library)",
                dir, node_bytes >> 10);
    return 0;
}

/* Every rank reaches the same collectives (MPI_Win_allocate_shared, then one
 * allreduce) whatever fails on it locally, so all agree on whether the
 * window is usable; if it is not, all free it when all hold one, and
 * otherwise the ranks that hold one leave it (freeing it is collective). */
int ct_shm_win_create(MPI_Comm comm, size_t bytes, const char *who, ct_shm_win **out)
{
    int rc, size, rank, here[2] = {0, 0}, everywhere[2] = {0, 0}; /* {can use, holds} */
    ct_shm_win *w = NULL;
    *out = NULL;
    CT_CALL(PMPI_Comm_size(comm, &size));
    CT_CALL(PMPI_Comm_rank(comm, &rank));
    const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    const size_t part = (FLAG_BYTES + bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    here[0] = rank != 0 || room_for((size_t)size * part);
    CT_CALL(PMPI_Allreduce(here, everywhere, 1, MPI_INT, MPI_MIN, comm));
    if (!everywhere[0])
        goto fail;
    w = calloc(1, sizeof *w); /* NULL: this rank still takes part */
    if (w != NULL) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        w->win = MPI_WIN_NULL;
        w->comm = comm;
        w->size = size;
        w->rank = rank;
        w->bytes = bytes;
        w->oversubscribed = cores > 0 && size > cores;
        here[1] = allocate(w, &w->win) == MPI_SUCCESS;
    } else {
        MPI_Win lost = MPI_WIN_NULL; /* left to the library: freeing it is collective */
        allocate(&(ct_shm_win){.comm = comm, .bytes = bytes}, &lost);
    }
    here[0] = here[1] && map_parts(w) == MPI_SUCCESS && !injected_failure(rank);
    CT_CALL(PMPI_Allreduce(here, everywhere, 2, MPI_INT, MPI_MIN, comm));
    if (everywhere[0]) {
        *out = w;
        return MPI_SUCCESS;
    }
fail:
    if (rank == 0)
        ct_log_once("%s: the shared window (MPI_Win_allocate_shared, %zu bytes per rank) "
                    "could not be set up on every rank; the calls on this communicator that "
                    "choose it are served another way (see coltune(7), Shared memory)",
                    who, FLAG_BYTES + bytes);
    if (w != NULL && !everywhere[1]) /* some rank holds none: this one's stays */
        w->win = MPI_WIN_NULL;
out:
    if (w != NULL && *out == NULL) {
        if (w->locked)
            PMPI_Win_unlock_all(w->win);
        w->locked = 0;
        if (rc == MPI_SUCCESS && w->win != MPI_WIN_NULL)
            PMPI_Win_free(&w->win);
        free(w->part);
        free(w);
    }
    return rc;
}
