/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the workers of a request run (in the forked child, see worker.h): opening and
 * probing the source, building the locked mount, attaching it in the caller's mount
 * namespace, and detaching it again. The child has a private copy of the Request (or
 * Cleanup) made by fork(), and only the fds the worker kept.
 */
#pragma once

#include "manager.h"
#include "worker.h"

/* WorkerFunc (Request): probes req->source_fd with libblkid into reply->probe. */
void job_probe(void *req, WorkerReply *reply, int *ret_fd);

/*
 * WorkerFunc (Request): opens req->device_path (Mount), checks that it is a whole
 * filesystem device that nothing uses, probes it, and passes the opened fd back
 * (reply->device: the canonical node; reply->read_only: only read access was possible).
 */
void job_open_device(void *req, WorkerReply *reply, int *ret_fd);

/* WorkerFunc (Request): attaches a loop device for images and builds the locked mount (*ret_fd). */
void job_build(void *req, WorkerReply *reply, int *ret_fd);

/* WorkerFunc (Request): attaches req->mount_fd in the caller's mount namespace (reply->attach). */
void job_attach(void *req, WorkerReply *reply, int *ret_fd);

/* WorkerFunc (DetachJob): unmounts the registered mount in its namespace. */
void job_detach(void *job, WorkerReply *reply, int *ret_fd);
