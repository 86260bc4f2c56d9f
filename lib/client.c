/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client: its connection to the system bus, the authentication mode, and the error of
 * the last failed call (usermount_client_new(3)). Every call to usermountd goes through
 * client_call(), which applies the mode: never interactive, always interactive, or the
 * CLI's way of first asking without interaction and then again with pkttyagent.
 *
 * Why not start the agent up front, as systemd's tools do: polkit answers a failed or
 * cancelled authentication exactly like a plain "no" (not authorized, no challenge), so
 * only a call that was first answered NotAuthorizedCanObtain tells the two apart, and the
 * user learns whether the password or the policy was the problem. It also spares the
 * agent when polkit needs no password, which is the common case.
 */
#include <stdlib.h>
#include <string.h>

#include "lib-internal.h"
#include "polkit-agent.h"
#include "usermount-names.h"

#define SPAWN_ERROR_PREFIX "org.freedesktop.DBus.Error.Spawn."

_public_ int usermount_client_new(usermount_client **ret) {
        usermount_client *c;
        int r;

        if (!ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (usermount_client) {
                .n_ref = 1,
                .timeout_usec = CLIENT_DEFAULT_TIMEOUT_USEC,
                .error = SD_BUS_ERROR_NULL,
        };
        /*
         * sd_bus_open_system() reads $DBUS_SYSTEM_BUS_ADDRESS (with secure_getenv()).
         * Whatever a caller points it at can only deceive the caller itself: usermountd
         * learns who is asking from the bus, never from anything the client sends. sd-bus,
         * unlike libdbus, authenticates from inside a user namespace.
         */
        r = sd_bus_open_system(&c->bus);
        if (r < 0) {
                free(c);
                return r;
        }
        *ret = c;
        return 0;
}

usermount_client *client_ref(usermount_client *c) {
        c->n_ref++;
        return c;
}

_public_ usermount_client *usermount_client_unref(usermount_client *c) {
        if (!c || --c->n_ref > 0)
                return NULL;
        sd_bus_flush_close_unref(c->bus);
        sd_bus_error_free(&c->error);
        free(c);
        return NULL;
}

_public_ int usermount_client_set_auth(usermount_client *c, usermount_auth mode) {
        if (!c)
                return -EINVAL;
        if (mode != USERMOUNT_AUTH_NONE && mode != USERMOUNT_AUTH_ALLOW_INTERACTIVE &&
            mode != USERMOUNT_AUTH_TTY_AGENT)
                return -EINVAL;
        c->auth = mode;
        return 0;
}

_public_ int usermount_client_set_timeout(usermount_client *c, uint64_t usec) {
        if (!c)
                return -EINVAL;
        c->timeout_usec = usec ?: CLIENT_DEFAULT_TIMEOUT_USEC;
        return 0;
}

_public_ int usermount_client_is_connected(usermount_client *c) {
        if (!c)
                return -EINVAL;
        return sd_bus_is_open(c->bus) > 0;
}

_public_ int usermount_client_can_pass_fds(usermount_client *c) {
        if (!c)
                return -EINVAL;
        /* Waits for the connection to be up, so that a bus that is not there shows here. */
        return sd_bus_can_send(c->bus, SD_BUS_TYPE_UNIX_FD);
}

_public_ int usermount_client_get_error(usermount_client *c, const char **ret_name,
                                        const char **ret_message) {
        if (!c)
                return -EINVAL;
        if (!sd_bus_error_is_set(&c->error))
                return -ENODATA;
        if (ret_name)
                *ret_name = c->error.name;
        if (ret_message)
                *ret_message = c->error.message ?: c->error.name;
        return 0;
}

_public_ usermount_auth_result usermount_client_get_auth_result(usermount_client *c,
                                                                int *ret_agent_error) {
        if (ret_agent_error)
                *ret_agent_error = c ? c->agent_error : 0;
        return c ? c->auth_result : USERMOUNT_AUTH_RESULT_NOT_NEEDED;
}

static const struct {
        const char *name;
        usermount_error_kind kind;
        int error;
} error_table[] = {
        { UM_ERROR_NOT_AUTHORIZED, USERMOUNT_ERROR_NOT_AUTHORIZED, EACCES },
        { UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, EACCES },
        { UM_ERROR_INVALID_ARGUMENT, USERMOUNT_ERROR_INVALID_ARGUMENT, EINVAL },
        { UM_ERROR_INVALID_SOURCE, USERMOUNT_ERROR_INVALID_SOURCE, EINVAL },
        { UM_ERROR_FILESYSTEM_NOT_ALLOWED, USERMOUNT_ERROR_FILESYSTEM_NOT_ALLOWED, EMEDIUMTYPE },
        { UM_ERROR_OPTION_NOT_ALLOWED, USERMOUNT_ERROR_OPTION_NOT_ALLOWED, EPERM },
        { UM_ERROR_DEVICE_BUSY, USERMOUNT_ERROR_DEVICE_BUSY, EBUSY },
        { UM_ERROR_INVALID_TARGET, USERMOUNT_ERROR_INVALID_TARGET, ENOTDIR },
        { UM_ERROR_NOT_MOUNTED, USERMOUNT_ERROR_NOT_MOUNTED, ENOENT },
        { UM_ERROR_LIMIT_EXCEEDED, USERMOUNT_ERROR_LIMIT_EXCEEDED, EUSERS },
        { UM_ERROR_FAILED, USERMOUNT_ERROR_FAILED, EIO },
        /* The bus's own errors: is usermountd there, and may we talk to it? */
        { SD_BUS_ERROR_SERVICE_UNKNOWN, USERMOUNT_ERROR_UNAVAILABLE, EHOSTDOWN },
        { SD_BUS_ERROR_NAME_HAS_NO_OWNER, USERMOUNT_ERROR_UNAVAILABLE, EHOSTDOWN },
        { SD_BUS_ERROR_NO_REPLY, USERMOUNT_ERROR_UNAVAILABLE, ETIMEDOUT },
        { SD_BUS_ERROR_TIMEOUT, USERMOUNT_ERROR_UNAVAILABLE, ETIMEDOUT },
        { SD_BUS_ERROR_ACCESS_DENIED, USERMOUNT_ERROR_ACCESS_DENIED, EACCES },
        { SD_BUS_ERROR_UNKNOWN_METHOD, USERMOUNT_ERROR_UNSUPPORTED, EOPNOTSUPP },
        { SD_BUS_ERROR_UNKNOWN_OBJECT, USERMOUNT_ERROR_UNSUPPORTED, EOPNOTSUPP },
        { SD_BUS_ERROR_UNKNOWN_INTERFACE, USERMOUNT_ERROR_UNSUPPORTED, EOPNOTSUPP },
};

static bool startswith(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

_public_ usermount_error_kind usermount_error_kind_from_name(const char *name) {
        if (isempty(name))
                return USERMOUNT_ERROR_NONE;
        for (size_t i = 0; i < ELEMENTSOF(error_table); i++)
                if (streq(name, error_table[i].name))
                        return error_table[i].kind;
        /* Bus activation of usermountd failed. */
        if (startswith(name, SPAWN_ERROR_PREFIX))
                return USERMOUNT_ERROR_UNAVAILABLE;
        return USERMOUNT_ERROR_OTHER;
}

int client_error_errno(usermount_client *c, int r) {
        if (!sd_bus_error_is_set(&c->error))
                return r < 0 ? r : -EIO;
        for (size_t i = 0; i < ELEMENTSOF(error_table); i++)
                if (sd_bus_error_has_name(&c->error, error_table[i].name))
                        return -error_table[i].error;
        if (startswith(c->error.name, SPAWN_ERROR_PREFIX))
                return -EHOSTDOWN;
        /* Any other name may come from the daemon or the bus: its errno says nothing. */
        return -EIO;
}

void client_reset_error(usermount_client *c) {
        sd_bus_error_free(&c->error);
        c->auth_result = USERMOUNT_AUTH_RESULT_NOT_NEEDED;
        c->agent_error = 0;
}

/* One attempt: builds and sends the call; error and reply as sd_bus_call() leaves them. */
static int client_send(usermount_client *c, const char *method, ClientBuildFunc build,
                       const void *userdata, bool interactive, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        sd_bus_error_free(&c->error);
        r = sd_bus_message_new_method_call(c->bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, method);
        if (r < 0)
                return r;
        if (build) {
                r = build(m, interactive, userdata);
                if (r < 0)
                        return r;
        }
        return sd_bus_call(c->bus, m, c->timeout_usec, &c->error, ret_reply);
}

/* The tty agent's way (USERMOUNT_AUTH_TTY_AGENT): a second, interactive attempt if useful. */
static int client_call_tty_agent(usermount_client *c, const char *method, ClientBuildFunc build,
                                 const void *userdata, sd_bus_message **ret_reply) {
        _cleanup_(polkit_agent_stopp) pid_t agent = 0;
        int r;

        r = client_send(c, method, build, userdata, false, ret_reply);
        if (r >= 0 || !sd_bus_error_has_name(&c->error, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN))
                return r;

        switch (polkit_agent_use()) {
        case POLKIT_AGENT_IN_USERNS:
                c->auth_result = USERMOUNT_AUTH_RESULT_IN_USERNS;
                return r;
        case POLKIT_AGENT_NO_TERMINAL:
                c->auth_result = USERMOUNT_AUTH_RESULT_NO_TERMINAL;
                return r;
        case POLKIT_AGENT_ROOT:
                c->auth_result = USERMOUNT_AUTH_RESULT_ROOT;
                return r;
        case POLKIT_AGENT_USEFUL:
        default:
                break;
        }
        c->agent_error = polkit_agent_start(POLKIT_AGENT_PATH, POLKIT_AGENT_REGISTER_TIMEOUT_MS,
                                            &agent);
        if (agent <= 0) {
                c->auth_result = USERMOUNT_AUTH_RESULT_AGENT_FAILED;
                return r;
        }

        c->auth_result = USERMOUNT_AUTH_RESULT_RETRIED;
        r = client_send(c, method, build, userdata, true, ret_reply);
        agent = polkit_agent_stop(agent);
        return r;
}

int client_call(usermount_client *c, const char *method, ClientBuildFunc build,
                const void *userdata, sd_bus_message **ret_reply) {
        int r;

        client_reset_error(c);
        if (c->auth == USERMOUNT_AUTH_TTY_AGENT)
                r = client_call_tty_agent(c, method, build, userdata, ret_reply);
        else {
                r = client_send(c, method, build, userdata,
                                c->auth == USERMOUNT_AUTH_ALLOW_INTERACTIVE, ret_reply);
                if (r < 0 && c->auth == USERMOUNT_AUTH_NONE &&
                    sd_bus_error_has_name(&c->error, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN))
                        c->auth_result = USERMOUNT_AUTH_RESULT_NOT_ASKED;
        }
        if (r < 0)
                return client_error_errno(c, r);
        return r;
}

_public_ int usermount_get_version(usermount_client *c, char **ret) {
        int r;

        if (!c || !ret)
                return -EINVAL;
        client_reset_error(c);
        r = sd_bus_get_property_string(c->bus, UM_BUS_NAME, UM_OBJECT_PATH,
                                       UM_MANAGER_INTERFACE, "Version", &c->error, ret);
        return r < 0 ? client_error_errno(c, r) : 0;
}

_public_ int usermount_get_supported_filesystems(usermount_client *c, char ***ret) {
        int r;

        if (!c || !ret)
                return -EINVAL;
        client_reset_error(c);
        r = sd_bus_get_property_strv(c->bus, UM_BUS_NAME, UM_OBJECT_PATH,
                                     UM_MANAGER_INTERFACE, "SupportedFilesystems", &c->error,
                                     ret);
        return r < 0 ? client_error_errno(c, r) : 0;
}

_public_ void usermount_strv_free(char **l) {
        for (char **p = l; p && *p; p++)
                free(*p);
        free(l);
}
