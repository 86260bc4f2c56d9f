/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A call's arguments in and its answer out: the bus edge of a request (request-dbus.h;
 * the contract is org.freedesktop.UserMount1(5)). Every argument is parsed and validated
 * here, into a MountCall (call.h), before any other code sees it; the params dicts
 * through one reader and a table per method (busparams.h). The pipeline never reads a bus
 * message's arguments. Its replies are built here too.
 */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "request-dbus.h"
#include "busparams.h"
#include "policy.h"
#include "source.h"
#include "driverpolicy.h"
#include "pathcheck.h"
#include "mount-dbus.h"
#include "usermount-names.h"

/* A D-Bus dict larger than this is not a mistake but an attack on our memory. */
#define PARAMS_MAX 32

static int set_idmap(const BusParam *p, const BusParamValue *v, void *target, UmError *error) {
        MountParams *params = target;

        params->idmap_given = true;
        if (streq(v->s, "none"))
                params->idmap = IDMAP_NONE;
        else if (streq(v->s, "user"))
                params->idmap = IDMAP_USER;
        else if (streq(v->s, "namespace"))
                params->idmap = IDMAP_NAMESPACE;
        else
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'idmap' must be 'none', 'user' or 'namespace'.");
        return 0;
}

static int set_driver(const BusParam *p, const BusParamValue *v, void *target, UmError *error) {
        MountParams *params = target;
        int k = driver_kind_from_name(v->s);

        if (k < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'driver' must be 'kernel' or 'userspace'.");
        params->driver = k;
        return 0;
}

/* The message's own fd, borrowed (busfds.h), which nothing in the main process looks at
 * (MountParams.userns_given). */
static int set_userns(const BusParam *p, const BusParamValue *v, void *target, UmError *error) {
        MountParams *params = target;

        params->userns_fd = v->fd;
        params->userns_given = true;
        return 0;
}

static int set_partition(const BusParam *p, const BusParamValue *v, void *target,
                         UmError *error) {
        MountParams *params = target;

        params->partition_given = true;
        params->partition = v->u;
        return 0;
}

/* The params of OpenMount, MountFd and Mount, into a MountParams
 * (org.freedesktop.UserMount1(5)). */
static const BusParam mount_params[] = {
        { "target", 's', offsetof(MountParams, target), bus_param_set_string },
        { "read-only", 'b', offsetof(MountParams, read_only), bus_param_set_bool },
        { "exec", 'b', offsetof(MountParams, exec), bus_param_set_bool },
        { "idmap", 's', offsetof(MountParams, idmap), set_idmap },
        { "userns", 'h', offsetof(MountParams, userns_fd), set_userns },
        { "interactive", 'b', offsetof(MountParams, interactive), bus_param_set_bool },
        { "driver", 's', offsetof(MountParams, driver), set_driver },
        { "partition", 'u', offsetof(MountParams, partition), set_partition },
};

static const BusParamTable mount_params_table = {
        .params = mount_params,
        .n_params = ELEMENTSOF(mount_params),
        .max_entries = PARAMS_MAX,
        .refuse = bus_params_refuse,
};

static int refuse_unmount_param(const BusParamTable *t, const char *key, bool twice,
                                UmError *error) {
        char esc[128];

        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                            "Unmount takes the parameters 'force' and 'interactive' (b), each "
                            "once; not '%s'.", um_escape(key, esc, sizeof(esc)));
}

/* The params of Unmount, into its MountCall. */
static const BusParam unmount_params[] = {
        { "force", 'b', offsetof(MountCall, force), bus_param_set_bool },
        { "interactive", 'b', offsetof(MountCall, params.interactive), bus_param_set_bool },
};

static const BusParamTable unmount_params_table = {
        .params = unmount_params,
        .n_params = ELEMENTSOF(unmount_params),
        .max_entries = PARAMS_MAX,
        .refuse = refuse_unmount_param,
};

static int refuse_list_param(const BusParamTable *t, const char *key, bool twice,
                             UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                            "ListMounts takes no parameters yet.");
}

/* ListMounts: no parameters are defined yet; any is an error. */
static const BusParamTable list_params_table = {
        .max_entries = PARAMS_MAX,
        .refuse = refuse_list_param,
};

int bus_read_params(sd_bus_message *m, MountParams *p, UmError *error) {
        int r;

        r = bus_params_read(m, &mount_params_table, p, error);
        if (r < 0)
                return r;
        if (p->userns_fd >= 0 && p->idmap != IDMAP_NAMESPACE)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'userns' is only meaningful with idmap "
                                    "'namespace'.");
        return 0;
}

/* An absolute, normalised path: no "..", ".", "//" components, no trailing '/'. */
static int check_absolute_path(const char *what, const char *path, UmError *error) {
        char esc[256];

        if (path_check_canonical(path, PATH_MAX) != PATH_OK)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The %s must be an absolute path without '.', '..' or '//' "
                                    "components: '%s'.", what, um_escape(path, esc, sizeof(esc)));
        if (path_has_control_characters(path))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The %s contains control characters.", what);
        return 0;
}

int call_set_source_fd(MountCall *call, int fd, UmError *error) {
        char path[64], target[4096];
        SourceInfo info;
        ssize_t n;
        int r;

        /* The rest of the inspection touches the file's filesystem (a hung FUSE server could
         * stall the main loop): the probe worker does it. */
        r = source_check_access(fd, &info, error);
        if (r < 0)
                return r;
        call->source_read_only = info.read_only;
        call->source_fd = fd;

        /* For logs and polkit details only; the daemon never opens this path. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", call->source_fd);
        n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        call->source_path = strdup(target);
        return call->source_path ? 0 : -ENOMEM;
}

/* OpenMount, MountFd, Mount: (h|s, s fstype, s options, a{sv} params). */
static int bus_parse_mount_call(MountCall *call, const Conf *conf, UmError *error) {
        sd_bus_message *m = call->message;
        const char *fstype, *options, *device = NULL;
        int fd = -EBADF, r;

        if (call->method == METHOD_MOUNT)
                r = sd_bus_message_read(m, "sss", &device, &fstype, &options);
        else
                r = sd_bus_message_read(m, "hss", &fd, &fstype, &options);
        if (r < 0)
                return r;
        r = bus_read_params(m, &call->params, error);
        if (r < 0)
                return r;
        if (call->params.target && call->method == METHOD_OPEN_MOUNT)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "OpenMount does not attach the mount; 'target' is for Mount "
                                    "and MountFd.");
        /* A device path names the partition itself (/dev/sdb2); only an image file's
         * partitions have no node of their own. */
        if (call->params.partition_given && call->method == METHOD_MOUNT)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Mount takes the partition's own device (such as "
                                    "/dev/sdb2), not 'partition'; that parameter is for "
                                    "images passed to MountFd and OpenMount.");
        if (call->method != METHOD_MOUNT) {
                r = call_set_source_fd(call, fd, error);
                if (r < 0)
                        return r;
        }
        return call_set_mount_args(call, conf, device, fstype, options, error);
}

int call_set_mount_args(MountCall *call, const Conf *conf, const char *device,
                        const char *fstype, const char *options, UmError *error) {
        int r;

        if (call->params.target) {
                r = check_absolute_path("target", call->params.target, error);
                if (r < 0)
                        return r;
        }
        if (device) {
                r = check_absolute_path("device", device, error);
                if (r < 0)
                        return r;
        }
        if (!isempty(fstype) && !conf_fstype_allowed(conf, fstype)) {
                char esc[64];

                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "Filesystem type '%s' is not allowed for user mounts%s.",
                                    um_escape(fstype, esc, sizeof(esc)),
                                    fstype_allowed(fstype) ?
                                            " by the administrator (AllowedFilesystems=)" : "");
        }
        r = policy_check_options_syntax(options, error);
        if (r < 0)
                return r;
        call->fstype = strdup(fstype);
        call->options = strdup(options);
        if (device)
                call->device_path = strdup(device);
        if (!call->fstype || !call->options || (device && !call->device_path))
                return -ENOMEM;
        return 0;
}

/* Unmount(s mount_point, a{sv} params): "force" (b) and "interactive" (b), each at most once. */
static int bus_parse_unmount_call(MountCall *call, UmError *error) {
        const char *mount_point;
        int r;

        r = sd_bus_message_read(call->message, "s", &mount_point);
        if (r < 0)
                return r;
        r = bus_params_read(call->message, &unmount_params_table, call, error);
        if (r < 0)
                return r;
        r = check_absolute_path("mount point", mount_point, error);
        if (r < 0)
                return r;
        call->unmount_point = strdup(mount_point);
        return call->unmount_point ? 0 : -ENOMEM;
}

int bus_parse_call(MountCall *call, const Conf *conf, UmError *error) {
        switch (call->method) {
        case METHOD_OPEN_MOUNT:
        case METHOD_MOUNT_FD:
        case METHOD_MOUNT:
                return bus_parse_mount_call(call, conf, error);
        case METHOD_UNMOUNT:
                return bus_parse_unmount_call(call, error);
        case METHOD_LIST_MOUNTS:
                return bus_params_read(call->message, &list_params_table, call, error);
        case METHOD_SUBSCRIBE:
                return 0;
        case METHOD_LOOP_SETUP: /* the UDisks2 front's own (udisks-methods.c) */
        case METHOD_DRIVE_EJECT:
                break;
        }
        return -EINVAL;
}

/*
 * idmap "namespace" without params["userns"]: the caller's own current user namespace,
 * which must not be the initial one (a pidfd ioctl and nsfs only: safe here). A namespace
 * the caller passed is not touched here at all: it may be a file on the caller's FUSE
 * server, where even an ioctl waits on the caller; the probe worker checks it (jobs.c).
 */
int bus_read_userns(MountCall *call, UmError *error) {
        if (call->params.idmap != IDMAP_NAMESPACE || call->params.userns_given)
                return 0;
        return idmap_open_userns_of(call->caller.pidfd, call->caller.pid,
                                    &call->params.userns_fd, error);
}

int bus_reply_subscribe(sd_bus_message *call, Subscribers *subscribers, bool all) {
        if (all)
                subscribers_see_all(subscribers, sd_bus_message_get_sender(call));
        return sd_bus_reply_method_return(call, NULL);
}

int bus_reply_error(sd_bus_message *message, const UmError *error) {
        return sd_bus_reply_method_errorf(message, um_error_kind_to_name(error->kind), "%s",
                                          error->message[0] ? error->message : "Request failed.");
}

int bus_reply_open_mount(sd_bus_message *call, int mount_fd, const MountRecord *rec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "h", mount_fd);
        if (r >= 0)
                r = mount_dbus_append_info(reply, rec, false);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

int bus_reply_mount(sd_bus_message *call, const MountRecord *rec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", rec->mount_point);
        if (r >= 0)
                r = mount_dbus_append_info(reply, rec, false);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

int bus_reply_list_mounts(sd_bus_message *call, const Registry *reg, uid_t uid, bool all) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(call, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        for (size_t i = 0; r >= 0 && reg && i < reg->n_records; i++)
                if (all || reg->records[i]->owner_uid == uid)
                        r = mount_dbus_append_info(reply, reg->records[i], true);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}
