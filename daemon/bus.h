/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus edge (STYLE.md rule 6): the vtable of org.freedesktop.UserMount1.Manager,
 * one method_<name>() per method that parses and validates all input into a Request,
 * and the functions that build replies and signals.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "manager.h"

extern const sd_bus_vtable manager_vtable[];

/* Replies to message with error (mapped in errors.c). */
int bus_reply_error(sd_bus_message *message, const UmError *error);

/* Replies to an OpenMount call with the mount fd and the info dict of req->record. */
int bus_reply_open_mount(Request *req, int mount_fd);

/* Replies to a Mount/MountFd call with the mount point and info of rec. */
int bus_reply_mount(Request *req, const MountRecord *rec);

/* Replies to ListMounts with the records req may see. */
int bus_reply_list_mounts(Request *req);

/* Emits MountAdded or MountRemoved (member) for rec. */
int bus_emit_mount_signal(Manager *m, const char *member, const MountRecord *rec);
