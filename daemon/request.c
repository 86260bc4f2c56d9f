/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Request's own life (request.h): made for a call, its stage, its source, failed with
 * an answer, and freed with everything it holds.
 */
#include <stdio.h>
#include <string.h>

#include "drivertrack.h"
#include "log.h"
#include "manager.h"
#include "request-dbus.h"
#include "request.h"
#include "time-util.h"

static const char *const request_stage_names[_REQUEST_STAGE_MAX] = {
        [REQUEST_NEW] = "new",
        [REQUEST_PROBING] = "probing",
        [REQUEST_AUTHORIZING] = "authorizing",
        [REQUEST_BUILDING] = "building",
        [REQUEST_ATTACHING] = "attaching",
        [REQUEST_DETACHING] = "detaching",
        [REQUEST_DONE] = "done",
};

/* The one place a request changes stage: logged (debug) with the time the last stage took,
 * so that --debug shows where a request spends its time. */
void request_set_state(Request *req, RequestStage stage) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (stage == req->stage && stage != REQUEST_NEW)
                return;
        log_debug("%s of uid %u: %s -> %s after %.3f ms (%.3f ms since the call)",
                  strempty(sd_bus_message_get_member(req->call.message)),
                  (unsigned) req->call.caller.uid,
                  request_stage_names[req->stage], request_stage_names[stage],
                  (double) (now - req->stage_usec) / 1000.0,
                  (double) (now - req->started_usec) / 1000.0);
        req->stage = stage;
        req->stage_usec = now;
}

Request *request_new(Manager *m, CallMethod method, sd_bus_message *message) {
        Request *req = calloc(1, sizeof(*req));

        if (!req)
                return NULL;
        req->started_usec = req->stage_usec = now_usec(CLOCK_MONOTONIC);
        req->manager = m;
        req->conf = conf_ref(m->conf);
        call_init(&req->call, method, message);
        /* The fds the caller attached stay open for the request (busfds.h). */
        busfds_claim(manager_busfds_of(m, message), message, (uid_t) -1);
        req->userns_fd = -EBADF;
        req->device_fd = -EBADF;
        req->mount_fd = -EBADF;
        req->loop_setup_by = (uid_t) -1;
        return req;
}

static void request_unlink(Request *req) {
        Manager *m = req->manager;

        if (!req->prev && m->requests != req)
                return; /* not linked */
        if (req->prev)
                req->prev->next = req->next;
        else
                m->requests = req->next;
        if (req->next)
                req->next->prev = req->prev;
        req->next = req->prev = NULL;
        m->n_requests--;
}

Request *request_free(Request *req) {
        if (!req)
                return NULL;
        request_set_state(req, REQUEST_DONE);
        request_unlink(req);
        worker_release(req->worker);
        driverscope_free(req->scope);
        /* A driver started for a request that did not get its mount goes. */
        if (req->driver_pid > 0)
                (void) drivertrack_kill(&req->manager->drivers, req->driver_pid,
                                        req->driver_start);
        free(req->build_job);
        free(req->eject_job);
        free(req->loop_reply);
        sd_bus_slot_unref(req->polkit_slot);
        request_drop_userns(req);
        /* The caller's fds are the message's: let go of off the main loop (busfds.h). */
        busfds_release(manager_busfds_of(req->manager, req->call.message), req->call.message);
        call_done(&req->call);
        safe_close(req->device_fd);
        safe_close(req->mount_fd);
        free(req->source_path);
        mount_options_done(&req->mount_options);
        mount_record_free(req->record);
        conf_unref(req->conf);
        free(req);
        return NULL;
}

/* The namespace of idmap "namespace" is needed no more: closed if the daemon opened it
 * (the caller's own), forgotten if the caller passed it (the message's, busfds.h). */
void request_drop_userns(Request *req) {
        if (!req->call.params.userns_given)
                safe_close(req->userns_fd);
        req->userns_fd = -EBADF;
}

/* The source's fd: the device the probe worker opened (Mount), else the caller's. */
int request_source_fd(const Request *req) {
        return req->device_fd >= 0 ? req->device_fd : req->call.source_fd;
}

/* What the source is, for logs, polkit details and the build: the device node the probe
 * found (Mount), else what the caller's fd referred to; NULL before Mount's probe. */
const char *request_source_path(const Request *req) {
        return req->source_path ?: req->call.source_path;
}

const char *request_what(const Request *req) {
        if (req->call.device_path)
                return req->call.device_path;
        if (req->call.unmount_point)
                return req->call.unmount_point;
        return strempty(request_source_path(req));
}

void request_fail(Request *req, const UmError *error) {
        char what[256];

        um_escape(request_what(req), what, sizeof(what));
        log_request_mount(LOG_LEVEL_INFO, req->call.caller.uid, what, "refuse",
                          req->probe.fstype[0] ? req->probe.fstype : NULL, req->call.unmount_point,
                          "Refused %s of uid %u for %s: %s",
                          sd_bus_message_get_member(req->call.message),
                          (unsigned) req->call.caller.uid, what, error->message);
        /* A refused Subscribe leaves no subscription behind. */
        if (req->call.method == METHOD_SUBSCRIBE && req->subscribed)
                (void) subscribers_remove(&req->manager->subscribers,
                                          sd_bus_message_get_sender(req->call.message));
        if (req->front)
                req->front->failed(req, error);
        else
                (void) bus_reply_error(req->call.message, error);
        request_free(req);
}

void request_fail_errno(Request *req, int r, const char *what) {
        UmError error = {};

        um_error_set(&error, UM_ERROR_KIND_FAILED, r, "Could not %s: %s.", what, strerror(-r));
        request_fail(req, &error);
}

void request_link(Request *req) {
        Manager *m = req->manager;

        req->next = m->requests;
        if (m->requests)
                m->requests->prev = req;
        m->requests = req;
        m->n_requests++;
}

void request_free_all(Manager *m) {
        while (m && m->requests)
                request_free(m->requests);
}
