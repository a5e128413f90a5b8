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

/* The kind of communicator a direct call takes (ct_api_begin). */
typedef enum ct_api_comm { CT_API_INTRA, CT_API_INTER, CT_API_ANY } ct_api_comm;

/*
 * Where every direct call (coltune_*, MPIX_*) that takes a communicator
 * begins: initialises coltune if MPI_Init was not seen (the one lazy path:
 * ct_shim_active), and returns MPI_SUCCESS when comm is of the kind the call
 * takes, else the error the call returns (MPI_ERR_COMM for MPI_COMM_NULL or
 * the wrong kind).
 */
int ct_api_begin(MPI_Comm comm, ct_api_comm kind);

#endif
