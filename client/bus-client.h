/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's side of the bus, on libusermount: connecting to usermountd, and turning a
 * failed call into one clear message and an exit status.
 */
#pragma once

#include <stdbool.h>

#include "cli.h"
#include "usermount.h"
#include "usermount-cleanup.h"

/*
 * Opens a client (libusermount: the system bus at $DBUS_SYSTEM_BUS_ADDRESS or the default
 * socket) and waits until it is up; with need_fds, also requires that it can pass file
 * descriptors. With ask_password, polkit's questions are asked on our terminal
 * (USERMOUNT_AUTH_TTY_AGENT), else never (--no-ask-password). Prints what went wrong and returns the exit
 * status, or EXIT_STATUS_OK with *ret set (usermount_client_unref()).
 */
ExitStatus client_connect(bool need_fds, bool ask_password, usermount_client **ret);

/*
 * The exit status for a failed call: by D-Bus error name where name is set (the
 * org.freedesktop.UserMount1.Error.* names and the bus's own), else by the errno r.
 */
ExitStatus client_error_status(const char *name, int r);

/*
 * Prints the one message for a failed call on c (c's last error, r as the library
 * returned it; c may be NULL for a failure without a client) and returns the exit status.
 * Text from the daemon is escaped.
 */
ExitStatus client_log_error(usermount_client *c, int r);

/* Like client_log_error() for an error name and message the caller has. */
ExitStatus client_log_error_name(const char *name, const char *message, bool connection_failed,
                                 int r);
