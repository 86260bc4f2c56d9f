/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The two requests of the UDisks2 front that have no org.freedesktop.UserMount1 twin
 * (pipeline-private.h; docs/udisks2.md): LoopSetup (a loop device of the caller's image,
 * within the loop limits, with polkit's mount-image, made by a worker that then hands over
 * the image's claim) and Eject/PowerOff (polkit as for mounting the drive, then a worker).
 */
#include <stdlib.h>

#include "limitcount.h"
#include "log.h"
#include "manager.h"
#include "pipeline-private.h"
#include "usermount-names.h"

static void on_loop_setup_done(Worker *w, int r, const void *out, const UmError *error,
                               int fd, void *userdata);
static void on_loop_claim_done(Worker *w, int r, const void *out, const UmError *error,
                               int fd, void *userdata);
static void on_eject_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata);

/* LoopSetup (the UDisks2 front): a loop device exists only to mount the image on it, so
 * it takes what mounting the image takes: a loop device within the limits, and polkit's
 * mount-image. */
void request_start_loop_setup(Request *req) {
        UmError e = {};

        req->source.type = SOURCE_IMAGE;
        req->read_only = req->call.params.read_only || req->call.source_read_only;
        if (limitcount_check_loops(req, &e) < 0)
                return request_fail(req, &e);
        req->wants_loop = true;
        req->actions[0] = UM_ACTION_MOUNT_IMAGE;
        request_authorize_next(req);
}

void request_loop_setup(Request *req) {
        LoopSetupJob job = {
                .offset = req->call.loop_offset,
                .size = req->call.loop_size,
                .read_only = req->read_only,
        };

        if (JOB_SET_STRING(job.runtime_dir, req->manager->runtime_dir) < 0)
                return request_fail_errno(req, -ENAMETOOLONG, "start setting up a loop device");
        /* The worker waits with the image's claim, for LOOP_CLAIM. */
        request_send_job_timeout(req, REQUEST_BUILDING, JOB_LOOP_SETUP, &job,
                                 &req->call.source_fd, 1, false, on_loop_setup_done);
}

static void on_loop_setup_done(Worker *w, int r, const void *out, const UmError *error,
                               int fd, void *userdata) {
        Request *req = userdata;
        const LoopSetupReply *reply = out;
        UmError e = {};

        if (r >= 0 && (fd < 0 || !JOB_STRING_OK(reply->device) ||
                       !JOB_STRING_OK(reply->backing_file) || !JOB_STRING_OK(reply->probe.fstype) ||
                       !JOB_STRING_OK(reply->probe.label) || !JOB_STRING_OK(reply->probe.uuid)))
                r = reply_malformed(&error, &e);
        if (r >= 0) {
                req->loop_reply = malloc(sizeof(LoopSetupReply));
                if (!req->loop_reply) {
                        r = um_error_set(&e, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
                        error = &e;
                }
        }
        if (r < 0) {
                req->worker = worker_release(w);
                safe_close(fd);
                return request_fail(req, error);
        }
        *req->loop_reply = *reply;
        req->mount_fd = fd; /* the loop device, until the front takes it */
        request_send_job_timeout(req, REQUEST_BUILDING, JOB_LOOP_CLAIM, NULL, NULL, 0, true,
                                 on_loop_claim_done);
}

static void on_loop_claim_done(Worker *w, int r, const void *out, const UmError *error,
                               int fd, void *userdata) {
        Request *req = userdata;
        const LoopSetupReply *reply = req->loop_reply;
        UmError e = {};

        req->worker = worker_release(w);
        if (r >= 0 && fd < 0)
                r = reply_malformed(&error, &e);
        if (r < 0) {
                safe_close(fd);
                return request_fail(req, error);
        }
        /* Counted against the caller's loop devices from now on, as an image mount's. */
        if (looptrack_add(&req->manager->loops, (dev_t) reply->devnum, reply->diskseq,
                          req->owner) < 0) {
                safe_close(fd);
                return request_fail_errno(req, -ENOMEM, "count the loop device");
        }
        req->wants_loop = false;
        log_request_mount(LOG_LEVEL_INFO, req->call.caller.uid, reply->device, "loop-setup",
                          reply->probe.fstype[0] ? reply->probe.fstype : NULL, NULL,
                          "Set up %s for uid %u (%s).", reply->device,
                          (unsigned) req->call.caller.uid,
                          req->read_only ? "read-only" : "read-write");
        req->front->loop_set_up(req, reply, TAKE_FD(req->mount_fd), fd);
        request_free(req);
}

/* Eject, PowerOff (the UDisks2 front): whoever may mount the drive may take it away
 * (mount-removable, or mount-system for a drive usermount does not judge removable). */
void request_start_eject(Request *req) {
        req->actions[0] = req->source.removable ? UM_ACTION_MOUNT_REMOVABLE
                                                : UM_ACTION_MOUNT_SYSTEM;
        request_authorize_next(req);
}

void request_eject(Request *req) {
        request_send_job_timeout(req, REQUEST_DETACHING, JOB_DRIVE_EJECT, req->eject_job, NULL,
                                 0, true, on_eject_done);
}

static void on_eject_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata) {
        Request *req = userdata;

        req->worker = worker_release(w);
        safe_close(fd);
        if (r < 0)
                return request_fail(req, error);
        log_request(LOG_LEVEL_INFO, req->call.caller.uid, req->source_path,
                    req->eject_job->power_off ? "power-off" : "eject",
                    "%s %s for uid %u.", req->eject_job->power_off ? "Powered off" : "Ejected",
                    strempty(req->source_path), (unsigned) req->call.caller.uid);
        req->front->done(req);
        request_free(req);
}
