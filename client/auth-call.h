/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The messages about authentication for calls to usermountd that polkit may want a
 * password for (mount and unmount). libusermount sends such a call without interaction
 * first and, when usermountd answers NotAuthorizedCanObtain and a person can answer,
 * again with pkttyagent on our terminal (USERMOUNT_AUTH_TTY_AGENT, or never with
 * --no-ask-password); this says what happened.
 */
#pragma once

#include "cli.h"
#include "usermount.h"

/*
 * Prints the one message for a failed mount or unmount call on c (r as the library
 * returned it) and returns: EXIT_STATUS_AUTH_FAILED when polkit asked for a password and
 * authentication failed or was cancelled; EXIT_STATUS_NOT_AUTHORIZED when authentication
 * was needed but could not be asked for (no terminal, --no-ask-password, a user
 * namespace, no agent); else what client_log_error() returns.
 */
ExitStatus auth_log_error(usermount_client *c, int r);
