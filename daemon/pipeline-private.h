/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pipeline's stages as its two files share them: pipeline.c, every request's way, and
 * pipeline-udisks.c, the UDisks2 front's LoopSetup and Eject/PowerOff.
 */
#pragma once

#include <stdbool.h>

#include "jobproto.h"
#include "request.h"
#include "workerpool.h"

/* Asks polkit for each action of req->actions still to check, one after the other (root
 * needs none), then goes on with the method (request_continue()). */
void request_authorize_next(Request *req);

/* Sends req's next job (jobproto.h) with the request timeout: to the worker that waits for
 * it, else a fresh one; last: the worker exits after it. */
void request_send_job_timeout(Request *req, RequestStage stage, JobType type,
                              const void *input, const int *fds, size_t n_fds, bool last,
                              WorkerDone done);

/* A worker's reply that does not hold together: Failed, into *e, and *error points at it. */
int reply_malformed(const UmError **error, UmError *e);

/* Whether req's source is the caller's image: an image file, or a loop device the UDisks2
 * front set up for this caller (LoopSetup). */
bool request_is_image(const Request *req);

/* pipeline-udisks.c: LoopSetup and Eject/PowerOff from their start (after the limits) and
 * from polkit's yes. */
void request_start_loop_setup(Request *req);
void request_loop_setup(Request *req);
void request_start_eject(Request *req);
void request_eject(Request *req);
