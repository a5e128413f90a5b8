/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.h - what the public entry points (api.c, sdde/mpix.c) share.
 */
#ifndef CT_API_H
#define CT_API_H

#include "select/spec.h"

/*
 * Parses the spec string a direct call was given. Returns 1 when parsed
 * into *spec, 0 for NULL (decide as the intercepted call would), and -1 when
 * it does not parse: then rank 0 of comm reports why, naming fn.
 */
int ct_api_parse_spec(const char *fn, const char *spec_text, ct_coll coll, MPI_Comm comm,
                      ct_spec *spec);

#endif
