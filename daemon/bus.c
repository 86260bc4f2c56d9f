/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus edge of org.freedesktop.UserMount1.Manager (DBUS-API.md). Every argument is
 * parsed and validated here, into a request's MountCall (call.h), before any other code
 * sees it; the params dicts through one reader and a table per method (busparams.h). The
 * core never reads a bus message's arguments. Replies are built here too.
 */
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "bus.h"
#include "busparams.h"
#include "caller.h"
#include "config.h"
#include "driverpolicy.h"
#include "drivertable.h"
#include "log.h"
#include "pathcheck.h"
#include "procfs.h"
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

/* The params of OpenMount, MountFd and Mount, into a MountParams (DBUS-API.md). */
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

/* Validates the caller's source fd, which stays the message's: borrowed, never duplicated
 * or closed in the main process (busfds.h). */
static int bus_read_source(MountCall *call, int fd, UmError *error) {
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
        if (call->method != METHOD_MOUNT) {
                r = bus_read_source(call, fd, error);
                if (r < 0)
                        return r;
        }

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
        }
        return -EINVAL;
}

/*
 * idmap "namespace" without params["userns"]: the caller's own current user namespace,
 * which must not be the initial one (a pidfd ioctl and nsfs only: safe here). A namespace
 * the caller passed is not touched here at all: it may be a file on the caller's FUSE
 * server, where even an ioctl waits on the caller; the probe worker checks it (jobs.c).
 */
static int bus_read_userns(MountCall *call, UmError *error) {
        if (call->params.idmap != IDMAP_NAMESPACE || call->params.userns_given)
                return 0;
        return idmap_open_userns_of(call->caller.pidfd, call->caller.pid,
                                    &call->params.userns_fd, error);
}

/* Subscribe, once the caller is known: the connection receives the signals of its own
 * mounts from now on; polkit may widen that later (everybody's, bus_reply_subscribe()). */
static int bus_subscribe(Request *req, UmError *error) {
        const Caller *caller = &req->call.caller;
        int r;

        /* Exiting after being idle: the next instance is the one to subscribe to. */
        if (req->manager->idle_exiting)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EAGAIN,
                                    "usermountd was exiting after being idle when this request "
                                    "came; send it again, and the instance that is running now "
                                    "answers it.");
        /* The connection's NameOwnerChanged comes after this call (and after the bus's
         * answer about the connection, caller.h), so it finds the subscription. */
        r = subscribers_add(&req->manager->subscribers,
                            sd_bus_message_get_sender(req->call.message), caller->uid,
                            caller->uid == 0);
        if (r == -EUSERS)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EUSERS,
                                    "uid %u has %u subscriptions already, the most it may; close "
                                    "some of the connections that hold them.",
                                    (unsigned) caller->uid, SUBSCRIBERS_MAX_PER_UID);
        return r;
}

/* Answers req with error and frees it; logged, as who called is known only now. */
static void bus_refuse(Request *req, const UmError *error) {
        const char *member = sd_bus_message_get_member(req->call.message);
        const char *sender = strempty(sd_bus_message_get_sender(req->call.message));
        const Caller *caller = &req->call.caller;

        if (caller->pid > 0)
                log_request(LOG_LEVEL_INFO, caller->uid, NULL, "refuse",
                            "Refused %s of uid %u from %s: %s", member, (unsigned) caller->uid,
                            sender, error->message);
        else
                log_request(LOG_LEVEL_INFO, LOG_UID_NONE, NULL, "refuse",
                            "Refused %s from %s: %s", member, sender, error->message);
        (void) bus_reply_error(req->call.message, error);
        request_free(req);
}

/* The caller stage is done (caller.h): what needs the caller's process completes the call,
 * then the core takes the request. */
static void on_caller_known(Request *req, int r, const UmError *caller_error) {
        UmError error = {};

        if (r < 0)
                return bus_refuse(req, caller_error);
        switch (req->call.method) {
        case METHOD_OPEN_MOUNT:
        case METHOD_MOUNT_FD:
        case METHOD_MOUNT:
                r = bus_read_userns(&req->call, &error);
                /* The call is complete. The namespace is the one thing of it the request
                 * consumes (it closes it once the probe has read the maps): handed over. */
                if (r >= 0)
                        req->userns_fd = TAKE_FD(req->call.params.userns_fd);
                break;
        case METHOD_SUBSCRIBE:
                r = bus_subscribe(req, &error);
                break;
        case METHOD_UNMOUNT:
        case METHOD_LIST_MOUNTS:
                break;
        }
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                um_error_set(&error, UM_ERROR_KIND_FAILED, -r, "Could not take the request: %s.",
                             strerror(-r));
        if (r < 0)
                return bus_refuse(req, &error);
        manager_start_request(req->manager, req);
}

/*
 * Every method: parses and validates m into a new request's call (bus_parse_call()) and
 * hands the request to the caller stage, which owns it from then on; the reply comes later
 * (the call keeps a reference on the message). A refused call is answered here.
 */
static int bus_start_call(sd_bus_message *m, Manager *manager, CallMethod method) {
        _cleanup_(request_freep) Request *req = NULL;
        UmError error = {};
        int r;

        req = request_new(manager, method, m);
        if (!req)
                return -ENOMEM;
        r = bus_parse_call(&req->call, req->conf, &error);
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                return r;
        if (r < 0) {
                (void) bus_reply_error(m, &error);
                return 1; /* refused, and answered: the call is handled */
        }
        caller_identify(manager->callers, TAKE_PTR(req), on_caller_known);
        return 1;
}

static int method_open_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_OPEN_MOUNT);
}

static int method_mount_fd(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_MOUNT_FD);
}

static int method_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_MOUNT);
}

static int method_unmount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_UNMOUNT);
}

static int method_list_mounts(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_LIST_MOUNTS);
}

/* Subscribe(): the caller's connection receives the signals of the mounts it may see. */
static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return bus_start_call(m, userdata, METHOD_SUBSCRIBE);
}

int bus_reply_subscribe(Request *req) {
        if (req->list_all)
                subscribers_see_all(&req->manager->subscribers,
                                    sd_bus_message_get_sender(req->call.message));
        return sd_bus_reply_method_return(req->call.message, NULL);
}

static int method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Manager *manager = userdata;

        (void) subscribers_remove(&manager->subscribers, sd_bus_message_get_sender(m));
        return sd_bus_reply_method_return(m, NULL);
}

/* A connection closed: its unique name lost its owner, and will never be used again.
 * Whatever was kept about it goes: a subscription, and the bus's answer about it. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Manager *manager = userdata;
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (name[0] == ':' && isempty(new_owner)) {
                (void) subscribers_remove(&manager->subscribers, name);
                (void) caller_cache_forget(manager->callers, name);
        }
        return 0;
}

int bus_watch_subscribers(Manager *m) {
        /* Only names that lost their owner (arg2 empty): not every connection's coming. */
        return sd_bus_add_match_async(m->bus, &m->name_owner_slot,
                                      "type='signal',sender='org.freedesktop.DBus',"
                                      "path='/org/freedesktop/DBus',"
                                      "interface='org.freedesktop.DBus',"
                                      "member='NameOwnerChanged',arg2=''",
                                      on_name_owner_changed, NULL, m);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *ret_error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_supported_filesystems(sd_bus *bus, const char *path,
                                              const char *interface, const char *property,
                                              sd_bus_message *reply, void *userdata,
                                              sd_bus_error *ret_error) {
        Manager *m = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        for (const char *const *t = fstype_names(); *t; t++) {
                /* Either driver: the kernel's, or a userspace one (fusedriver.h). */
                if (!conf_fstype_allowed(m->conf, *t) ||
                    (!proc_has_filesystem(*t) &&
                     (!fusedriver_fuse_present() || !fusedriver_find(*t))))
                        continue;
                r = sd_bus_message_append(reply, "s", *t);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

int bus_reply_error(sd_bus_message *message, const UmError *error) {
        return sd_bus_reply_method_errorf(message, um_error_kind_to_name(error->kind), "%s",
                                          error->message[0] ? error->message : "Request failed.");
}

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

/* The info dict of DBUS-API.md for rec; with_owner adds the ListMounts keys. */
static int append_record_info(sd_bus_message *m, const MountRecord *rec, bool with_owner) {
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

int bus_reply_open_mount(Request *req, int mount_fd) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(req->call.message, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "h", mount_fd);
        if (r >= 0)
                r = append_record_info(reply, req->record, false);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

int bus_reply_mount(Request *req, const MountRecord *rec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(req->call.message, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", rec->mount_point);
        if (r >= 0)
                r = append_record_info(reply, rec, false);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

int bus_reply_list_mounts(Request *req) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const Registry *reg = req->manager->registry;
        int r;

        r = sd_bus_message_new_method_return(req->call.message, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        for (size_t i = 0; r >= 0 && reg && i < reg->n_records; i++)
                if (req->list_all || reg->records[i]->owner_uid == req->call.caller.uid)
                        r = append_record_info(reply, reg->records[i], true);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        return r;
}

/* One signal to one subscriber: never broadcast (subscribers.h). */
static int emit_to(Manager *m, const char *destination, const char *member,
                   const MountRecord *rec) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *signal = NULL;
        int r;

        r = sd_bus_message_new_signal(m->bus, &signal, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                      member);
        if (r >= 0)
                r = sd_bus_message_set_destination(signal, destination);
        if (r >= 0)
                r = sd_bus_message_append(signal, "s", strempty(rec->mount_point));
        if (r >= 0)
                r = append_record_info(signal, rec, true);
        if (r >= 0)
                r = sd_bus_send(m->bus, signal, NULL);
        return r;
}

int bus_emit_mount_signal(Manager *m, const char *member, const MountRecord *rec) {
        int r = 0;

        if (!m->bus)
                return 0;
        for (size_t i = 0; i < m->subscribers.n; i++) {
                const Subscriber *sub = &m->subscribers.items[i];

                if (subscriber_sees(sub, rec->owner_uid)) {
                        int k = emit_to(m, sub->name, member, rec);

                        if (k < 0 && r >= 0)
                                r = k;
                }
        }
        return r;
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SupportedFilesystems", "as", property_get_supported_filesystems, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        /* UNPRIVILEGED: any user may call; polkit decides what they may do. */
        SD_BUS_METHOD_WITH_NAMES("Mount", "sssa{sv}",
                                 SD_BUS_PARAM(device) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_mount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("MountFd", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_mount_fd, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("OpenMount", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "ha{sv}", SD_BUS_PARAM(mount) SD_BUS_PARAM(info),
                                 method_open_mount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Unmount", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(params),
                                 "", "", method_unmount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListMounts", "a{sv}", SD_BUS_PARAM(params),
                                 "aa{sv}", SD_BUS_PARAM(mounts),
                                 method_list_mounts, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Subscribe", "", "", method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Unsubscribe", "", "", method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_NAMES("MountAdded", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_SIGNAL_WITH_NAMES("MountRemoved", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_VTABLE_END,
};
