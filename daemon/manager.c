/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager and the life of a Request: limits, probe worker, policy, polkit, build
 * worker, reply. Everything before authorization is free of side effects on the system
 * (probing only reads the source); everything after it works on fds, never on paths the
 * caller controls.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "authorize.h"
#include "bus.h"
#include "config.h"
#include "jobs.h"
#include "log.h"
#include "manager.h"
#include "usermount-names.h"

#define DEFAULT_MAX_REQUESTS 64
#define DEFAULT_MAX_REQUESTS_PER_UID 8
#define DEFAULT_WORKER_TIMEOUT_USEC (30ULL * 1000000ULL)

int manager_new(Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->max_requests = DEFAULT_MAX_REQUESTS;
        m->max_requests_per_uid = DEFAULT_MAX_REQUESTS_PER_UID;
        m->worker_timeout_usec = DEFAULT_WORKER_TIMEOUT_USEC;
        m->runtime_dir = strdup(USERMOUNT_RUNDIR);
        if (!m->runtime_dir)
                return -ENOMEM;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        while (m->requests)
                request_free(m->requests);
        sd_bus_slot_unref(m->object_slot);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        free(m->runtime_dir);
        free(m);
        return NULL;
}

int manager_prepare_runtime_dir(Manager *m) {
        struct stat st;

        /* Workers stage mounts over this directory in their private namespaces. */
        if (mkdir(m->runtime_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(-errno, "Failed to create %s: %m", m->runtime_dir);
        if (lstat(m->runtime_dir, &st) < 0)
                return log_error_errno(-errno, "Failed to check %s: %m", m->runtime_dir);
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022)) {
                log_error("%s must be a directory owned by root and writable only by root.",
                          m->runtime_dir);
                return -EPERM;
        }
        return 0;
}

int manager_connect_bus(Manager *m) {
        int r;

        r = sd_bus_open_system(&m->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_add_object_vtable(m->bus, &m->object_slot, UM_OBJECT_PATH,
                                     UM_MANAGER_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to export %s: %m", UM_OBJECT_PATH);
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        r = sd_bus_request_name(m->bus, UM_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire %s on the system bus: %m",
                                       UM_BUS_NAME);
        return 0;
}

int manager_run(Manager *m) {
        int r;

        r = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for termination signals: %m");
        log_info("usermountd %s ready on the system bus as %s.", PACKAGE_VERSION, UM_BUS_NAME);
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

Request *request_new(Manager *m, sd_bus_message *message) {
        Request *req = calloc(1, sizeof(*req));

        if (!req)
                return NULL;
        req->manager = m;
        req->message = sd_bus_message_ref(message);
        req->source_fd = -EBADF;
        req->params.userns_fd = -EBADF;
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
        request_unlink(req);
        worker_release(req->worker);
        sd_bus_slot_unref(req->polkit_slot);
        sd_bus_message_unref(req->message);
        safe_close(req->source_fd);
        safe_close(req->params.userns_fd);
        free(req->params.target);
        free(req->source_path);
        free(req->fstype);
        free(req->options);
        mount_options_done(&req->mount_options);
        free(req);
        return NULL;
}

unsigned manager_count_requests(Manager *m, uid_t uid) {
        unsigned n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if (r->uid == uid)
                        n++;
        return n;
}

void request_fail(Request *req, const UmError *error) {
        char path[256];

        log_info("Refused request of uid %u for %s: %s", (unsigned) req->uid,
                 um_escape(req->source_path, path, sizeof(path)), error->message);
        (void) bus_reply_error(req->message, error);
        request_free(req);
}

static void on_build_done(Worker *w, int r, const WorkerReply *reply, const UmError *error, int fd,
                          void *userdata) {
        Request *req = userdata;
        char path[256], label[256];

        req->worker = worker_release(w);
        if (r < 0)
                return request_fail(req, error);

        r = bus_reply_open_mount(req, fd, reply);
        safe_close(fd);
        if (r < 0)
                log_warning_errno(r, "Failed to send the mount to uid %u: %m", (unsigned) req->uid);
        else
                log_info("Mounted %s (%s, label \"%s\") for uid %u as a detached locked mount.",
                         um_escape(req->source_path, path, sizeof(path)), req->probe.fstype,
                         um_escape(req->probe.label, label, sizeof(label)), (unsigned) req->uid);
        request_free(req);
}

static void request_build(Request *req) {
        UmError error = {};
        int r;

        req->stage = REQUEST_BUILDING;
        r = worker_spawn(req->manager->event, req->manager->worker_timeout_usec,
                         &req->source_fd, 1, job_build, req, on_build_done, req, &req->worker);
        if (r < 0) {
                um_error_set(&error, UM_ERROR_KIND_FAILED, r, "Could not start a mount worker: %s.",
                             strerror(-r));
                request_fail(req, &error);
        }
}

static void request_authorize_next(Request *req);

static void on_authorized(int r, const UmError *error, void *userdata) {
        Request *req = userdata;

        req->polkit_slot = sd_bus_slot_unref(req->polkit_slot);
        if (r < 0)
                return request_fail(req, error);
        req->n_actions_done++;
        request_authorize_next(req);
}

/* Asks polkit for each action the request needs, one after the other; root needs none. */
static void request_authorize_next(Request *req) {
        char options[POLICY_OPTIONS_MAX + 1];
        UmError error = {};
        int r;

        req->stage = REQUEST_AUTHORIZING;
        if (req->uid == 0 || req->n_actions_done >= ELEMENTSOF(req->actions) ||
            !req->actions[req->n_actions_done])
                return request_build(req);

        snprintf(options, sizeof(options), "%s", strempty(req->options));
        const char *const details[] = {
                "device", strempty(req->source_path),
                "fstype", req->probe.fstype,
                "label", req->probe.label,
                "uuid", req->probe.uuid,
                "read-only", req->mount_options.read_only ? "true" : "false",
                "exec", req->params.exec ? "true" : "false",
                "idmap", "none",
                "target", strempty(req->params.target),
                "options", options,
                NULL,
        };
        r = authorize_check_async(req->manager->bus, req->message, req->actions[req->n_actions_done],
                                  details, req->params.interactive, on_authorized, req,
                                  &req->polkit_slot);
        if (r < 0) {
                um_error_set(&error, UM_ERROR_KIND_FAILED, r, "Could not ask polkit: %s.",
                             strerror(-r));
                request_fail(req, &error);
        }
}

/* Policy on the probed facts: type allowed and as requested, options, which actions. */
static int request_decide(Request *req, UmError *error) {
        char want[64], have[64];
        const PolicyInput in = {
                .fstype = req->probe.fstype,
                .options = req->options,
                .read_only = req->params.read_only,
                .source_read_only = req->source.read_only,
                .exec = req->params.exec,
                .uid = req->uid,
                .gid = req->gid,
        };
        int r;

        um_escape(req->probe.fstype, have, sizeof(have));
        if (!policy_fstype_allowed(req->probe.fstype))
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "The source holds a '%s' filesystem, which is not allowed "
                                    "for user mounts.", have);
        if (!isempty(req->fstype) && !streq(req->fstype, req->probe.fstype))
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "The source holds '%s', not the requested '%s'.", have,
                                    um_escape(req->fstype, want, sizeof(want)));

        r = policy_build_options(&in, &req->mount_options, error);
        if (r < 0)
                return r;

        if (req->source.type == SOURCE_IMAGE)
                req->actions[0] = UM_ACTION_MOUNT_IMAGE;
        else if (req->source.removable)
                req->actions[0] = UM_ACTION_MOUNT_REMOVABLE;
        else
                req->actions[0] = UM_ACTION_MOUNT_SYSTEM;
        req->actions[1] = req->params.exec ? UM_ACTION_MOUNT_EXEC : NULL;
        return 0;
}

static void on_probe_done(Worker *w, int r, const WorkerReply *reply, const UmError *error, int fd,
                          void *userdata) {
        Request *req = userdata;
        UmError e = {};

        req->worker = worker_release(w);
        safe_close(fd);
        if (r < 0)
                return request_fail(req, error);

        req->probe = reply->probe;
        r = request_decide(req, &e);
        if (r < 0)
                return request_fail(req, &e);
        request_authorize_next(req);
}

void manager_start_request(Manager *m, Request *req) {
        UmError error = {};
        int r;

        if (m->n_requests >= m->max_requests) {
                um_error_set(&error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                             "usermountd is handling %u requests already; try again later.",
                             m->n_requests);
                return request_fail(req, &error);
        }
        if (manager_count_requests(m, req->uid) >= m->max_requests_per_uid) {
                um_error_set(&error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                             "You have %u requests in flight already, the most one user may "
                             "have; wait for them to finish.", m->max_requests_per_uid);
                return request_fail(req, &error);
        }

        req->next = m->requests;
        if (m->requests)
                m->requests->prev = req;
        m->requests = req;
        m->n_requests++;

        req->stage = REQUEST_PROBING;
        r = worker_spawn(m->event, m->worker_timeout_usec, &req->source_fd, 1, job_probe, req,
                         on_probe_done, req, &req->worker);
        if (r < 0) {
                um_error_set(&error, UM_ERROR_KIND_FAILED, r, "Could not start a worker: %s.",
                             strerror(-r));
                request_fail(req, &error);
        }
}
