/* SPDX-License-Identifier: BSD-3-Clause */
/* list_algorithms.c - prints "collective name" for every registered
 * algorithm, for the test scripts (no MPI runtime needed). */
#include <stdio.h>

#include "coltune.h"

int main(void)
{
    for (int i = 0; i < coltune_algorithm_count(); i++) {
        const char *coll, *name;
        int np;
        if (coltune_algorithm_info(i, &coll, &name, &np) == 0)
            printf("%s %s\n", coll, name);
    }
    return 0;
}
