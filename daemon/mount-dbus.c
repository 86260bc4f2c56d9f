/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A registered mount on the bus (mount-dbus.h): its info dictionary, in replies and
 * signals alike, and MountAdded/MountRemoved to the subscribers who may see it.
 */
#include <sys/mount.h>

#include "macro.h"
#include "mount-dbus.h"
#include "usermount-names.h"

/* Record strings are valid UTF-8 by construction (device data is escaped on the way in). */
static int append_info_string(sd_bus_message *m, const char *key, const char *value) {
        if (isempty(value))
                return 0;
        return sd_bus_message_append(m, "{sv}", key, "s", value);
}

static int append_attributes(sd_bus_message *m, uint64_t attr) {
        static const struct {
                uint64_t bit;
                const char *name;
        } table[] = {
                { MOUNT_ATTR_NODEV, "nodev" },
                { MOUNT_ATTR_NOSUID, "nosuid" },
                { MOUNT_ATTR_NOEXEC, "noexec" },
                { MOUNT_ATTR_RDONLY, "ro" },
                { MOUNT_ATTR_IDMAP, "idmap" },
        };
        int r;

        r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "attributes");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "as");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "s");
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(table); i++)
                if (attr & table[i].bit)
                        r = sd_bus_message_append(m, "s", table[i].name);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* The info dict of org.freedesktop.UserMount1(5) for rec; with_owner adds the ListMounts keys. */
int mount_dbus_append_info(sd_bus_message *m, const MountRecord *rec, bool with_owner) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_info_string(m, "mount-point", rec->mount_point);
        if (r >= 0)
                r = append_info_string(m, "device", rec->device);
        if (r >= 0)
                r = append_info_string(m, "backing-file", rec->backing_file);
        if (r >= 0)
                r = append_info_string(m, "fstype", rec->fstype);
        if (r >= 0)
                r = append_info_string(m, "label", rec->label);
        if (r >= 0)
                r = append_info_string(m, "uuid", rec->uuid);
        if (r >= 0 && rec->partition > 0)
                r = sd_bus_message_append(m, "{sv}", "partition", "u", rec->partition);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "options", "s", strempty(rec->options));
        if (r >= 0)
                r = append_attributes(m, rec->attr_set);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "driver", "s", rec->driver ?: "kernel");
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "idmap", "s", rec->idmap ?: "none");
        if (r >= 0)
                r = append_info_string(m, "idmap-uid-map", rec->idmap_uid_map);
        if (r >= 0)
                r = append_info_string(m, "idmap-gid-map", rec->idmap_gid_map);
        if (r >= 0 && rec->mount_id)
                r = sd_bus_message_append(m, "{sv}", "mount-id", "t", rec->mount_id);
        if (r >= 0 && with_owner)
                r = sd_bus_message_append(m, "{sv}{sv}", "owner-uid", "u", (uint32_t) rec->owner_uid,
                                          "created-usec", "t", rec->created_usec);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* One signal to one subscriber: never broadcast (subscribers.h). */
static int emit_to(sd_bus *bus, const char *destination, const char *member,
                   const MountRecord *rec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *signal = NULL;
        int r;

        r = sd_bus_message_new_signal(bus, &signal, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                      member);
        if (r >= 0)
                r = sd_bus_message_set_destination(signal, destination);
        if (r >= 0)
                r = sd_bus_message_append(signal, "s", strempty(rec->mount_point));
        if (r >= 0)
                r = mount_dbus_append_info(signal, rec, true);
        if (r >= 0)
                r = sd_bus_send(bus, signal, NULL);
        return r;
}

int mount_dbus_emit(sd_bus *bus, const Subscribers *subscribers, const char *member,
                    const MountRecord *rec) {
        int r = 0;

        if (!bus)
                return 0;
        for (size_t i = 0; i < subscribers->n; i++) {
                const Subscriber *sub = &subscribers->items[i];

                if (subscriber_sees(sub, rec->owner_uid)) {
                        int k = emit_to(bus, sub->name, member, rec);

                        if (k < 0 && r >= 0)
                                r = k;
                }
        }
        return r;
}
