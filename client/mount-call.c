/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Building and sending one mount request to usermountd (mount-call.h). */
#include "bus-client.h"
#include "macro.h"
#include "mount-call.h"
#include "usermount-names.h"

/* Appends the params dict (DBUS-API.md) of c; absent fields leave their keys out. */
static int append_params(sd_bus_message *m, const MountCall *c, bool interactive) {
        int r;

        r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;
        if (c->target) {
                r = sd_bus_message_append(m, "{sv}", "target", "s", c->target);
                if (r < 0)
                        return r;
        }
        if (c->read_only) {
                r = sd_bus_message_append(m, "{sv}", "read-only", "b", 1);
                if (r < 0)
                        return r;
        }
        if (c->exec) {
                r = sd_bus_message_append(m, "{sv}", "exec", "b", 1);
                if (r < 0)
                        return r;
        }
        if (c->idmap) {
                r = sd_bus_message_append(m, "{sv}", "idmap", "s", c->idmap);
                if (r < 0)
                        return r;
        }
        if (c->userns_fd >= 0) {
                r = sd_bus_message_append(m, "{sv}", "userns", "h", c->userns_fd);
                if (r < 0)
                        return r;
        }
        if (c->partition > 0) {
                r = sd_bus_message_append(m, "{sv}", "partition", "u", c->partition);
                if (r < 0)
                        return r;
        }
        if (c->driver) {
                r = sd_bus_message_append(m, "{sv}", "driver", "s", c->driver);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_append(m, "{sv}", "interactive", "b", (int) interactive);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int mount_call(sd_bus *bus, bool interactive, void *userdata, sd_bus_error *error,
               sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const MountCall *c = userdata;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, c->method);
        if (r < 0)
                return r;
        if (c->device)
                r = sd_bus_message_append(m, "s", c->device);
        else
                r = sd_bus_message_append(m, "h", c->source_fd);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", strempty(c->fstype), strempty(c->options));
        if (r < 0)
                return r;
        r = append_params(m, c, interactive);
        if (r < 0)
                return r;

        return sd_bus_call(bus, m, CLIENT_CALL_TIMEOUT_USEC, error, ret_reply);
}
