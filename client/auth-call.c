/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the authentication of a call came to, in words (see auth-call.h). libusermount did
 * the asking (usermount_client_set_auth(3)); usermount_client_get_auth_result() says
 * whether nobody could be asked and why, or whether the agent ran.
 */
#include <string.h>

#include "auth-call.h"
#include "bus-client.h"
#include "config.h"
#include "namespace.h"
#include "output.h"
#include "usermount-names.h"
#include "userns.h"

/* The program libusermount runs to ask for a password, named in what we say. */
#define POLKIT_AGENT_PATH "/usr/bin/pkttyagent"

/* The example rule for callers in user namespaces, named in what we tell them. */
#define NAMESPACE_RULE USERMOUNT_POLKIT_RULES_DIR "/50-usermount-namespace-images.rules"

/* The polkit action named in usermountd's NotAuthorizedCanObtain message, or NULL. */
static char *action_of(const char *message) {
        const char *p = message ? strstr(message, UM_ACTION_PREFIX) : NULL;
        size_t n;

        if (!p)
                return NULL;
        n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789.-");
        return strndup(p, n);
}

/*
 * Inside a user namespace nobody can be asked for a password: say so, and what works
 * instead, in place of the usual advice to run on a terminal.
 */
static ExitStatus log_no_agent_in_userns(const char *message) {
        _cleanup_free_ char *action = action_of(message);

        log_error("Authentication is required for this request%s%s%s, and usermount cannot "
                  "ask for your password here: it runs in a user namespace (a container, "
                  "'unshare --user'), where polkit does not accept a password agent.",
                  action ? " (polkit action " : "", strempty(action), action ? ")" : "");
        log_error("Either ask the administrator for a polkit rule that allows it without a "
                  "password, such as the example %s, or run usermount on the host, where it "
                  "can ask for your password, and give the running container the mount from "
                  "there: 'usermount mount --container=PID IMAGE DIRECTORY', PID being a "
                  "process of the container.", NAMESPACE_RULE);
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

static ExitStatus log_interactive_error(usermount_client *c, const char *name, int r) {
        usermount_error_kind kind = usermount_error_kind_from_name(name);

        if (kind == USERMOUNT_ERROR_NOT_AUTHORIZED) {
                log_error("Authentication failed: the password was wrong, or authentication "
                          "was cancelled.");
                return EXIT_STATUS_AUTH_FAILED;
        }
        if (kind == USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN) {
                /* polkitd found no agent for our process, so nobody was asked. */
                log_error("polkit did not ask for a password: it did not find the "
                          "authentication agent usermount started.");
                log_error("Ask the administrator for a polkit rule that allows this without "
                          "a password.");
                return EXIT_STATUS_NOT_AUTHORIZED;
        }
        return client_log_error(c, r);
}

ExitStatus auth_log_error(usermount_client *c, int r) {
        const char *name = NULL, *message = NULL;
        int agent_error = 0;

        (void) usermount_client_get_error(c, &name, &message);
        switch (usermount_client_get_auth_result(c, &agent_error)) {
        case USERMOUNT_AUTH_RESULT_IN_USERNS:
                return log_no_agent_in_userns(message);
        case USERMOUNT_AUTH_RESULT_NOT_ASKED:
                /* --no-ask-password; "run it on a terminal" would not help in a namespace. */
                if (userns_detect() > 0)
                        return log_no_agent_in_userns(message);
                log_no_interaction(0);
                return client_log_error(c, r);
        case USERMOUNT_AUTH_RESULT_NO_TERMINAL:
        case USERMOUNT_AUTH_RESULT_ROOT:
                log_no_interaction(0);
                return client_log_error(c, r);
        case USERMOUNT_AUTH_RESULT_AGENT_FAILED:
                log_no_interaction(agent_error);
                return client_log_error(c, r);
        case USERMOUNT_AUTH_RESULT_RETRIED:
                return log_interactive_error(c, name, r);
        case USERMOUNT_AUTH_RESULT_NOT_NEEDED:
        default:
                return client_log_error(c, r);
        }
}
