/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.h - is a buffer GPU device (or managed) memory?
 *
 * coltune's algorithms copy with the CPU, so a call whose buffer lives on a
 * GPU is the MPI library's (a GPU-aware MPI serves it). Three runtimes are
 * recognised, only when the process itself has loaded them: coltune links
 * none and never loads one. Each is found among the loaded objects by its
 * file name, opened with dlopen(RTLD_NOLOAD) and asked through dlsym:
 *   CUDA        libcuda.so*        cuPointerGetAttributes (MEMORY_TYPE,
 *                                  IS_MANAGED), else cuPointerGetAttribute
 *   HIP         libamdhip64.so*    hipPointerGetAttributes
 *   Level Zero  libze_loader.so*   zeMemGetAllocProperties, with a context
 *                                  coltune creates per driver on first use
 * The loaded objects are counted by glibc (dl_iterate_phdr's dlpi_adds and
 * dlpi_subs): the runtimes are looked for again only when that count has
 * changed, so a runtime loaded after MPI_Init is found, and with none loaded
 * a check costs one dl_iterate_phdr callback and nothing else.
 */
#ifndef CT_DEVICE_H
#define CT_DEVICE_H

#include "core/ct_common.h"
#include "core/datatype.h"

/* The runtimes, as bits of a mask. */
#define CT_DEV_CUDA 0x1u
#define CT_DEV_HIP 0x2u
#define CT_DEV_ZE 0x4u

#define CT_DEV_MAX_ZE_DRIVERS 8

/* What the process-wide state (core/state.h) keeps for this module. */
typedef struct ct_device_state {
    unsigned long long objects; /* dlpi_adds + dlpi_subs when last looked */
    int looked;                 /* looked for the runtimes at least once */
    unsigned loaded;            /* CT_DEV_* runtimes found (their handles held) */
    void *handle[3];
    int (*cu_attrs)(unsigned n, int *attrs, void **data, unsigned long long ptr);
    int (*cu_attr)(void *data, int attr, unsigned long long ptr);
    int (*hip_attrs)(void *attrs, const void *ptr);
    int hip_version; /* hipRuntimeGetVersion, 0 unknown */
    int (*ze_init)(unsigned flags);
    int (*ze_driver_get)(unsigned *count, void **drivers);
    int (*ze_context_create)(void *driver, const void *desc, void **context);
    int (*ze_context_destroy)(void *context);
    int (*ze_props)(void *context, const void *ptr, void *props, void **device);
    int ze_ready;   /* 0 not tried, 1 contexts made, -1 failed */
    int ze_ncontexts;
    void *ze_context[CT_DEV_MAX_ZE_DRIVERS];
} ct_device_state;

/* The CT_DEV_* runtimes this process has loaded now (rank-local; cheap). */
unsigned ct_device_runtimes(void);

/* The runtime (one CT_DEV_* bit) that reports p as device or managed memory,
 * 0 for host memory, NULL, MPI_IN_PLACE, or when no runtime is loaded. Call
 * after ct_device_runtimes() returned nonzero. */
unsigned ct_device_memory(const void *p);

/* The same for one side of a call, n blocks of type (counts and
 * displacements as the call's): the address of its first non-empty block,
 * since a buffer without data is not device memory, whatever its address. */
unsigned ct_blocks_device(const void *buf, int n, const ct_vec *counts, const ct_vec *displs,
                          MPI_Datatype type);

/* "CUDA", "HIP", "Level Zero", or "GPU" for a mask of several or none. */
const char *ct_device_name(unsigned mask);

/* Destroys coltune's Level Zero contexts and drops the handles (at the end). */
void ct_device_release(void);

#endif
