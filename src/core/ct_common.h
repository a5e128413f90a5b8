/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ct_common.h - definitions shared by every coltune source file.
 *
 * Everything internal is compiled with -fvisibility=hidden; only symbols marked
 * CT_EXPORT (the MPI_* interceptors and the public coltune_* / MPIX_* API) are
 * exported from libcoltune.so, so nothing clashes with the application.
 */
#ifndef CT_COMMON_H
#define CT_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CT_EXPORT __attribute__((visibility("default")))
#define CT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define CT_UNUSED __attribute__((unused))
#else
#define CT_EXPORT
#define CT_PRINTF(f, a)
#define CT_UNUSED
#endif

/* Tags used on coltune's private duplicate communicators. They never reach the
 * user's communicator, so any value is safe; distinct values only help debugging. */
enum {
    CT_TAG_SELF = 7001,
    CT_TAG_ALLTOALLV = 7101,
    CT_TAG_ALLTOALLV_META = 7102,
    CT_TAG_SHM_DIRECT = 7103, /* and 7104: + the parity of the call (alltoallv_shm.c) */
    CT_TAG_ALLGATHER = 7201,
    CT_TAG_SDDE = 7301,
    /* src/sdde adds the parity of the call (0 or 1) to its tags: adjacent
     * calls never share a tag (see src/sdde/sdde.h). */
    CT_TAG_SDDE_NODE = 7303,  /* aggregated messages to another node */
    CT_TAG_SDDE_LOCAL = 7305, /* redistribution inside a node */
    CT_TAG_NEIGHBOR_DIRECT = 7401,
    CT_TAG_NEIGHBOR = 7402,   /* to 7407: the kinds of message of neighbor_locality.c */
    /* The nonblocking and persistent collectives: one tag per call, from
     * CT_TAG_NBC up, the calls of a communicator counted modulo
     * CT_TAG_NBC_SPAN (ct_ctx_request_tag; below MPI's least MPI_TAG_UB, 32767) */
    CT_TAG_NBC = 8192,
    CT_TAG_NBC_SPAN = 16384,
    /* The persistent calls: one tag per request, for its life, counted
     * apart; once the count wraps, a tag a live request holds is passed
     * over (ct_ctx_request_tag) */
    CT_TAG_PERSISTENT = CT_TAG_NBC + CT_TAG_NBC_SPAN,
    CT_TAG_PERSISTENT_SPAN = 32768 - CT_TAG_PERSISTENT
};

/*
 * Every MPI return code is checked. CT_CALL reports the failing call once (with
 * rank and context, see log.h) and jumps to the function's "out:" label with rc
 * set, so cleanup code runs on every path.
 */
#define CT_CALL(expr)                                                           \
    do {                                                                        \
        rc = (expr);                                                            \
        if (rc != MPI_SUCCESS) {                                                \
            ct_log_mpi_error(rc, #expr, __FILE__, __LINE__);                    \
            goto out;                                                           \
        }                                                                       \
    } while (0)

/* Allocation failure is reported like an MPI error (MPI_ERR_NO_MEM). */
#define CT_ALLOC(ptr, nbytes)                                                   \
    do {                                                                        \
        size_t ct_alloc_n_ = (nbytes);                                          \
        (ptr) = ct_malloc(ct_alloc_n_ ? ct_alloc_n_ : 1);                       \
        if ((ptr) == NULL) {                                                    \
            rc = MPI_ERR_NO_MEM;                                                \
            ct_log_mpi_error(rc, "malloc(" #nbytes ")", __FILE__, __LINE__);    \
            goto out;                                                           \
        }                                                                       \
    } while (0)

/* n rounded up to a multiple of 64 bytes (a cache line). */
#define CT_ALIGN_UP(n) (((n) + (size_t)63) & ~(size_t)63)

void *ct_malloc(size_t n);
void ct_log_mpi_error(int rc, const char *what, const char *file, int line);

#endif
