/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * learn.h - a persistent request that learns (COLTUNE_ADAPT): its starts
 * run the candidates of a learner of its own (select/adapt.h,
 * ct_adapt_create_own), as the blocking calls' learners run them on
 * successive calls.
 *
 * Everything is made at init, the persistent call's collective step: the
 * schedule of every candidate (core/sched.h) and the MPI library's own
 * persistent request for pmpi's turns. A start then runs one of them from
 * the top: no allocation, no decision, no agreement that waits. An
 * iteration is timed from one start to the next (the application's work
 * between them counted, as the blocking learners count it between calls).
 * Where a round or a duel ends, the next start posts the learner's
 * nonblocking allreduce and the request completes only once it has: a wait
 * on a persistent collective may synchronise, as MPI allows, and a test
 * never blocks. The start after that judges it.
 */
#ifndef CT_LEARN_H
#define CT_LEARN_H

#include "core/request.h"
#include "select/adapt.h"
#include "select/decide.h"

/* What a collective's driver gives: a candidate's schedule for the call
 * (args as the request keeps them), and the MPI library's persistent
 * request for it (its own init: pmpi's turns). */
typedef struct ct_learn_ops {
    int (*build)(const void *args, ct_ctx *ctx, const ct_adapt_cand *cand, ct_sched *s);
    int (*forward_init)(const void *args, MPI_Request *lib);
} ct_learn_ops;

/* Makes r's schedule the learning step of learner l (which r owns from now,
 * even on failure): every candidate's schedule built with ops on args (the
 * request's own description, kept as long as r), on r's tag, and pmpi's
 * request made from fwd_args (the call as the application made it). */
int ct_learn_plan(ct_request *r, ct_ctx *ctx, struct ct_learner *l, const void *args,
                  const void *fwd_args, const ct_learn_ops *ops);

/* A request's schedule, as every driver makes it: with learner (r's from
 * now, even on failure), the learning step above; else the chosen
 * algorithm's schedule, built by ops on args. */
int ct_learn_schedule(ct_request *r, ct_ctx *ctx, struct ct_learner *learner,
                      const ct_choice *ch, const void *args, const void *fwd_args,
                      const ct_learn_ops *ops);

/* What a driver's start does once r is open (ct_request_open) and args
 * describe the call on r's datatypes: r's schedule (ct_learn_schedule),
 * then r to the application as *user (ct_request_launch). r and learner are
 * consumed either way. */
int ct_learn_start(ct_request *r, ct_ctx *ctx, struct ct_learner *learner,
                   const ct_choice *ch, const void *args, const void *fwd_args,
                   const ct_learn_ops *ops, MPI_Request *user);

#endif
