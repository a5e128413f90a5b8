/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers.c - the collectives coltune-bench knows.
 *
 * A collective is measured through a driver (bench.h): setup builds the
 * buffers for one size, run makes one call under a spec, check compares one
 * call with the PMPI_ result, teardown frees. A collective listed here with
 * NULL functions is recognised by --coll but not available in this build;
 * adding one is a driver_<coll>.c and a line below.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static const bench_driver *const drivers[] = {
    &bench_driver_alltoallv,     &bench_driver_alltoall,       &bench_driver_allgather_inter, &bench_driver_allgatherv_inter,
    &bench_driver_alltoall_crs, &bench_driver_alltoallv_crs,
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
