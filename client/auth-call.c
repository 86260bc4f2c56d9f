/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One call to usermountd, retried interactively with an authentication agent when polkit
 * wants a password (see auth-call.h).
 *
 * Why not start the agent up front, as systemd's tools do: polkit answers a failed or
 * cancelled authentication exactly like a plain "no" (not authorized, no challenge), so
 * only a call that was first answered NotAuthorizedCanObtain tells the two apart, and the
 * user learns whether the password or the policy was the problem. It also spares the
 * agent when polkit needs no password, which is the common case.
 */
#include "auth-call.h"
#include "bus-client.h"
#include "config.h"
#include "output.h"
#include "polkit-agent.h"
#include "usermount-names.h"

/* The example rule for callers in user namespaces, named in what we tell them. */
#define NAMESPACE_RULE USERMOUNT_POLKIT_RULES_DIR "/50-usermount-namespace-images.rules"

/* The polkit action named in usermountd's NotAuthorizedCanObtain message, or NULL. */
static char *action_of(const sd_bus_error *error) {
        const char *p = error->message ? strstr(error->message, UM_ACTION_PREFIX) : NULL;
        size_t n;

        if (!p)
                return NULL;
        n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789.-");
        return strndup(p, n);
}

/*
 * Inside a user namespace nobody can be asked for a password (polkit_agent_use()): say so,
 * and what works instead, in place of the usual advice to run on a terminal.
 */
static ExitStatus log_no_agent_in_userns(const sd_bus_error *error) {
        _cleanup_free_ char *action = action_of(error);

        log_error("Authentication is required for this request%s%s%s, and usermount cannot "
                  "ask for your password here: it runs in a user namespace (a container, "
                  "'unshare --user'), where polkit does not accept a password agent.",
                  action ? " (polkit action " : "", strempty(action), action ? ")" : "");
        log_error("Either ask the administrator for a polkit rule that allows it without a "
                  "password, such as the example %s, or run usermount outside the namespace, "
                  "where it can ask for your password (e.g. 'usermount mount IMAGE DIRECTORY' "
                  "on the host, before the container or namespace is made).", NAMESPACE_RULE);
        return EXIT_STATUS_NOT_AUTHORIZED;
}

/* Why there is no second, interactive attempt; printed before the failure itself. */
static void log_no_interaction(int agent_error) {
        if (!arg_ask_password)
                log_error("Not asking for a password (--no-ask-password).");
        else if (agent_error == -EPROTO)
                log_error("Cannot ask for a password: the authentication agent %s exited "
                          "instead of registering with polkit.", POLKIT_AGENT_PATH);
        else if (agent_error < 0)
                log_error_errno(agent_error, "Cannot ask for a password: the authentication "
                                "agent %s did not start: %m", POLKIT_AGENT_PATH);
        else
                log_error("Cannot ask for a password: standard input is not a terminal.");
}

static ExitStatus log_interactive_error(sd_bus *bus, const sd_bus_error *error, int r) {
        if (sd_bus_error_has_name(error, UM_ERROR_NOT_AUTHORIZED)) {
                log_error("Authentication failed: the password was wrong, or authentication "
                          "was cancelled.");
                return EXIT_STATUS_AUTH_FAILED;
        }
        if (sd_bus_error_has_name(error, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN)) {
                /* polkitd found no agent for our process, so nobody was asked. */
                log_error("polkit did not ask for a password: it did not find the "
                          "authentication agent usermount started.");
                log_error("Ask the administrator for a polkit rule that allows this without "
                          "a password.");
                return EXIT_STATUS_NOT_AUTHORIZED;
        }
        return client_bus_log_error(bus, error, r);
}

ExitStatus auth_call(sd_bus *bus, AuthCallFunc func, void *userdata,
                     sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(polkit_agent_stopp) pid_t agent = 0;
        int r, agent_error = 0;

        r = func(bus, false, userdata, &error, &reply);
        if (r < 0 && sd_bus_error_has_name(&error, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN)) {
                PolkitAgentUse use = polkit_agent_use();

                /* Also with --no-ask-password: "run it on a terminal" would not help here. */
                if (use == POLKIT_AGENT_IN_USERNS)
                        return log_no_agent_in_userns(&error);
                if (arg_ask_password && use == POLKIT_AGENT_USEFUL)
                        agent_error = polkit_agent_start(POLKIT_AGENT_PATH,
                                                         POLKIT_AGENT_REGISTER_TIMEOUT_MS,
                                                         &agent);
                if (agent <= 0) {
                        log_no_interaction(agent_error);
                        return client_bus_log_error(bus, &error, r);
                }

                sd_bus_error_free(&error);
                r = func(bus, true, userdata, &error, &reply);
                agent = polkit_agent_stop(agent);
                if (r < 0)
                        return log_interactive_error(bus, &error, r);
        }
        if (r < 0)
                return client_bus_log_error(bus, &error, r);

        if (ret_reply)
                *ret_reply = TAKE_PTR(reply);
        return EXIT_STATUS_OK;
}
