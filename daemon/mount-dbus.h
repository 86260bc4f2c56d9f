/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A registered mount on the bus: the info dictionary of org.freedesktop.UserMount1(5)
 * that replies and signals carry, and the signals themselves, each sent to the
 * subscribers that may see the mount (never broadcast, subscribers.h).
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "registry.h"
#include "subscribers.h"

/* Appends the info dict (a{sv}) of rec to m; with_owner adds the ListMounts keys. */
int mount_dbus_append_info(sd_bus_message *m, const MountRecord *rec, bool with_owner);

/* Sends MountAdded or MountRemoved (member) for rec to each subscriber that may see it;
 * nothing without a bus. */
int mount_dbus_emit(sd_bus *bus, const Subscribers *subscribers, const char *member,
                    const MountRecord *rec);
