/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A userspace driver in a systemd scope of its own (see driverscope.h).
 */
#include <errno.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "driverscope.h"
#include "log.h"
#include "macro.h"

/* A driver with libfuse's largest thread pool stays far below this. */
#define DRIVERSCOPE_TASKS_MAX 64

static int on_scope_started(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e)
                log_warning("Could not move a userspace driver into a scope of its own (%s: %s); "
                            "it stops with usermountd.service.",
                            e->name, strempty(e->message));
        return 0;
}

int driverscope_start(sd_bus *bus, pid_t pid, const char *driver_name, uid_t owner) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char unit[64], description[128];
        int r;

        if (sd_booted() <= 0 || !bus)
                return 0;
        snprintf(unit, sizeof(unit), "usermount-driver-%d.scope", (int) pid);
        snprintf(description, sizeof(description),
                 "usermount userspace filesystem driver %s for uid %u", driver_name,
                 (unsigned) owner);
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
                                           "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager",
                                           "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)", "PIDs", "au", 1,
                                          (uint32_t) pid, "Description", "s", description,
                                          "Slice", "s", "system.slice", "CollectMode", "s",
                                          "inactive-or-failed", "TasksMax", "t",
                                          (uint64_t) DRIVERSCOPE_TASKS_MAX);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(bus, NULL, m, on_scope_started, NULL, 0);
        if (r < 0)
                log_warning_errno(r, "Could not ask systemd for a scope of the userspace driver "
                                  "%d: %m", (int) pid);
        return r;
}
