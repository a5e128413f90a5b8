/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers.c - the collectives coltune-bench knows.
 *
 * A collective is measured through a driver (bench.h): setup builds the
 * buffers for one size, run makes one call under a spec, check compares one
 * call with the PMPI_ result, teardown frees. A collective listed here with
 * NULL functions is recognised by --coll but not available in this build;
 * every collective of src/coll_list.h has one, bench_driver_<name> in
 * driver_<name>.c.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

static const bench_driver *const drivers[] = {
#define CT_COLLECTIVE(ID, name, call, fallback, msg_size_known) &bench_driver_##name,
#include "coll_list.h"
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
