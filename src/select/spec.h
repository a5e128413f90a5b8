/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spec.h - algorithm specs: "name[:key=value[,key=value...]]".
 *
 * A value is an integer (with optional k/m/g suffix, powers of 1024), or an
 * expression of the communicator: P, Q, N, sqrt (= round(sqrt(P))), sqrtQ,
 * "(N-1)*Q", each optionally followed by +k or -k (e.g. "P-1", "N-1"; k is an
 * integer that may carry a suffix, |k| <= INT_MAX). The spec is parsed
 * once (rules file, environment, direct API) and resolved against a
 * communicator at call time with ct_spec_resolve().
 */
#ifndef CT_SPEC_H
#define CT_SPEC_H

#include "algorithms.h"

typedef struct ct_spec {
    const ct_algorithm *alg;
    unsigned set_mask;             /* bit i: params[i] given in the spec */
    ct_expr values[CT_MAX_PARAMS]; /* indexed like alg->params */
} ct_spec;

/* Error report of a parser: a message and the 0-based column in the parsed
 * text where the offending token starts. */
typedef struct ct_parse_error {
    int column;
    char message[512]; /* long lists of known names end in ", ...)" */
} ct_parse_error;

/*
 * Parses text[0..len) as a spec for collective coll. Returns 0 on success.
 * On error returns -1 and fills err (column relative to text). Messages:
 *   unknown algorithm 'X' for <coll> (known: a, b, c)
 *   unknown parameter 'K' for algorithm 'A' (parameters: x, y) | (takes no parameters)
 *   bad value 'V' for parameter 'K' (expected an integer or P, Q, N, sqrt, sqrtQ[+-k])
 *   value V for parameter 'K' of 'A' is out of range (MIN..MAX)
 *   parameter 'K' given twice
 *   missing '=' in parameter 'K'
 *   empty algorithm name / empty parameter
 */
int ct_spec_parse(const char *text, size_t len, ct_coll coll, ct_spec *out,
                  ct_parse_error *err);

/* A spec with every parameter at its default. */
void ct_spec_default(const ct_algorithm *alg, ct_spec *out);

/*
 * Evaluates every parameter against env into params[]. A parameter the spec
 * does not set takes the registry default (alg->params[i].def), clamped into
 * its range. Returns NULL when every value is usable, else a pointer to why
 * (filled with e.g. "radix=9 out of range 2..8 at P=8", or "radix range
 * 2..1 is empty at P=1" when the range itself is empty for this communicator).
 */
const char *ct_spec_resolve(const ct_spec *spec, const ct_shape *env, long *params,
                            char *why, size_t whylen);

/* Formats "name:key=value,..." with the resolved values (all parameters). */
void ct_spec_format_resolved(const ct_algorithm *alg, const long *params, char *buf,
                             size_t len);

/* Parses one value token (integer with k/m/g suffix, or expression). 0 on success. */
int ct_expr_parse(const char *text, size_t len, ct_expr *out);

/* Parses a non-negative size "123", "4k", "2m", "1g" (powers of 1024). 0 on success. */
int ct_size_parse(const char *text, size_t len, long *out);

#endif
