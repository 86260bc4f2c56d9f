/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asking polkit, asynchronously, whether the sender of a bus message may perform an
 * action (org.freedesktop.PolicyKit1.Authority.CheckAuthorization with the
 * "system-bus-name" subject, so polkit itself resolves the caller's uid, pid and
 * session from the bus).
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "um-error.h"

/*
 * Called once with r = 0 (authorized), -EACCES (error says NotAuthorized or
 * NotAuthorizedCanObtain) or another -errno when polkit could not be asked.
 */
typedef void (*AuthorizeDone)(int r, const UmError *error, void *userdata);

/*
 * Sends the check for the sender of message; details is a NULL-terminated list of
 * key, value pairs (values are passed through um_escape(), so device data is safe).
 * interactive allows polkit to ask for a password. The reply arrives through done,
 * unless *ret_slot is unreffed first. Returns 0 or -errno (nothing sent).
 */
int authorize_check_async(sd_bus *bus, sd_bus_message *message, const char *action,
                          const char *const *details, bool interactive, AuthorizeDone done,
                          void *userdata, sd_bus_slot **ret_slot);
