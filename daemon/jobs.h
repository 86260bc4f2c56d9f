/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the workers of a request run (in the forked child, see worker.h): probing the
 * source, and building the locked mount (loop device for images, then the recipe of
 * mountbuild.h). The child has a private copy of the Request, made by fork().
 */
#pragma once

#include "manager.h"
#include "worker.h"

/* WorkerFunc: probes req->source_fd with libblkid into reply->probe. */
void job_probe(void *req, WorkerReply *reply, int *ret_fd);

/* WorkerFunc: attaches a loop device for images and builds the locked mount (*ret_fd). */
void job_build(void *req, WorkerReply *reply, int *ret_fd);
