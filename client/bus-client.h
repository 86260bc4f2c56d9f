/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's side of the bus: connecting to usermountd on the system bus, and turning
 * a failed call into one clear message and an exit status.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "usermount.h"

/*
 * Opens a connection to the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the default socket).
 * sd-bus, unlike libdbus, authenticates from inside a user namespace. Returns 0 or -errno;
 * *ret is the caller's to close (sd_bus_flush_close_unref).
 */
int client_bus_open(sd_bus **ret);

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
