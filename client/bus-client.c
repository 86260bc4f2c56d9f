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

int client_bus_open(sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        /*
         * sd_bus_open_system() reads $DBUS_SYSTEM_BUS_ADDRESS (with secure_getenv()), the
         * one piece of the environment usermount honours. Whatever a caller points it at
         * can only deceive the caller itself: usermountd learns who is asking from the
         * bus, never from anything the client sends about itself.
         */
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

ExitStatus client_bus_connect(bool need_fds, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = client_bus_open(&bus);
        if (r < 0) {
                log_error_errno(r, "Cannot connect to the system bus: %m");
                return EXIT_STATUS_UNAVAILABLE;
        }
        /* Waits for the connection, so that a bus that is not there shows up here. */
        r = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD);
        if (r < 0)
                return client_bus_log_error(bus, NULL, r);
        if (r == 0 && need_fds) {
                log_error("The system bus connection cannot pass file descriptors, which "
                          "usermount needs.");
                return EXIT_STATUS_UNAVAILABLE;
        }

        *ret = TAKE_PTR(bus);
        return EXIT_STATUS_OK;
}

int client_bus_list_mounts(sd_bus *bus, sd_bus_error *error, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "ListMounts");
        if (r < 0)
                return r;
        /* No params are defined for ListMounts yet. */
        r = sd_bus_message_append(m, "a{sv}", 0);
        if (r < 0)
                return r;
        return sd_bus_call(bus, m, CLIENT_CALL_TIMEOUT_USEC, error, ret_reply);
}

static const struct {
        const char *name;
        ExitStatus status;
} error_status_table[] = {
        { UM_ERROR_NOT_AUTHORIZED, EXIT_STATUS_NOT_AUTHORIZED },
        { UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, EXIT_STATUS_NOT_AUTHORIZED },
        { UM_ERROR_INVALID_ARGUMENT, EXIT_STATUS_REFUSED },
        { UM_ERROR_INVALID_SOURCE, EXIT_STATUS_REFUSED },
        { UM_ERROR_FILESYSTEM_NOT_ALLOWED, EXIT_STATUS_REFUSED },
        { UM_ERROR_OPTION_NOT_ALLOWED, EXIT_STATUS_REFUSED },
        { UM_ERROR_DEVICE_BUSY, EXIT_STATUS_BUSY },
        { UM_ERROR_INVALID_TARGET, EXIT_STATUS_TARGET },
        { UM_ERROR_NOT_MOUNTED, EXIT_STATUS_NOT_MOUNTED },
        { UM_ERROR_LIMIT_EXCEEDED, EXIT_STATUS_LIMIT },
        { UM_ERROR_FAILED, EXIT_STATUS_FAILURE },
        /* The bus's own errors: is usermountd there, and may we talk to it? */
        { SD_BUS_ERROR_SERVICE_UNKNOWN, EXIT_STATUS_UNAVAILABLE },
        { SD_BUS_ERROR_NAME_HAS_NO_OWNER, EXIT_STATUS_UNAVAILABLE },
        { SD_BUS_ERROR_NO_REPLY, EXIT_STATUS_UNAVAILABLE },
        { SD_BUS_ERROR_TIMEOUT, EXIT_STATUS_UNAVAILABLE },
        { SD_BUS_ERROR_ACCESS_DENIED, EXIT_STATUS_NOT_AUTHORIZED },
};

#define SPAWN_ERROR_PREFIX "org.freedesktop.DBus.Error.Spawn."

static bool startswith(const char *s, const char *prefix) {
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

ExitStatus client_bus_error_status(const sd_bus_error *error, int r) {
        if (sd_bus_error_is_set(error)) {
                for (size_t i = 0; i < ELEMENTSOF(error_status_table); i++)
                        if (sd_bus_error_has_name(error, error_status_table[i].name))
                                return error_status_table[i].status;
                /* Bus activation of usermountd failed. */
                if (startswith(error->name, SPAWN_ERROR_PREFIX))
                        return EXIT_STATUS_UNAVAILABLE;
                /* Any other name may come from the daemon: its errno says nothing about us. */
                return EXIT_STATUS_FAILURE;
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

ExitStatus client_bus_log_error(sd_bus *bus, const sd_bus_error *error, int r) {
        /* sd-bus reports a broken connection as an error too; tell it apart by the state. */
        bool connection_failed = bus && sd_bus_is_open(bus) <= 0;
        ExitStatus status = connection_failed ? EXIT_STATUS_UNAVAILABLE :
                                                client_bus_error_status(error, r);
        _cleanup_free_ char *message = NULL;

        if (sd_bus_error_is_set(error))
                /* Text from the daemon or the bus: escape it before it reaches a terminal. */
                message = output_escape(error->message ?: error->name);

        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                   SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                log_error("usermountd is not running (no %s on the system bus).", UM_BUS_NAME);
        else if (connection_failed)
                /* A local failure of the connection itself (refused, reset, rejected). */
                log_error_errno(r, "Cannot talk to usermountd: the system bus connection "
                                "failed: %m");
        else if (sd_bus_error_has_names(error, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT))
                /* The bus says whether it gave up waiting or usermountd went away. */
                log_error("usermountd did not answer: %s", strempty(message));
        else if (sd_bus_error_has_name(error, SD_BUS_ERROR_ACCESS_DENIED))
                log_error("Access to usermountd was denied: %s", strempty(message));
        else if (sd_bus_error_has_names(error, SD_BUS_ERROR_UNKNOWN_METHOD,
                                        SD_BUS_ERROR_UNKNOWN_OBJECT,
                                        SD_BUS_ERROR_UNKNOWN_INTERFACE))
                log_error("This usermountd does not support the request; is it older than "
                          "usermount %s? (%s)", PACKAGE_VERSION, strempty(message));
        else if (sd_bus_error_is_set(error) && startswith(error->name, SPAWN_ERROR_PREFIX))
                log_error("usermountd could not be started: %s", strempty(message));
        else if (sd_bus_error_has_name(error, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN)) {
                /* The daemon's text speaks of "interactive", which is API language. */
                log_error("Authentication is required for this request.");
                log_error("Run usermount on a terminal to be asked for a password, or ask the "
                          "administrator for a polkit rule that allows this without one.");
        } else if (sd_bus_error_is_set(error) && startswith(error->name, UM_ERROR_PREFIX))
                /* usermountd's own errors are sentences written for people. */
                log_error("%s", strempty(message));
        else if (sd_bus_error_is_set(error))
                log_error("Request to usermountd failed: %s", strempty(message));
        else
                log_error_errno(r, "Request to usermountd failed: %m");

        return status;
}
