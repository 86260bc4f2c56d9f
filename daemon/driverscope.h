/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A userspace driver in a systemd scope of its own. A driver lives as long as its mount,
 * across "systemctl restart usermountd" and the daemon's idle exit; started by a worker,
 * it begins in usermountd.service's cgroup, which systemd kills when the service stops.
 * On a systemd host the daemon therefore asks systemd (StartTransientUnit) to move it into
 * a transient scope, usermount-driver-<pid>.scope in system.slice, which ends when the
 * driver does, with the driver's caps on memory, tasks and CPU rate (MemoryMax=,
 * TasksMax=, CPUQuota=100%) on top of its own rlimits (driver/fusedriver.h).
 *
 * The scope is asked for by pid, so the pid must stay the driver's until systemd has moved
 * it: the worker that started the driver waits without reaping it (START_DRIVER, jobproto.h)
 * until the scope holds it (its /proc/PID/cgroup names the scope), the request fails, or
 * DRIVERSCOPE_TIMEOUT_USEC passes. A driver that exits meanwhile stays a zombie of the
 * worker's, whose pid nobody else can have. It forks nothing (seccomp), so nothing of it
 * stays behind in the service's cgroup.
 *
 * Without systemd as PID 1 (the test harness) nothing is asked: the driver is reparented
 * to init when its worker exits, and nothing kills it with the daemon; its rlimits are its
 * caps.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#define DRIVERSCOPE_TIMEOUT_USEC (5ULL * 1000000ULL)

typedef struct DriverScopeLimits {
        uint64_t memory_max; /* bytes */
        uint64_t tasks_max;
} DriverScopeLimits;

typedef struct DriverScope DriverScope;

/* Called once: r 0 when the driver is in its scope (or no systemd runs), else -errno (the
 * driver then stays in the service's cgroup; already logged). */
typedef void (*DriverScopeDone)(int r, void *userdata);

/*
 * Asks systemd to move pid into a scope of its own and calls done once it is there, it
 * failed, or the time is up; *ret is the request, to cancel with driverscope_free()
 * (done is then not called). Without systemd, *ret is NULL and done runs from the event
 * loop at once. -errno if nothing could be asked or scheduled (done is not called).
 */
int driverscope_start(sd_bus *bus, sd_event *event, pid_t pid, const char *driver_name,
                      uid_t owner, const DriverScopeLimits *limits, DriverScopeDone done,
                      void *userdata, DriverScope **ret);

/* Cancels a request (done is not called). Accepts NULL. */
DriverScope *driverscope_free(DriverScope *s);
