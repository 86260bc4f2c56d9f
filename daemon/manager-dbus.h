/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * org.freedesktop.UserMount1.Manager on the system bus (docs/style.md rule 6): the
 * connection, the name, the object with its vtable (each method's entry point hands a
 * parsed call to the caller stage, caller.h, then to the pipeline, pipeline.h), the
 * properties and the subscriptions.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured), exports the object,
 * watches for connections that close and asks for the name (asynchronously: "ready" is
 * logged when the bus grants it; the event loop ends with EXIT_FAILURE when it does not
 * or the bus goes). */
int manager_connect_bus(Manager *m);

/* The same on a connection made elsewhere (a bus client that is started or starting),
 * which m takes: the unit tests' socketpair. */
int manager_attach_bus(Manager *m, sd_bus *bus);

/* Appends the filesystem types a user may mount here (a kernel or a userspace driver
 * serves them, and the configuration allows them), as the "as" of SupportedFilesystems. */
int bus_append_supported_filesystems(sd_bus_message *reply, Manager *m);
