/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h - coltune's messages. Every line starts with "coltune[<rank>]: " on
 * stderr, where rank is the MPI_COMM_WORLD rank when known.
 */
#ifndef CT_LOG_H
#define CT_LOG_H

#include "core/ct_common.h"

/* Prints one line. */
void ct_log(const char *fmt, ...) CT_PRINTF(1, 2);

/* Prints one line unless this exact text was printed before by this process
 * (a warning per distinct reason). Thread safe. */
void ct_log_once(const char *fmt, ...) CT_PRINTF(1, 2);

/* Remembers the world rank for the message prefix. */
void ct_log_set_rank(int rank);

#endif
