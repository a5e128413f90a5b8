/*
 * shim.h - what the interception files share. src/shim is the only place
 * that defines MPI_* symbols and forwards the user's calls to PMPI_*.
 */
#ifndef CT_SHIM_H
#define CT_SHIM_H

#include "core/ct_common.h"

/* Initialises coltune if MPI_Init was never seen (sessions, or a call made
 * before anything else) and says whether coltune should serve a call on
 * comm: not when disabled, finalizing, or comm is MPI_COMM_NULL. */
int ct_shim_active(MPI_Comm comm);

/* Hands a failure to the error handler of the user's communicator, as the
 * MPI library itself would, and returns rc. */
int ct_shim_return(MPI_Comm comm, int rc);

#endif
