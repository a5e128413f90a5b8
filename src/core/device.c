/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * device.c - GPU device memory detection through the runtimes the process
 * has loaded (see device.h). The runtimes' types are not included: the few
 * constants and layouts used are those of their public headers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dl_iterate_phdr, RTLD_NOLOAD */
#endif
#include "core/device.h"
#include "core/log.h"
#include "core/state.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h */
enum { CU_ATTR_MEMORY_TYPE = 2, CU_ATTR_IS_MANAGED = 8 };
enum { CU_MEMTYPE_DEVICE = 2, CU_MEMTYPE_ARRAY = 3 };
/* hip_runtime_api.h: hipMemoryType changed with ROCm 6 (version 60000000). */
enum { HIP6_DEVICE = 2, HIP6_MANAGED = 3, HIP6_ARRAY = 10, HIP5_DEVICE = 1, HIP5_ARRAY = 2 };
/* ze_api.h */
enum { ZE_STYPE_CONTEXT_DESC = 0xd, ZE_STYPE_MEMORY_ALLOCATION_PROPERTIES = 0x17 };
enum { ZE_MEMTYPE_DEVICE = 2, ZE_MEMTYPE_SHARED = 3 };

typedef struct ze_context_desc {
    int stype;
    const void *pNext;
    unsigned flags;
} ze_context_desc;

typedef struct ze_alloc_props {
    int stype;
    void *pNext;
    int type;
    unsigned long long id, pageSize;
} ze_alloc_props;

/* hipPointerAttribute_t, ROCm 5 and 6 alike: type (memoryType), device,
 * devicePointer, hostPointer, isManaged, allocationFlags. Room to spare in
 * case a release appends fields. */
typedef union hip_attrs {
    struct {
        int type, device;
        void *device_pointer, *host_pointer;
        int is_managed;
        unsigned allocation_flags;
    } f;
    unsigned char room[256];
} hip_attrs;

/* ------------------------------------------------------------------ */
/* Finding the runtimes                                                */
/* ------------------------------------------------------------------ */

/* The GPU runtimes the process has loaded, under ct_state_lock. */
static ct_device_state the_device;

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs;
    return 1; /* the counters are the same in every entry: stop at the first */
}

/*
 * The objects the process has loaded whose file name starts with one of the
 * runtimes' library names (libcuda.so.1, libcuda.so.550.54.14, ...): found
 * by walking the loaded objects, which costs no system call, unlike a
 * dlopen(RTLD_NOLOAD) by bare name, which searches the library path.
 */
static const char *const lib_prefix[3] = {"libcuda.so", "libamdhip64.so", "libze_loader.so"};

typedef struct lib_paths {
    char path[3][PATH_MAX];
} lib_paths;

static int find_paths(struct dl_phdr_info *info, size_t size, void *arg)
{
    lib_paths *lp = arg;
    const char *name = info->dlpi_name, *slash;
    (void)size;
    if (name == NULL || *name == '\0')
        return 0;
    slash = strrchr(name, '/');
    for (int i = 0; i < 3; i++)
        if (lp->path[i][0] == '\0' && strncmp(slash ? slash + 1 : name, lib_prefix[i],
                                                strlen(lib_prefix[i])) == 0)
            snprintf(lp->path[i], sizeof lp->path[i], "%s", name);
    return 0;
}

/* A handle of runtime i if the process has loaded it (taking a reference,
 * which keeps it loaded until ct_device_release), else NULL. */
static void *loaded(const lib_paths *lp, int i)
{
    if (lp->path[i][0] == '\0')
        return NULL;
    return dlopen(lp->path[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
}

static void *sym(void *h, const char *name) { return dlsym(h, name); }

/* Publishes a runtime whose functions are set: ct_device_memory() reads the
 * mask without the lock. */
static void found(ct_device_state *d, unsigned bit)
{
    __atomic_fetch_or(&d->loaded, bit, __ATOMIC_RELEASE);
}

static void find_cuda(ct_device_state *d, const lib_paths *lp)
{
    void *h = loaded(lp, 0);
    if (h == NULL)
        return;
    *(void **)&d->cu_attrs = sym(h, "cuPointerGetAttributes");
    *(void **)&d->cu_attr = sym(h, "cuPointerGetAttribute");
    if (d->cu_attrs == NULL && d->cu_attr == NULL) {
        dlclose(h);
        return;
    }
    d->handle[0] = h;
    found(d, CT_DEV_CUDA);
}

static void find_hip(ct_device_state *d, const lib_paths *lp)
{
    int (*version)(int *v) = NULL;
    void *h = loaded(lp, 1);
    if (h == NULL)
        return;
    *(void **)&d->hip_attrs = sym(h, "hipPointerGetAttributes");
    if (d->hip_attrs == NULL) {
        dlclose(h);
        return;
    }
    *(void **)&version = sym(h, "hipRuntimeGetVersion");
    if (version == NULL || version(&d->hip_version) != 0)
        d->hip_version = 0;
    d->handle[1] = h;
    found(d, CT_DEV_HIP);
}

static void find_ze(ct_device_state *d, const lib_paths *lp)
{
    void *h = loaded(lp, 2);
    if (h == NULL)
        return;
    *(void **)&d->ze_init = sym(h, "zeInit");
    *(void **)&d->ze_driver_get = sym(h, "zeDriverGet");
    *(void **)&d->ze_context_create = sym(h, "zeContextCreate");
    *(void **)&d->ze_context_destroy = sym(h, "zeContextDestroy");
    *(void **)&d->ze_props = sym(h, "zeMemGetAllocProperties");
    if (!d->ze_init || !d->ze_driver_get || !d->ze_context_create || !d->ze_context_destroy ||
        !d->ze_props) {
        dlclose(h);
        return;
    }
    d->handle[2] = h;
    found(d, CT_DEV_ZE);
}

/* Looks for the runtimes not found yet among the loaded objects. */
static void look_for_runtimes(ct_device_state *d)
{
    lib_paths *lp = calloc(1, sizeof *lp);
    if (lp == NULL)
        return; /* tried again on the next call */
    dl_iterate_phdr(find_paths, lp);
    if (!(d->loaded & CT_DEV_CUDA))
        find_cuda(d, lp);
    if (!(d->loaded & CT_DEV_HIP))
        find_hip(d, lp);
    if (!(d->loaded & CT_DEV_ZE))
        find_ze(d, lp);
    free(lp);
    unsigned long long objects = 0;
    dl_iterate_phdr(count_objects, &objects);
    __atomic_store_n(&d->objects, objects, __ATOMIC_RELAXED);
    __atomic_store_n(&d->looked, 1, __ATOMIC_RELEASE);
}

unsigned ct_device_runtimes(void)
{
    ct_state *st = ct_state_get();
    ct_device_state *d = &the_device;
    const unsigned all = CT_DEV_CUDA | CT_DEV_HIP | CT_DEV_ZE;
    unsigned long long objects = 0;
    unsigned mask;
    dl_iterate_phdr(count_objects, &objects);
    /* Nothing loaded or unloaded since the last look: no lock either. */
    if (__atomic_load_n(&d->looked, __ATOMIC_ACQUIRE) &&
        objects == __atomic_load_n(&d->objects, __ATOMIC_RELAXED))
        return __atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE);
    ct_state_lock(st);
    /* A runtime once found stays (coltune holds its handle): look again for
     * the others only when objects were loaded or unloaded since. */
    if ((!d->looked || objects != d->objects) && d->loaded != all)
        look_for_runtimes(d);
    mask = d->loaded;
    ct_state_unlock(st);
    return mask;
}

/* ------------------------------------------------------------------ */
/* Asking them                                                         */
/* ------------------------------------------------------------------ */

static int cuda_device(const ct_device_state *d, const void *p)
{
    unsigned memtype = 0, managed = 0;
    const unsigned long long ptr = (unsigned long long)(uintptr_t)p;
    if (d->cu_attrs != NULL) {
        /* Not an error for host memory: the values are left 0. */
        int attrs[2] = {CU_ATTR_MEMORY_TYPE, CU_ATTR_IS_MANAGED};
        void *data[2] = {&memtype, &managed};
        if (d->cu_attrs(2, attrs, data, ptr) != 0)
            return 0;
    } else if (d->cu_attr(&memtype, CU_ATTR_MEMORY_TYPE, ptr) != 0) {
        return 0; /* CUDA_ERROR_INVALID_VALUE: not CUDA memory */
    } else if (d->cu_attr(&managed, CU_ATTR_IS_MANAGED, ptr) != 0) {
        managed = 0;
    }
    return memtype == CU_MEMTYPE_DEVICE || memtype == CU_MEMTYPE_ARRAY || managed != 0;
}

static int hip_device(const ct_device_state *d, const void *p)
{
    hip_attrs a;
    memset(&a, 0, sizeof a);
    if (d->hip_attrs(&a, p) != 0)
        return 0; /* hipErrorInvalidValue (ROCm 5): not HIP memory */
    if (a.f.is_managed)
        return 1;
    if (d->hip_version != 0 && d->hip_version < 60000000)
        return a.f.type == HIP5_DEVICE || a.f.type == HIP5_ARRAY;
    return a.f.type == HIP6_DEVICE || a.f.type == HIP6_MANAGED || a.f.type == HIP6_ARRAY;
}

/* coltune's own context on every driver, made once (under the state lock). */
static int ze_contexts(ct_device_state *d)
{
    void *drivers[CT_DEV_MAX_ZE_DRIVERS];
    unsigned n = 0;
    const ze_context_desc desc = {ZE_STYPE_CONTEXT_DESC, NULL, 0};
    if (d->ze_ready != 0)
        return d->ze_ready > 0;
    d->ze_ready = -1;
    if (d->ze_init(0) != 0 || d->ze_driver_get(&n, NULL) != 0 || n == 0)
        return 0;
    n = n < CT_DEV_MAX_ZE_DRIVERS ? n : CT_DEV_MAX_ZE_DRIVERS;
    if (d->ze_driver_get(&n, drivers) != 0)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (d->ze_context_create(drivers[i], &desc, &d->ze_context[d->ze_ncontexts]) == 0)
            d->ze_ncontexts++;
    d->ze_ready = d->ze_ncontexts > 0 ? 1 : -1;
    return d->ze_ready > 0;
}

static int ze_device(ct_device_state *d, const void *p)
{
    ct_state *st = ct_state_get();
    ct_state_lock(st);
    int ready = ze_contexts(d);
    ct_state_unlock(st);
    if (!ready) {
        ct_log_once("Level Zero is loaded but coltune could not create a context to ask "
                    "it about buffers; its device memory is not recognised");
        return 0;
    }
    for (int i = 0; i < d->ze_ncontexts; i++) {
        ze_alloc_props props = {ZE_STYPE_MEMORY_ALLOCATION_PROPERTIES, NULL, 0, 0, 0};
        void *device = NULL;
        if (d->ze_props(d->ze_context[i], p, &props, &device) == 0 &&
            (props.type == ZE_MEMTYPE_DEVICE || props.type == ZE_MEMTYPE_SHARED))
            return 1;
    }
    return 0;
}

unsigned ct_device_memory(const void *p)
{
    ct_device_state *d = &the_device;
    const unsigned loaded = __atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE);
    if (p == NULL || p == MPI_IN_PLACE)
        return 0;
    if ((loaded & CT_DEV_CUDA) && cuda_device(d, p))
        return CT_DEV_CUDA;
    if ((loaded & CT_DEV_HIP) && hip_device(d, p))
        return CT_DEV_HIP;
    if ((loaded & CT_DEV_ZE) && ze_device(d, p))
        return CT_DEV_ZE;
    return 0;
}

const char *ct_device_name(unsigned mask)
{
    switch (mask) {
    case CT_DEV_CUDA:
        return "CUDA";
    case CT_DEV_HIP:
        return "HIP";
    case CT_DEV_ZE:
        return "Level Zero";
    default:
        return "GPU";
    }
}

void ct_device_release(void)
{
    ct_device_state *d = &the_device;
    for (int i = 0; i < d->ze_ncontexts; i++)
        d->ze_context_destroy(d->ze_context[i]);
    for (int i = 0; i < 3; i++)
        if (d->handle[i] != NULL)
            dlclose(d->handle[i]);
    memset(d, 0, sizeof *d);
}

unsigned ct_blocks_device(const void *buf, int n, const ct_vec *counts, const ct_vec *displs,
                          MPI_Datatype type)
{
    ct_typeinfo t;
    for (int j = 0; j < n; j++) {
        if (ct_vec_at(counts, j) <= 0)
            continue;
        if (ct_type_info(type, &t) != MPI_SUCCESS)
            return 0; /* the MPI library will say what is wrong */
        return ct_device_memory(ct_elem_ptr(buf, (MPI_Aint)ct_vec_at(displs, j), t.extent) +
                                t.true_lb);
    }
    return 0;
}
