/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readiness, status and idle exit (service.h). Both the status line and the idle timer
 * follow the Manager's counts through one sd-event "post" source, which runs after any
 * iteration that dispatched something (a bus message, a worker's reply or exit, a signal,
 * the reconcile timer): every change of a count happens in such an iteration, so nothing
 * is polled and no call site has to remember to report its change.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "caller.h"
#include "log.h"
#include "manager.h"
#include "service.h"
#include "usermount-names.h"
#include "workerpool.h"
#include "time-util.h"

char *service_format_status(unsigned n_requests, size_t n_mounts, char *buf, size_t size) {
        snprintf(buf, size, "Serving %u request%s, %zu mount%s", n_requests,
                 n_requests == 1 ? "" : "s", n_mounts, n_mounts == 1 ? "" : "s");
        return buf;
}

static size_t manager_n_mounts(const Manager *m) {
        return m->registry ? m->registry->n_records : 0;
}

bool service_is_idle(Manager *m) {
        /* A subscriber would miss the events of the next instance: it keeps this one. Calls
         * whose sender the bus has yet to name are requests too (caller.h). */
        if (m->n_requests > 0 || caller_cache_pending(m->callers) > 0 ||
            worker_pool_count_alive(m->workers) > 0 || m->n_cleanups > 0 ||
            manager_n_mounts(m) > 0 || m->subscribers.n > 0)
                return false;
        /* A caller's file whose close waits on its FUSE server: exiting would wait on it
         * too (busfds.h). */
        if (m->busfds && (busfds_held(m->busfds) > 0 || busfds_pending(m->busfds, (uid_t) -1) > 0))
                return false;
        /* Last, as it looks at sysfs: the loop devices of detached mounts still held. */
        if (looptrack_count(&m->loops, (uid_t) -1) > 0)
                (void) looptrack_prune(&m->loops);
        return looptrack_count(&m->loops, (uid_t) -1) == 0;
}

/* STATUS= only when what it says changed, not on every event. */
static void service_update_status(Manager *m) {
        char status[128];

        if (m->status_sent && m->status_requests == m->n_requests &&
            m->status_mounts == manager_n_mounts(m))
                return;
        m->status_requests = m->n_requests;
        m->status_mounts = manager_n_mounts(m);
        m->status_sent = true;
        (void) sd_notifyf(false, "STATUS=%s",
                          service_format_status(m->status_requests, m->status_mounts, status,
                                                sizeof(status)));
}

void service_notify_stopping(Manager *m) {
        if (m->stopping_sent)
                return;
        m->stopping_sent = true;
        (void) sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
}

/*
 * The exit: STOPPING=1, then the name goes, and only then does the loop end. Calls the bus
 * routed to us before it took the name away are on our connection before the answer to
 * ReleaseName (the bus keeps the order of what it sends us); they are answered
 * here, while every later call makes the bus (or systemd, once this process is gone)
 * start a new instance. Mount calls among them are refused with a request to send them
 * again (pipeline.c): a mount made now would be watched by nobody once this process is
 * gone, and a new instance would not know it.
 */
static int on_name_released(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e)
                log_warning("Failed to release %s: %s", UM_BUS_NAME, e->message ?: e->name);
        m->name_releasing = false;
        return 0;
}

static void service_begin_idle_exit(Manager *m) {
        int r;

        log_request(LOG_LEVEL_INFO, LOG_UID_NONE, NULL, "idle-exit",
                    "Idle for %" PRIu64 " s with nothing to watch; exiting.",
                    m->idle_timeout_usec / UINT64_C(1000000));
        service_notify_stopping(m);
        m->idle_exiting = true;
        /* Ready workers are no work: they go now, and no new ones start. */
        if (m->workers)
                worker_pool_set_size(m->workers, 0);
        /* Asynchronously (see manager_connect_bus()): what arrives before the answer is
         * read and served by the loop as always, and the exit waits for the answer. */
        if (m->bus) {
                r = sd_bus_release_name_async(m->bus, NULL, UM_BUS_NAME, on_name_released, m);
                if (r < 0)
                        log_warning_errno(r, "Failed to release %s: %m", UM_BUS_NAME);
                else
                        m->name_releasing = true;
        }
}

static void service_finish_idle_exit(Manager *m) {
        int r;

        if (m->registry) {
                r = registry_save(m->registry);
                if (r < 0)
                        log_warning_errno(r, "Failed to save the registry: %m");
        }
        (void) sd_event_exit(m->event, EXIT_SUCCESS);
}

static int on_idle_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        /* Only armed while idle, but a worker may have started in this very iteration. The
         * exit itself comes from on_post(), once whatever was queued is done. */
        if (service_is_idle(m))
                service_begin_idle_exit(m);
        return 0;
}

/* Arms the timer when the daemon becomes idle, disarms it while it is busy. */
static void service_update_idle(Manager *m) {
        int enabled = SD_EVENT_OFF;
        bool idle;

        if (!m->idle_timer)
                return;
        idle = service_is_idle(m);
        if (m->idle_exiting) {
                if (idle && !m->name_releasing)
                        service_finish_idle_exit(m);
                return;
        }
        (void) sd_event_source_get_enabled(m->idle_timer, &enabled);
        if (!idle && enabled != SD_EVENT_OFF)
                (void) sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
        else if (idle && enabled == SD_EVENT_OFF &&
                 sd_event_source_set_time_relative(m->idle_timer, m->idle_timeout_usec) >= 0)
                (void) sd_event_source_set_enabled(m->idle_timer, SD_EVENT_ONESHOT);
}

void service_note_activity(Manager *m) {
        if (m->idle_timer && !m->idle_exiting)
                (void) sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
}

static int on_post(sd_event_source *s, void *userdata) {
        Manager *m = userdata;

        service_update_status(m);
        service_update_idle(m);
        return 0;
}

int service_start(Manager *m) {
        int r;

        r = sd_event_add_post(m->event, &m->service_post, on_post, m);
        if (r < 0)
                return r;
        if (m->idle_timeout_usec > 0) {
                r = sd_event_add_time_relative(m->event, &m->idle_timer, CLOCK_MONOTONIC,
                                               m->idle_timeout_usec, 0, on_idle_timer, m);
                if (r < 0)
                        return r;
                /* When it expires in the same iteration as a call arrives, it goes first: the
                 * exit path is then the one that serves the call (service_begin_idle_exit()),
                 * the same whichever way the two raced. */
                r = sd_event_source_set_priority(m->idle_timer, SD_EVENT_PRIORITY_IMPORTANT);
                if (r < 0)
                        return r;
                /* Armed by service_update_idle() below if there is nothing to do yet. */
                r = sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
                if (r < 0)
                        return r;
        }
        (void) sd_notify(false, "READY=1");
        service_update_status(m);
        service_update_idle(m);
        return 0;
}


void service_notify_reloading(void) {
        (void) sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
                          now_usec(CLOCK_MONOTONIC));
}

void service_notify_reloaded(Manager *m) {
        char status[128];

        (void) sd_notifyf(false, "READY=1\nSTATUS=%s",
                          service_format_status(m->n_requests, manager_n_mounts(m), status,
                                                sizeof(status)));
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        service_notify_reloading();
        manager_reload(userdata);
        service_notify_reloaded(userdata);
        return 0;
}

int service_watch_signals(Manager *m) {
        int r;

        r = sd_event_add_signal(m->event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &m->sighup, SIGHUP, on_sighup, m);
        /* Above the bus: every call sent after the signal is handled under the outcome of
         * the reload. */
        if (r >= 0)
                r = sd_event_source_set_priority(m->sighup, SD_EVENT_PRIORITY_IMPORTANT);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for signals: %m");
        return 0;
}

int service_run(Manager *m) {
        int r;

        r = service_start(m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch for idleness: %m");
        r = sd_event_loop(m->event);
        service_notify_stopping(m);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return r; /* the exit status: EXIT_FAILURE without the bus or the name */
}
