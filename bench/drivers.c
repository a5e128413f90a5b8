/*
 * drivers.c - the collectives coltune-bench knows.
 *
 * A collective is measured through a driver (bench.h): setup builds the
 * buffers for one size, run makes one call under a spec, check compares one
 * call with the PMPI_ result, teardown frees. A collective listed here with
 * NULL functions is recognised by --coll but not available in this build;
 * adding it is one driver_<coll>.c and replacing its line below.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

/* Recognised, not yet measurable: coltune-bench exits 2 with a clear message. */
static const bench_driver allgather_inter = {"allgather_inter", BENCH_USES_GROUPS, NULL, NULL,
                                             NULL, NULL};
static const bench_driver allgatherv_inter = {"allgatherv_inter", BENCH_USES_GROUPS, NULL,
                                              NULL, NULL, NULL};
static const bench_driver alltoall_crs = {"alltoall_crs", BENCH_USES_PATTERN, NULL, NULL, NULL,
                                          NULL};
static const bench_driver alltoallv_crs = {"alltoallv_crs", BENCH_USES_PATTERN, NULL, NULL,
                                           NULL, NULL};

static const bench_driver *const drivers[] = {
    &bench_driver_alltoallv, &allgather_inter, &allgatherv_inter, &alltoall_crs, &alltoallv_crs,
};

#define NDRIVERS (sizeof drivers / sizeof drivers[0])

const bench_driver *bench_driver_find(const char *name)
{
    for (size_t i = 0; i < NDRIVERS; i++)
        if (strcmp(drivers[i]->name, name) == 0)
            return drivers[i];
    return NULL;
}

void bench_driver_names(char *buf, size_t len)
{
    size_t used = 0;
    if (len > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < NDRIVERS && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 drivers[i]->name);
}
