/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Connecting to usermountd, and the one mapping from a failed call to a message and an
 * exit status (the statuses are documented in usermount --help).
 */
#include <string.h>

#include "bus-client.h"
#include "config.h"
#include "output.h"
#include "usermount-names.h"

ExitStatus client_connect(bool need_fds, bool ask_password, usermount_client **ret) {
        _cleanup_(usermount_client_unrefp) usermount_client *c = NULL;
        int r;

        r = usermount_client_new(&c);
        if (r < 0) {
                log_error_errno(r, "Cannot connect to the system bus: %m");
                return EXIT_STATUS_UNAVAILABLE;
        }
        r = usermount_client_set_auth(c, ask_password ? USERMOUNT_AUTH_TTY_AGENT :
                                                            USERMOUNT_AUTH_NONE);
        if (r < 0)
                return client_log_error(c, r);
        /* Waits for the connection, so that a bus that is not there shows up here. */
        r = usermount_client_can_pass_fds(c);
        if (r < 0)
                return client_log_error(c, r);
        if (r == 0 && need_fds) {
                log_error("The system bus connection cannot pass file descriptors, which "
                          "usermount needs.");
                return EXIT_STATUS_UNAVAILABLE;
        }

        *ret = TAKE_PTR(c);
        return EXIT_STATUS_OK;
}

ExitStatus client_error_status(const char *name, int r) {
        switch (usermount_error_kind_from_name(name)) {
        case USERMOUNT_ERROR_NOT_AUTHORIZED:
        case USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN:
        case USERMOUNT_ERROR_ACCESS_DENIED:
                return EXIT_STATUS_NOT_AUTHORIZED;
        case USERMOUNT_ERROR_INVALID_ARGUMENT:
        case USERMOUNT_ERROR_INVALID_SOURCE:
        case USERMOUNT_ERROR_FILESYSTEM_NOT_ALLOWED:
        case USERMOUNT_ERROR_OPTION_NOT_ALLOWED:
                return EXIT_STATUS_REFUSED;
        case USERMOUNT_ERROR_DEVICE_BUSY:
                return EXIT_STATUS_BUSY;
        case USERMOUNT_ERROR_INVALID_TARGET:
                return EXIT_STATUS_TARGET;
        case USERMOUNT_ERROR_NOT_MOUNTED:
                return EXIT_STATUS_NOT_MOUNTED;
        case USERMOUNT_ERROR_LIMIT_EXCEEDED:
                return EXIT_STATUS_LIMIT;
        case USERMOUNT_ERROR_UNAVAILABLE:
                return EXIT_STATUS_UNAVAILABLE;
        case USERMOUNT_ERROR_FAILED:
        case USERMOUNT_ERROR_UNSUPPORTED:
        case USERMOUNT_ERROR_OTHER:
                /* Any other name may come from the daemon: its errno says nothing about us. */
                return EXIT_STATUS_FAILURE;
        case USERMOUNT_ERROR_NONE:
        default:
                break;
        }

        /* A local failure, before or without a reply. */
        switch (r) {
        case -ENOENT:       /* no bus socket */
        case -ECONNREFUSED: /* nobody listening on it */
        case -ECONNRESET:
        case -ENOTCONN:
        case -EPIPE:
        case -ETIMEDOUT:
                return EXIT_STATUS_UNAVAILABLE;
        case -EACCES:
        case -EPERM:
                return EXIT_STATUS_NOT_AUTHORIZED;
        default:
                return EXIT_STATUS_FAILURE;
        }
}

static bool startswith(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

ExitStatus client_log_error_name(const char *name, const char *text, bool connection_failed,
                                 int r) {
        usermount_error_kind kind = usermount_error_kind_from_name(name);
        ExitStatus status = connection_failed ? EXIT_STATUS_UNAVAILABLE :
                                                client_error_status(name, r);
        _cleanup_free_ char *message = NULL;

        if (name)
                /* Text from the daemon or the bus: escape it before it reaches a terminal. */
                message = output_escape(text ?: name);

        if (streq_ptr(name, "org.freedesktop.DBus.Error.ServiceUnknown") ||
            streq_ptr(name, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                log_error("usermountd is not running (no %s on the system bus).", UM_BUS_NAME);
        else if (connection_failed)
                /* A local failure of the connection itself (refused, reset, rejected). */
                log_error_errno(r, "Cannot talk to usermountd: the system bus connection "
                                "failed: %m");
        else if (streq_ptr(name, "org.freedesktop.DBus.Error.NoReply") ||
                 streq_ptr(name, "org.freedesktop.DBus.Error.Timeout"))
                /* The bus says whether it gave up waiting or usermountd went away. */
                log_error("usermountd did not answer: %s", strempty(message));
        else if (kind == USERMOUNT_ERROR_ACCESS_DENIED)
                log_error("Access to usermountd was denied: %s", strempty(message));
        else if (kind == USERMOUNT_ERROR_UNSUPPORTED)
                log_error("This usermountd does not support the request; is it older than "
                          "usermount %s? (%s)", PACKAGE_VERSION, strempty(message));
        else if (kind == USERMOUNT_ERROR_UNAVAILABLE)
                /* Bus activation of usermountd failed. */
                log_error("usermountd could not be started: %s", strempty(message));
        else if (kind == USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN) {
                /* The daemon's text speaks of "interactive", which is API language. */
                log_error("Authentication is required for this request.");
                log_error("Run usermount on a terminal to be asked for a password, or ask the "
                          "administrator for a polkit rule that allows this without one.");
        } else if (startswith(name, UM_ERROR_PREFIX))
                /* usermountd's own errors are sentences written for people. */
                log_error("%s", strempty(message));
        else if (name)
                log_error("Request to usermountd failed: %s", strempty(message));
        else
                log_error_errno(r, "Request to usermountd failed: %m");

        return status;
}

ExitStatus client_log_error(usermount_client *c, int r) {
        const char *name = NULL, *message = NULL;

        if (c)
                (void) usermount_client_get_error(c, &name, &message);
        /* sd-bus reports a broken connection as an error too; tell it apart by the state. */
        return client_log_error_name(name, message, c && usermount_client_is_connected(c) <= 0,
                                     r);
}
