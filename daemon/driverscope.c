/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A userspace driver in a systemd scope of its own (see driverscope.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "driverscope.h"
#include "log.h"
#include "macro.h"

/* How often /proc/PID/cgroup is read while systemd works on the job. */
#define DRIVERSCOPE_POLL_USEC (2ULL * 1000ULL)
/* CPUQuota=100%: at most one CPU's time. */
#define DRIVERSCOPE_CPU_QUOTA_USEC 1000000ULL

struct DriverScope {
        pid_t pid;
        bool systemd;             /* asked systemd; without, done at once */
        char unit[64];
        sd_bus_slot *slot;        /* StartTransientUnit in flight */
        sd_event_source *timer;   /* polls the cgroup; gives up at the deadline */
        uint64_t deadline;
        DriverScopeDone done;
        void *userdata;
};

DriverScope *driverscope_free(DriverScope *s) {
        if (!s)
                return NULL;
        sd_bus_slot_unref(s->slot);
        sd_event_source_disable_unref(s->timer);
        free(s);
        return NULL;
}

/* Calls done once and frees s. */
static void scope_finish(DriverScope *s, int r) {
        DriverScopeDone done = s->done;
        void *userdata = s->userdata;

        driverscope_free(s);
        done(r, userdata);
}

/* Whether /proc/PID/cgroup names the scope (cgroup v2 "0::/...", or v1 name=systemd). */
static bool in_scope(const DriverScope *s) {
        char path[64], buf[4096];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) s->pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = 0;
        for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                size_t len = strcspn(l, "\n"), u = strlen(s->unit);

                if (len >= u + 1 && l[len - u - 1] == '/' && strncmp(l + len - u, s->unit, u) == 0)
                        return true;
        }
        return false;
}

static int on_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        DriverScope *s = userdata;

        if (!s->systemd || (!s->slot && in_scope(s)))
                return scope_finish(s, 0), 0;
        if (usec >= s->deadline) {
                log_warning("systemd did not move the userspace driver %d into %s within %llu s; "
                            "it stays in usermountd.service's cgroup.", (int) s->pid, s->unit,
                            (unsigned long long) (DRIVERSCOPE_TIMEOUT_USEC / 1000000));
                return scope_finish(s, -ETIMEDOUT), 0;
        }
        if (sd_event_source_set_time_relative(source, DRIVERSCOPE_POLL_USEC) >= 0)
                (void) sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        return 0;
}

static int on_scope_started(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        DriverScope *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        s->slot = sd_bus_slot_unref(s->slot);
        if (e) {
                log_warning("Could not move a userspace driver into a scope of its own (%s: %s); "
                            "it stops with usermountd.service.", e->name, strempty(e->message));
                scope_finish(s, -sd_bus_error_get_errno(e) ?: -EIO);
                return 0;
        }
        /* The job is queued: the scope holds the driver once it ran (polled). */
        if (in_scope(s))
                scope_finish(s, 0);
        return 0;
}

static int scope_ask(sd_bus *bus, DriverScope *s, const char *driver_name, uid_t owner,
                     const DriverScopeLimits *l) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char description[128];
        int r;

        snprintf(description, sizeof(description),
                 "usermount userspace filesystem driver %s for uid %u", driver_name,
                 (unsigned) owner);
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
                                           "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager",
                                           "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", s->unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "PIDs", "au", 1,
                                          (uint32_t) s->pid, "Description", "s", description,
                                          "Slice", "s", "system.slice", "CollectMode", "s",
                                          "inactive-or-failed", "TasksMax", "t", l->tasks_max,
                                          "MemoryMax", "t", l->memory_max,
                                          "CPUQuotaPerSecUSec", "t",
                                          (uint64_t) DRIVERSCOPE_CPU_QUOTA_USEC);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(bus, &s->slot, m, on_scope_started, s,
                                      DRIVERSCOPE_TIMEOUT_USEC);
        return r;
}

int driverscope_start(sd_bus *bus, sd_event *event, pid_t pid, const char *driver_name,
                      uid_t owner, const DriverScopeLimits *limits, DriverScopeDone done,
                      void *userdata, DriverScope **ret) {
        DriverScope *s = calloc(1, sizeof(*s));
        uint64_t now = 0;
        int r;

        if (!s)
                return -ENOMEM;
        *s = (DriverScope) { .pid = pid, .systemd = sd_booted() > 0 && bus, .done = done,
                             .userdata = userdata };
        snprintf(s->unit, sizeof(s->unit), "usermount-driver-%d.scope", (int) pid);
        (void) sd_event_now(event, CLOCK_MONOTONIC, &now);
        s->deadline = now + DRIVERSCOPE_TIMEOUT_USEC;
        /* Without systemd the timer's first run finds nothing to wait for: at once. */
        r = sd_event_add_time_relative(event, &s->timer, CLOCK_MONOTONIC,
                                       s->systemd ? DRIVERSCOPE_POLL_USEC : 0, 0, on_timer, s);
        if (r >= 0 && s->systemd)
                r = scope_ask(bus, s, driver_name, owner, limits);
        if (r < 0) {
                log_warning_errno(r, "Could not ask systemd for a scope of the userspace driver "
                                  "%d: %m", (int) pid);
                driverscope_free(s);
                return r;
        }
        *ret = s;
        return 0;
}
