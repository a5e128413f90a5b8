/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_device.c - a plain MPI program (not linked with coltune) for
 * tests/mpi/device.sh: after MPI_Init it loads a GPU runtime stand-in
 * (tests/mpi/gpu_standin.c; argv[1], or "none") and makes calls some of whose
 * buffers the stand-in reports as device or managed memory. Every result is
 * compared byte for byte with the PMPI_ routine's on the same input. The
 * script reads coltune's statistics to see which calls were forwarded.
 * "rank0:STANDIN.so" loads the stand-in on rank 0 only (the other ranks have
 * no GPU runtime, and no device memory). "late:STANDIN.so" makes one host
 * MPI_Alltoallv first, so coltune's context of MPI_COMM_WORLD exists before
 * the runtime is loaded (with COLTUNE_DEVICE=always it must still agree).
 *
 * Calls, in order (D: a buffer reported as device memory):
 *   MPI_Alltoallv   host; D send on every rank; D (managed) receive on rank 1
 *                   only; all counts zero with D buffers (no data: host);
 *                   MPI_IN_PLACE with D receive on rank 0; MPI_IN_PLACE host
 *   MPI_Alltoallv_c (MPI-4 libraries) D receive on rank 0 only; the program
 *                   then prints "gpu_device: large-count"
 *   MPI_Alltoall    host; D send on rank 0 only
 *   MPI_Allgather   (intercommunicator) host; D receive on the last rank
 *   coltune_alltoallv("pairwise", ...) with D send on every rank (preloaded)
 *   MPIX_Alltoall_crs with D sendvals on rank 0: every rank gets an error,
 *                   rank 0 MPI_ERR_BUFFER (preloaded)
 * Prints "gpu_device: ok" on rank 0 when everything matched.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*register_fn)(const void *p, size_t n, int managed);
typedef void (*clear_fn)(void);
typedef int (*a2av_api_fn)(const char *spec, const void *sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm);
typedef int (*xcomm_init_fn)(void **xcomm, MPI_Comm comm);
typedef int (*xcomm_free_fn)(void **xcomm);
typedef int (*crs_fn)(int send_nnz, const int *dest, int sendcount, MPI_Datatype sendtype,
                      const void *sendvals, int *recv_nnz, int *src, int recvcount,
                      MPI_Datatype recvtype, void *recvvals, void *xinfo, void *xcomm);

static int me, P, failures;
static register_fn reg;
static clear_fn clear;

/* Reports [p, p + n) as device memory on rank `on` (-1: every rank). */
static void mark(int on, const void *p, size_t n, int managed)
{
    if (reg != NULL && (on < 0 || on == me))
        reg(p, n, managed);
}

static void unmark(void)
{
    if (clear != NULL)
        clear();
}

static void compare(const char *what, const void *got, const void *want, size_t n)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++) {
        if (g[i] != w[i]) {
            fprintf(stderr, "gpu_device: rank %d: %s: byte %zu is %d, PMPI_ gave %d\n", me,
                    what, i, g[i], w[i]);
            failures++;
            return;
        }
    }
}

enum { NONE = -2, ALL = -1 };

/* One MPI_Alltoallv of ints: counts (me + j) % 3 + 1 (symmetric, so
 * MPI_IN_PLACE works) or all zero; D on rank dev (recv: managed). */
static void alltoallv_case(const char *what, int dev, int recv_side, int zero, int inplace)
{
    int *c = malloc(P * sizeof(int)), *d = malloc(P * sizeof(int)), n = 0;
    for (int j = 0; j < P; j++) {
        c[j] = zero ? 0 : (me + j) % 3 + 1;
        d[j] = n;
        n += c[j];
    }
    size_t bytes = (size_t)(n + 16) * sizeof(int);
    int *s = malloc(bytes), *r = malloc(bytes), *want = malloc(bytes);
    for (int i = 0; i < n + 16; i++) {
        s[i] = me * 1000 + i;
        r[i] = want[i] = inplace ? s[i] : -1;
    }
    PMPI_Alltoallv(inplace ? MPI_IN_PLACE : s, c, d, MPI_INT, want, c, d, MPI_INT,
                   MPI_COMM_WORLD);
    if (dev != NONE)
        mark(dev, recv_side ? (void *)r : (void *)s, bytes, recv_side);
    MPI_Alltoallv(inplace ? MPI_IN_PLACE : s, c, d, MPI_INT, r, c, d, MPI_INT, MPI_COMM_WORLD);
    unmark();
    compare(what, r, want, bytes);
    free(c);
    free(d);
    free(s);
    free(r);
    free(want);
}

#if MPI_VERSION >= 4
/* The large-count form reaches the same driver. */
static void alltoallv_c_case(void)
{
    MPI_Count *c = malloc(P * sizeof(MPI_Count));
    MPI_Aint *d = malloc(P * sizeof(MPI_Aint));
    int *s = malloc(P * sizeof(int)), *r = malloc(P * sizeof(int)), *want = malloc(P * sizeof(int));
    for (int j = 0; j < P; j++) {
        c[j] = 1;
        d[j] = j;
        s[j] = me * 11 + j;
    }
    PMPI_Alltoallv_c(s, c, d, MPI_INT, want, c, d, MPI_INT, MPI_COMM_WORLD);
    mark(0, r, P * sizeof(int), 0);
    MPI_Alltoallv_c(s, c, d, MPI_INT, r, c, d, MPI_INT, MPI_COMM_WORLD);
    unmark();
    compare("alltoallv_c device recv, rank 0 only", r, want, P * sizeof(int));
    if (me == 0)
        printf("gpu_device: large-count\n");
    free(c);
    free(d);
    free(s);
    free(r);
    free(want);
}
#endif

static void alltoall_case(const char *what, int dev)
{
    int *s = malloc(2 * P * sizeof(int)), *r = malloc(2 * P * sizeof(int));
    int *want = malloc(2 * P * sizeof(int));
    for (int i = 0; i < 2 * P; i++)
        s[i] = me * 100 + i;
    PMPI_Alltoall(s, 2, MPI_INT, want, 2, MPI_INT, MPI_COMM_WORLD);
    if (dev != NONE)
        mark(dev, s, 2 * P * sizeof(int), 0);
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, MPI_COMM_WORLD);
    unmark();
    compare(what, r, want, 2 * P * sizeof(int));
    free(s);
    free(r);
    free(want);
}

/* Even and odd ranks, joined by an intercommunicator. */
static void allgather_inter_cases(void)
{
    MPI_Comm local, inter;
    int remote;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 77, &inter);
    MPI_Comm_remote_size(inter, &remote);
    int s[3] = {me, me * 10, me * 100}, *r = malloc(3 * remote * sizeof(int));
    int *want = malloc(3 * remote * sizeof(int));
    PMPI_Allgather(s, 3, MPI_INT, want, 3, MPI_INT, inter);
    for (int dev = NONE; dev <= P - 1; dev += P + 1) { /* NONE, then rank P - 1 */
        memset(r, 0xff, 3 * remote * sizeof(int));
        if (dev != NONE)
            mark(dev, r, 3 * remote * sizeof(int), 0);
        MPI_Allgather(s, 3, MPI_INT, r, 3, MPI_INT, inter);
        unmark();
        compare(dev == NONE ? "allgather inter host" : "allgather inter device", r, want,
                3 * remote * sizeof(int));
    }
    free(r);
    free(want);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

/* The direct API with an explicit algorithm: device memory is forwarded too. */
static void direct_api_case(void)
{
    a2av_api_fn api;
    *(void **)&api = dlsym(RTLD_DEFAULT, "coltune_alltoallv");
    if (api == NULL)
        return; /* not preloaded */
    int *c = malloc(P * sizeof(int)), *d = malloc(P * sizeof(int));
    int *s = malloc(P * sizeof(int)), *r = malloc(P * sizeof(int)), *want = malloc(P * sizeof(int));
    for (int j = 0; j < P; j++) {
        c[j] = 1;
        d[j] = j;
        s[j] = me * 7 + j;
    }
    PMPI_Alltoallv(s, c, d, MPI_INT, want, c, d, MPI_INT, MPI_COMM_WORLD);
    mark(ALL, s, P * sizeof(int), 0);
    int rc = api("pairwise", s, c, d, MPI_INT, r, c, d, MPI_INT, MPI_COMM_WORLD);
    unmark();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "gpu_device: rank %d: coltune_alltoallv returned %d\n", me, rc);
        failures++;
    }
    compare("coltune_alltoallv pairwise device", r, want, P * sizeof(int));
    free(c);
    free(d);
    free(s);
    free(r);
    free(want);
}

/* MPIX_Alltoall_crs has no MPI routine: device sendvals on rank 0 is an
 * error on every rank (agreed), MPI_ERR_BUFFER on rank 0; no rank hangs. */
static void crs_case(void)
{
    xcomm_init_fn init;
    xcomm_free_fn xfree;
    crs_fn crs;
    void *xcomm = NULL;
    *(void **)&init = dlsym(RTLD_DEFAULT, "MPIX_Comm_init");
    *(void **)&xfree = dlsym(RTLD_DEFAULT, "MPIX_Comm_free");
    *(void **)&crs = dlsym(RTLD_DEFAULT, "MPIX_Alltoall_crs");
    int loaded = reg != NULL, any;
    MPI_Allreduce(&loaded, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (init == NULL || xfree == NULL || crs == NULL || !any)
        return; /* not preloaded, or nothing can be device memory */
    int dest = (me + 1) % P, val = me, src = -1, got = -1, nnz = 1, cls = -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    init(&xcomm, MPI_COMM_WORLD);
    mark(0, &val, sizeof val, 0);
    int rc = crs(1, &dest, 1, MPI_INT, &val, &nnz, &src, 1, MPI_INT, &got, NULL, xcomm);
    unmark();
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || (me == 0 && cls != MPI_ERR_BUFFER)) {
        fprintf(stderr, "gpu_device: rank %d: MPIX_Alltoall_crs with device sendvals on rank "
                        "0 returned class %d\n", me, rc == MPI_SUCCESS ? 0 : cls);
        failures++;
    }
    /* The same call on host memory works afterwards. */
    nnz = 1;
    rc = crs(1, &dest, 1, MPI_INT, &val, &nnz, &src, 1, MPI_INT, &got, NULL, xcomm);
    if (rc != MPI_SUCCESS || nnz != 1 || got != (me - 1 + P) % P) {
        fprintf(stderr, "gpu_device: rank %d: MPIX_Alltoall_crs on host memory failed\n", me);
        failures++;
    }
    xfree(&xcomm);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void load_standin(const char *path)
{
    void *h;
    if (strncmp(path, "late:", 5) == 0)
        path += 5;
    if (strcmp(path, "none") == 0)
        return;
    if (strncmp(path, "rank0:", 6) == 0) {
        if (me != 0)
            return;
        path += 6;
    }
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "gpu_device: %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *(void **)&reg = dlsym(h, "standin_register");
    *(void **)&clear = dlsym(h, "standin_clear");
    if (reg == NULL || clear == NULL) {
        fprintf(stderr, "gpu_device: %s is not a stand-in\n", path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc != 2 || P < 2) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np P>=2 gpu_device [rank0:]STANDIN.so|none\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (strncmp(argv[1], "late:", 5) == 0)
        alltoallv_case("alltoallv host (before loading)", NONE, 0, 0, 0);
    load_standin(argv[1]);
    alltoallv_case("alltoallv host", NONE, 0, 0, 0);
    alltoallv_case("alltoallv device send, every rank", ALL, 0, 0, 0);
    alltoallv_case("alltoallv managed recv, rank 1 only", 1, 1, 0, 0);
    alltoallv_case("alltoallv zero counts, device buffers", ALL, 0, 1, 0);
    alltoallv_case("alltoallv in place, device recv on rank 0", 0, 1, 0, 1);
    alltoallv_case("alltoallv in place host", NONE, 0, 0, 1);
#if MPI_VERSION >= 4
    alltoallv_c_case();
#endif
    alltoall_case("alltoall host", NONE);
    alltoall_case("alltoall device send, rank 0 only", 0);
    allgather_inter_cases();
    direct_api_case();
    crs_case();
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && all == 0)
        printf("gpu_device: ok\n");
    MPI_Finalize();
    return all != 0;
}
