/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_standin.c - stand-ins for the GPU runtimes' pointer queries, for
 * tests/mpi/device.sh on machines without a GPU. Built three times as shared
 * objects named (and with the sonames) of the real ones: libcuda.so.1
 * (-DSTANDIN_CUDA), libamdhip64.so (-DSTANDIN_HIP) and libze_loader.so.1
 * (-DSTANDIN_ZE). Each answers its runtime's query as the real one does,
 * reporting as device (or managed) memory exactly the address ranges the test
 * program registered with standin_register(); the memory is really host
 * memory, so the MPI library can serve the calls coltune forwards.
 */
#include <stddef.h>
#include <stdint.h>

#define MAX_RANGES 16

static struct {
    uintptr_t lo, hi;
    int managed;
} ranges[MAX_RANGES];
static int nranges;
static long queries;

/* Reports [p, p + n) as device memory (managed: managed memory) from now on. */
int standin_register(const void *p, size_t n, int managed)
{
    if (nranges == MAX_RANGES)
        return -1;
    ranges[nranges].lo = (uintptr_t)p;
    ranges[nranges].hi = (uintptr_t)p + n;
    ranges[nranges].managed = managed;
    nranges++;
    return 0;
}

/* Forgets every range. */
void standin_clear(void) { nranges = 0; }

/* How many pointer queries were answered (the test checks coltune asks). */
long standin_queries(void) { return queries; }

/* 0 host, 1 device, 2 managed */
static int kind_of(const void *p)
{
    queries++;
    for (int i = 0; i < nranges; i++)
        if ((uintptr_t)p >= ranges[i].lo && (uintptr_t)p < ranges[i].hi)
            return ranges[i].managed ? 2 : 1;
    return 0;
}

#if defined(STANDIN_CUDA)
/* cuda.h: CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, IS_MANAGED = 8;
 * CU_MEMORYTYPE_DEVICE = 2 (managed memory reports it too). */
int cuPointerGetAttributes(unsigned n, int *attrs, void **data, unsigned long long ptr)
{
    int k = kind_of((const void *)(uintptr_t)ptr);
    for (unsigned i = 0; i < n; i++) {
        if (attrs[i] == 2)
            *(unsigned *)data[i] = k ? 2 : 0;
        else if (attrs[i] == 8)
            *(unsigned *)data[i] = k == 2;
    }
    return 0;
}

int cuPointerGetAttribute(void *data, int attr, unsigned long long ptr)
{
    int k = kind_of((const void *)(uintptr_t)ptr);
    if (k == 0)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    *(unsigned *)data = attr == 2 ? 2u : (unsigned)(k == 2);
    return 0;
}
#elif defined(STANDIN_HIP)
/* ROCm 6: hipMemoryTypeUnregistered 0, Device 2, Managed 3. */
typedef struct {
    int type, device;
    void *device_pointer, *host_pointer;
    int is_managed;
    unsigned allocation_flags;
} hip_attrs;

int hipRuntimeGetVersion(int *v)
{
    *v = 60200000;
    return 0;
}

int hipPointerGetAttributes(hip_attrs *a, const void *p)
{
    int k = kind_of(p);
    a->type = k == 1 ? 2 : k == 2 ? 3 : 0;
    a->device = 0;
    a->device_pointer = k ? (void *)(uintptr_t)p : NULL;
    a->host_pointer = NULL;
    a->is_managed = k == 2;
    a->allocation_flags = 0;
    return 0;
}
#elif defined(STANDIN_ZE)
/* ze_api.h: ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES = 0x17;
 * ZE_MEMORY_TYPE_UNKNOWN 0, DEVICE 2, SHARED 3; ZE_RESULT_ERROR_* != 0. */
typedef struct {
    int stype;
    void *pNext;
    int type;
    unsigned long long id, pageSize;
} ze_props;

static int initialised, contexts;
static char driver_token, context_token;

int zeInit(unsigned flags)
{
    (void)flags;
    initialised = 1;
    return 0;
}

int zeDriverGet(unsigned *count, void **drivers)
{
    if (!initialised)
        return 0x78000001; /* ZE_RESULT_ERROR_UNINITIALIZED */
    if (drivers != NULL && *count >= 1)
        drivers[0] = &driver_token;
    *count = 1;
    return 0;
}

int zeContextCreate(void *driver, const void *desc, void **context)
{
    if (driver != &driver_token || desc == NULL)
        return 0x78000004; /* ZE_RESULT_ERROR_INVALID_ARGUMENT */
    contexts++;
    *context = &context_token;
    return 0;
}

int zeContextDestroy(void *context)
{
    if (context != &context_token || contexts == 0)
        return 0x78000004;
    contexts--;
    return 0;
}

int zeMemGetAllocProperties(void *context, const void *p, ze_props *props, void **device)
{
    if (context != &context_token || contexts == 0 || props->stype != 0x17)
        return 0x78000004;
    int k = kind_of(p);
    props->type = k == 1 ? 2 : k == 2 ? 3 : 0;
    if (device != NULL)
        *device = NULL;
    return 0;
}
#else
#error "define STANDIN_CUDA, STANDIN_HIP or STANDIN_ZE"
#endif
