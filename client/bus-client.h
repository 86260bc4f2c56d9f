/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's side of the bus: connecting to usermountd on the system bus, and turning
 * a failed call into one clear message and an exit status.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "cli.h"

/*
 * usermountd may probe the device, ask polkit (25 s) and build or take down the mount in a
 * worker (30 s each), so a reply can take longer than sd-bus's default of 25 s.
 */
#define CLIENT_CALL_TIMEOUT_USEC (120ULL * 1000000ULL)

/*
 * Opens a connection to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default socket).
 * sd-bus, unlike libdbus, authenticates from inside a user namespace. Returns 0 or -errno;
 * *ret is the caller's to close (sd_bus_flush_close_unref).
 */
int client_bus_open(sd_bus **ret);

/*
 * Opens the connection like client_bus_open() and waits until it is up; with need_fds,
 * also requires that it can pass file descriptors. Prints what went wrong and returns the
 * exit status, or EXIT_STATUS_OK with *ret set.
 */
ExitStatus client_bus_connect(bool need_fds, sd_bus **ret);

/*
 * Calls ListMounts with no params; error and reply as sd_bus_call() returns them. The
 * reply is positioned at its aa{sv}.
 */
int client_bus_list_mounts(sd_bus *bus, sd_bus_error *error, sd_bus_message **ret_reply);

/*
 * The exit status for a failed call: by D-Bus error name where error is set (the
 * org.freedesktop.UserMount1.Error.* names and the bus's own), else by the errno r.
 */
ExitStatus client_bus_error_status(const sd_bus_error *error, int r);

/*
 * Prints the one message for a failed call on bus (error and r as sd_bus_call() returned
 * them) and returns client_bus_error_status(). Text from the daemon is escaped.
 */
ExitStatus client_bus_log_error(sd_bus *bus, const sd_bus_error *error, int r);
