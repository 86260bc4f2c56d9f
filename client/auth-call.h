/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calls to usermountd that polkit may want a password for: sent without interaction
 * first, and when usermountd answers NotAuthorizedCanObtain and a person can answer,
 * sent again with params["interactive"] while pkttyagent runs on our terminal.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "cli.h"

/*
 * Builds and sends one call on bus, with params["interactive"] = interactive; error and
 * reply as sd_bus_call() returns them. May be called twice for one request: it must not
 * consume anything it needs again (an fd it passes stays open).
 */
typedef int (*AuthCallFunc)(sd_bus *bus, bool interactive, void *userdata, sd_bus_error *error,
                            sd_bus_message **ret_reply);

/*
 * Sends func's call. The first attempt is never interactive, so that polkit answering
 * "yes" or "no" costs no agent. When it fails with NotAuthorizedCanObtain, arg_ask_password
 * is set and polkit_agent_use() finds an agent useful, it starts pkttyagent, sends the
 * call again with interactive = true, and stops the agent before returning, whatever the
 * outcome. In a user namespace it says instead why nobody can be asked and what works.
 *
 * Returns EXIT_STATUS_OK with *ret_reply set (ret_reply may be NULL), or prints the one
 * message and returns: EXIT_STATUS_AUTH_FAILED when polkit asked for a password and
 * authentication failed or was cancelled; EXIT_STATUS_NOT_AUTHORIZED when authentication
 * was needed but could not be asked for (no terminal, --no-ask-password, a user
 * namespace, no agent); else what client_bus_log_error() returns.
 */
ExitStatus auth_call(sd_bus *bus, AuthCallFunc func, void *userdata,
                     sd_bus_message **ret_reply);
