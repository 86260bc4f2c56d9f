/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watching usermountd's MountAdded and MountRemoved signals (usermount_monitor_new(3)):
 * matches on the client's connection, a Subscribe call (made again whenever usermountd's
 * name gets a new owner: a restarted daemon does not know the old subscription), and the
 * connection's fd for the caller's event loop.
 *
 * Any peer on the bus may send a signal to one connection, and a match on a well-known
 * sender name is not checked by sd-bus (only the bus knows who owns a name). So a
 * MountAdded or MountRemoved counts only from the unique name that answered our Subscribe
 * (or that the bus itself named the new owner of usermountd's name), and NameOwnerChanged
 * only from the bus.
 */
#include <stdlib.h>
#include <string.h>

#include "lib-internal.h"
#include "usermount-names.h"

struct usermount_monitor {
        usermount_client *client;
        usermount_monitor_func func;
        void *userdata;
        sd_bus_slot *slots[4];
        sd_bus_slot *resubscribe; /* a Subscribe sent again, until its reply */
        char *owner;       /* usermountd's unique name; NULL while it has none */
        int stop;          /* < 0: what func returned to stop, or -ECONNRESET */
};

static int on_mount_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        usermount_monitor *monitor = userdata;
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        usermount_event event = sd_bus_message_is_signal(m, UM_MANAGER_INTERFACE, "MountAdded") > 0 ?
                                USERMOUNT_EVENT_ADDED : USERMOUNT_EVENT_REMOVED;
        const char *mount_point = NULL;
        int r;

        if (monitor->stop < 0)
                return 0;
        if (!monitor->owner || !streq_ptr(sd_bus_message_get_sender(m), monitor->owner))
                return 0; /* not usermountd's: forged by another peer */
        r = sd_bus_message_read(m, "s", &mount_point);
        if (r >= 0)
                r = info_read(m, &info);
        /* A signal this library cannot read: func hears of it, without info. */
        r = monitor->func(monitor, event, r >= 0 ? mount_point : NULL, info,
                          monitor->userdata);
        if (r < 0)
                monitor->stop = r;
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        usermount_monitor *monitor = userdata;

        if (monitor->stop >= 0)
                monitor->stop = -ECONNRESET;
        return 0;
}

/*
 * The reply to a Subscribe sent again: the caller hears of it (RESUBSCRIBED), or, when
 * usermountd refused or is gone again, the monitor stops with the error, which the client
 * keeps (usermount_client_get_error()).
 */
static int on_resubscribed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        usermount_monitor *monitor = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r;

        monitor->resubscribe = sd_bus_slot_unref(monitor->resubscribe);
        if (monitor->stop < 0)
                return 0;
        if (e) {
                sd_bus_error_free(&monitor->client->error);
                r = sd_bus_error_copy(&monitor->client->error, e);
                monitor->stop = client_error_errno(monitor->client, r < 0 ? r : -EIO);
                return 0;
        }
        r = monitor->func(monitor, USERMOUNT_EVENT_RESUBSCRIBED, NULL, NULL, monitor->userdata);
        if (r < 0)
                monitor->stop = r;
        return 0;
}

/* usermountd restarted (its name has a new owner): the subscription was the old one's. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        usermount_monitor *monitor = userdata;
        const char *name, *old_owner, *new_owner;
        char *owner;

        if (!streq_ptr(sd_bus_message_get_sender(m), "org.freedesktop.DBus") ||
            sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 ||
            !streq(name, UM_BUS_NAME))
                return 0;
        owner = new_owner[0] ? strdup(new_owner) : NULL;
        if (new_owner[0] && !owner)
                return -ENOMEM;
        free(monitor->owner);
        monitor->owner = owner;
        if (!owner)
                return 0;
        /* Ours, so that freeing the monitor cancels it; a newer restart replaces it. */
        monitor->resubscribe = sd_bus_slot_unref(monitor->resubscribe);
        return sd_bus_call_method_async(sd_bus_message_get_bus(m), &monitor->resubscribe,
                                        UM_BUS_NAME,
                                        UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Subscribe",
                                        on_resubscribed, monitor, "");
}

_public_ int usermount_monitor_new(usermount_client *c, usermount_monitor_func func,
                                   void *userdata, usermount_monitor **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        usermount_monitor *monitor;
        int r;

        if (!c || !func || !ret)
                return -EINVAL;
        monitor = calloc(1, sizeof(*monitor));
        if (!monitor)
                return -ENOMEM;
        *monitor = (usermount_monitor) {
                .client = client_ref(c),
                .func = func,
                .userdata = userdata,
        };

        client_reset_error(c);
        r = sd_bus_match_signal(c->bus, &monitor->slots[0], "org.freedesktop.DBus",
                                "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "NameOwnerChanged", on_name_owner_changed, monitor);
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, &monitor->slots[1], UM_BUS_NAME, UM_OBJECT_PATH,
                                        UM_MANAGER_INTERFACE, "MountAdded", on_mount_signal,
                                        monitor);
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, &monitor->slots[2], UM_BUS_NAME, UM_OBJECT_PATH,
                                        UM_MANAGER_INTERFACE, "MountRemoved", on_mount_signal,
                                        monitor);
        /* sd-bus reports the end of the connection as this local signal. */
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, &monitor->slots[3], "org.freedesktop.DBus.Local",
                                        "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected",
                                        on_disconnected, monitor);
        /* After the matches: no signal sent once the daemon knows us can be missed. The
         * reply says who usermountd is. */
        if (r >= 0)
                r = client_call(c, "Subscribe", NULL, NULL, &reply);
        if (r >= 0) {
                monitor->owner = strdup(strempty(sd_bus_message_get_sender(reply)));
                if (!monitor->owner)
                        r = -ENOMEM;
        }
        if (r < 0) {
                usermount_monitor_free(monitor);
                return r;
        }
        *ret = monitor;
        return 0;
}

_public_ usermount_monitor *usermount_monitor_free(usermount_monitor *monitor) {
        if (!monitor)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(monitor->slots); i++)
                sd_bus_slot_unref(monitor->slots[i]);
        sd_bus_slot_unref(monitor->resubscribe);
        free(monitor->owner);
        usermount_client_unref(monitor->client);
        free(monitor);
        return NULL;
}

_public_ int usermount_monitor_get_fd(usermount_monitor *monitor) {
        if (!monitor)
                return -EINVAL;
        return sd_bus_get_fd(monitor->client->bus);
}

_public_ int usermount_monitor_get_events(usermount_monitor *monitor) {
        if (!monitor)
                return -EINVAL;
        return sd_bus_get_events(monitor->client->bus);
}

_public_ int usermount_monitor_get_timeout(usermount_monitor *monitor, uint64_t *ret_usec) {
        if (!monitor || !ret_usec)
                return -EINVAL;
        return sd_bus_get_timeout(monitor->client->bus, ret_usec);
}

_public_ int usermount_monitor_process(usermount_monitor *monitor) {
        int r;

        if (!monitor)
                return -EINVAL;
        /* Everything that is there now, so that the fd does not stay readable for nothing. */
        do {
                if (monitor->stop < 0)
                        return monitor->stop;
                r = sd_bus_process(monitor->client->bus, NULL);
        } while (r > 0);
        if (monitor->stop < 0)
                return monitor->stop;
        if (r == -ECONNRESET || r == -ENOTCONN)
                return -ECONNRESET;
        return r;
}

_public_ int usermount_monitor_wait(usermount_monitor *monitor, uint64_t timeout_usec) {
        int r;

        r = usermount_monitor_process(monitor);
        if (r < 0)
                return r;
        r = sd_bus_wait(monitor->client->bus, timeout_usec);
        if (r == -ENOTCONN || r == -ECONNRESET)
                return -ECONNRESET;
        if (r < 0 && r != -EINTR)
                return r;
        return usermount_monitor_process(monitor);
}

_public_ int usermount_monitor_run(usermount_monitor *monitor) {
        int r;

        do
                r = usermount_monitor_wait(monitor, UINT64_MAX);
        while (r >= 0);
        return r;
}
