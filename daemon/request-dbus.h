/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus edge of a request (docs/style.md rule 6): every argument of a call parsed and
 * validated into a MountCall (call.h) before any other code sees it, and the replies.
 * The methods' entry points are manager-dbus.h's.
 */
#pragma once

#include <systemd/sd-bus.h>

#include <stdbool.h>
#include <sys/types.h>

#include "call.h"
#include "conf.h"
#include "registry.h"
#include "subscribers.h"

/*
 * Reads the a{sv} params of OpenMount, MountFd and Mount from m into p, which must be
 * zeroed with p->userns_fd = -EBADF; what it fills in is owned by p (target) even on
 * failure, except params["userns"], which stays the message's fd (borrowed, busfds.h).
 * Unknown keys, wrong types, repeats, more than 32 entries and "userns"
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

/* The arguments of a mount call (OpenMount, MountFd, Mount, or a front's: the UDisks2
 * front's Filesystem.Mount) checked and copied into call: device (Mount only, else NULL),
 * fstype ("" for any), options, and call->params.target if set. Refusals as
 * bus_parse_call()'s. */
int call_set_mount_args(MountCall *call, const Conf *conf, const char *device,
                        const char *fstype, const char *options, UmError *error);

/* Validates the caller's source fd fd (a fd of call->message: it stays the message's,
 * borrowed, never duplicated or closed in the main process, busfds.h) into call->source_fd,
 * source_read_only and source_path. Refusals as bus_parse_call()'s. */
int call_set_source_fd(MountCall *call, int fd, UmError *error);

/* Replies to message with error (mapped in errors.c). */
int bus_reply_error(sd_bus_message *message, const UmError *error);

/* idmap "namespace" without params["userns"]: opens the caller's own current user
 * namespace into call->params.userns_fd, once the caller is known (a pidfd ioctl and nsfs
 * only); refused (InvalidArgument) when it is the initial one. 0 for every other call. */
int bus_read_userns(MountCall *call, UmError *error);

/* Replies to an OpenMount call with the mount fd and the info dict of rec. */
int bus_reply_open_mount(sd_bus_message *call, int mount_fd, const MountRecord *rec);

/* Replies to a Mount/MountFd call with the mount point and info of rec. */
int bus_reply_mount(sd_bus_message *call, const MountRecord *rec);

/* Replies to ListMounts with the records of uid, or every record when all. */
int bus_reply_list_mounts(sd_bus_message *call, const Registry *reg, uid_t uid, bool all);

/* Replies to Subscribe; all: the caller's connection sees every mount from now on. */
int bus_reply_subscribe(sd_bus_message *call, Subscribers *subscribers, bool all);
