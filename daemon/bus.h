/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus edge (STYLE.md rule 6): the vtable of org.freedesktop.UserMount1.Manager,
 * one method_<name>() per method that parses and validates all input into a request's
 * MountCall (call.h), and the functions that build replies and signals.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "call.h"
#include "conf.h"
#include "manager.h"

extern const sd_bus_vtable manager_vtable[];

/*
 * Reads the a{sv} params of OpenMount, MountFd and Mount from m into p, which must be
 * zeroed with p->userns_fd = -EBADF; what it fills in is owned by p (target) even on
 * failure, except params["userns"], which stays the message's fd (borrowed, busfds.h). Unknown keys, wrong types, repeats, more than 32 entries and "userns"
 * without idmap "namespace" are -EINVAL/-E2BIG with error set (InvalidArgument); other
 * failures are sd-bus's -errno, error untouched. Pure (tests/fuzz reaches it with messages
 * built from arbitrary bytes).
 */
int bus_read_params(sd_bus_message *m, MountParams *p, UmError *error);

/*
 * Reads the arguments of call->message (a method call of call->method, made by call_init()
 * and read from its start) into call, and validates them: every argument the method takes,
 * its params through the method's table. Not the caller (caller.h) and not params["userns"]
 * when absent (the caller's own namespace, once the caller is known). What it fills in is
 * owned by call even on failure. Refusals are -errno with error set (InvalidArgument,
 * InvalidSource, FilesystemNotAllowed, OptionNotAllowed, or Failed if the source fd could
 * not be copied); other failures are sd-bus's -errno (or -ENOMEM), error untouched. Reads
 * nothing but the message and conf (fcntl() and readlink() on the source fd).
 */
int bus_parse_call(MountCall *call, const Conf *conf, UmError *error);

/* Replies to message with error (mapped in errors.c). */
int bus_reply_error(sd_bus_message *message, const UmError *error);

/* Replies to an OpenMount call with the mount fd and the info dict of req->record. */
int bus_reply_open_mount(Request *req, int mount_fd);

/* Replies to a Mount/MountFd call with the mount point and info of rec. */
int bus_reply_mount(Request *req, const MountRecord *rec);

/* Replies to ListMounts with the records req may see. */
int bus_reply_list_mounts(Request *req);

/* Subscribes the caller of req (Subscribe) and replies; req->list_all: sees every mount. */
int bus_reply_subscribe(Request *req);

/* From now on, forgets the subscription and the cached credentials (caller.h) of each
 * connection that closes (NameOwnerChanged). */
int bus_watch_subscribers(Manager *m);

/* Sends MountAdded or MountRemoved (member) for rec to each subscriber that may see it. */
int bus_emit_mount_signal(Manager *m, const char *member, const MountRecord *rec);
