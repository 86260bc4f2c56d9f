/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermountd as a service: it tells the service manager when it is ready, reloading or
 * stopping and what it is doing (sd_notify(); nothing happens without $NOTIFY_SOCKET),
 * and with an idle timeout it exits once nothing needs it, to be started again by D-Bus
 * activation for the next call (the registry on disk carries its state across).
 *
 * "Idle" means: no request in flight, no worker alive (even one given up on), no cleanup
 * in flight, no registered mount (its device must be watched) and no loop device it made
 * for an OpenMount that still exists (it counts against its owner's limits).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct Manager Manager;

/* Sets up the status updates and the idle timer (when m->idle_timeout_usec > 0) and sends
 * READY=1 with the first STATUS=. Call once the bus name is asked for and the registry
 * loaded (the unit is Type=dbus: systemd waits for the name itself). -errno. */
int service_start(Manager *m);

/* A request starts: the idle timeout counts again from when the daemon is next idle. */
void service_note_activity(Manager *m);

/* Around a configuration reload: RELOADING=1 with MONOTONIC_USEC=, then READY=1. */
void service_notify_reloading(void);
void service_notify_reloaded(Manager *m);

/* STOPPING=1, once per process, however the daemon stops. */
void service_notify_stopping(Manager *m);

/* Whether nothing needs the daemon (see above). */
bool service_is_idle(Manager *m);

/* "Serving N requests, M mounts" into buf (always NUL-terminated). Returns buf. */
char *service_format_status(unsigned n_requests, size_t n_mounts, char *buf, size_t size);

/* SIGTERM and SIGINT end the event loop, SIGHUP reloads the configuration
 * (manager_reload()). */
int service_watch_signals(Manager *m);

/* Sends READY=1 and runs the event loop until SIGTERM/SIGINT or the idle exit; then
 * STOPPING=1. The exit status, or -errno. */
int service_run(Manager *m);
