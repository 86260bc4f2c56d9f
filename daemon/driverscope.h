/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A userspace driver in a systemd scope of its own. A driver lives as long as its mount,
 * across "systemctl restart usermountd" and the daemon's idle exit; started by a worker,
 * it begins in usermountd.service's cgroup, which systemd kills when the service stops.
 * On a systemd host the daemon therefore asks systemd (StartTransientUnit) to move it into
 * a transient scope, usermount-driver-<pid>.scope in system.slice, which ends when the
 * driver does. The sandbox stays what the driver was started in (fusedriver.c); the scope
 * adds a task limit. Without systemd as PID 1 (the test harness) nothing is asked: the
 * driver is reparented to init when its worker exits, and nothing kills it with the daemon.
 */
#pragma once

#include <sys/types.h>
#include <systemd/sd-bus.h>

/* Asks systemd, without waiting, to move pid into a scope of its own; a failure is logged
 * (the driver then goes with the service). No-op where systemd is not PID 1. */
int driverscope_start(sd_bus *bus, pid_t pid, const char *driver_name, uid_t owner);
