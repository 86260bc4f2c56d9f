/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus edge of org.freedesktop.UserMount1.Manager (DBUS-API.md). Every argument is
 * parsed and validated here, into a typed Request, before any other code sees it; the
 * core never touches a bus message. Replies are built here too.
 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "bus.h"
#include "config.h"
#include "usermount-names.h"

/* A D-Bus dict larger than this is not a mistake but an attack on our memory. */
#define PARAMS_MAX 32

/* Reads the variant of one params entry, which must have signature sig. */
static int read_variant(sd_bus_message *m, const char *key, const char *sig, void *ret,
                        UmError *error) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (type != 'v' || !streq(contents, sig))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter '%s' must have D-Bus type '%s'.", key, sig);
        r = sd_bus_message_enter_container(m, 'v', sig);
        if (r < 0)
                return r;
        r = sd_bus_message_read_basic(m, sig[0], ret);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int read_bool(sd_bus_message *m, const char *key, bool *ret, UmError *error) {
        int b, r;

        r = read_variant(m, key, "b", &b, error);
        if (r < 0)
                return r;
        *ret = b;
        return 0;
}

static int parse_idmap(const char *s, IdmapMode *ret, UmError *error) {
        if (streq(s, "none"))
                *ret = IDMAP_NONE;
        else if (streq(s, "user"))
                *ret = IDMAP_USER;
        else if (streq(s, "namespace"))
                *ret = IDMAP_NAMESPACE;
        else
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'idmap' must be 'none', 'user' or 'namespace'.");
        return 0;
}

static int read_param(sd_bus_message *m, const char *key, MountParams *p, unsigned *seen,
                      UmError *error) {
        static const char *const keys[] = { "target", "read-only", "exec", "idmap", "userns",
                                            "interactive" };
        const char *s;
        unsigned bit = 0;
        int fd, r;

        for (unsigned i = 0; i < ELEMENTSOF(keys); i++)
                if (streq(key, keys[i]))
                        bit = 1u << i;
        if (bit == 0) {
                char esc[128];

                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Unknown parameter '%s' (known: target, read-only, exec, "
                                    "idmap, userns, interactive).",
                                    um_escape(key, esc, sizeof(esc)));
        }
        if (*seen & bit)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter '%s' was given twice.", key);
        *seen |= bit;

        if (streq(key, "target")) {
                r = read_variant(m, key, "s", &s, error);
                if (r < 0)
                        return r;
                p->target = strdup(s);
                return p->target ? 0 : -ENOMEM;
        }
        if (streq(key, "read-only"))
                return read_bool(m, key, &p->read_only, error);
        if (streq(key, "exec"))
                return read_bool(m, key, &p->exec, error);
        if (streq(key, "interactive"))
                return read_bool(m, key, &p->interactive, error);
        if (streq(key, "idmap")) {
                r = read_variant(m, key, "s", &s, error);
                if (r < 0)
                        return r;
                return parse_idmap(s, &p->idmap, error);
        }
        /* userns */
        r = read_variant(m, key, "h", &fd, error);
        if (r < 0)
                return r;
        p->userns_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return p->userns_fd < 0 ? -errno : 0;
}

/* Parses the a{sv} params; unknown keys, wrong types and repeats are InvalidArgument. */
static int bus_read_params(sd_bus_message *m, MountParams *p, UmError *error) {
        unsigned seen = 0, n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;

                if (++n > PARAMS_MAX)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, E2BIG,
                                            "Too many parameters.");
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = read_param(m, key, p, &seen, error);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;

        if (p->userns_fd >= 0 && p->idmap != IDMAP_NAMESPACE)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'userns' is only meaningful with idmap 'namespace'.");
        return 0;
}

/*
 * Who is calling, from the bus daemon's record of the connection (SO_PEERCRED at connect
 * time), never from /proc ("augmented" credentials could be raced).
 */
static int bus_read_caller(sd_bus_message *m, Request *req, UmError *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const uint64_t mask = SD_BUS_CREDS_EUID | SD_BUS_CREDS_PID;
        struct passwd pw, *result = NULL;
        char buf[4096];
        uid_t uid;
        pid_t pid;
        int r;

        r = sd_bus_query_sender_creds(m, mask, &creds);
        if (r >= 0 && (sd_bus_creds_get_augmented_mask(creds) & mask))
                r = -EPERM;
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        if (r >= 0)
                r = sd_bus_creds_get_pid(creds, &pid);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "Could not learn who is calling from the bus: %s.",
                                    strerror(-r));

        req->uid = uid;
        req->pid = pid;
        /* The primary group is only used for uid=/gid= on filesystems without owners. */
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &result) == 0 && result)
                req->gid = result->pw_gid;
        else
                req->gid = (gid_t) uid;
        return 0;
}

/* Validates the source fd and takes a copy of it. */
static int bus_read_source(Request *req, int fd, UmError *error) {
        char path[64], target[4096];
        ssize_t n;
        int r;

        r = source_inspect_fd(fd, &req->source, error);
        if (r < 0)
                return r;
        req->source_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (req->source_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not take the source descriptor: %m.");

        /* For logs and polkit details only; the daemon never opens this path. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", req->source_fd);
        n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        req->source_path = strdup(target);
        return req->source_path ? 0 : -ENOMEM;
}

static int method_open_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Manager *manager = userdata;
        _cleanup_(request_freep) Request *req = NULL;
        const char *fstype, *options;
        UmError error = {};
        int fd, r;

        req = request_new(manager, m);
        if (!req)
                return -ENOMEM;

        r = sd_bus_message_read(m, "hss", &fd, &fstype, &options);
        if (r < 0)
                return r;
        r = bus_read_params(m, &req->params, &error);
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                return r;
        if (r >= 0 && req->params.target)
                r = um_error_set(&error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                 "OpenMount does not attach the mount; 'target' is for Mount "
                                 "and MountFd.");
        if (r >= 0 && req->params.idmap != IDMAP_NONE)
                r = um_error_set(&error, UM_ERROR_KIND_INVALID_ARGUMENT, EOPNOTSUPP,
                                 "This version of usermountd does not support id-mapped mounts "
                                 "yet; use idmap 'none'.");
        if (r >= 0 && !isempty(fstype) && !policy_fstype_allowed(fstype)) {
                char esc[64];

                r = um_error_set(&error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                 "Filesystem type '%s' is not allowed for user mounts.",
                                 um_escape(fstype, esc, sizeof(esc)));
        }
        if (r >= 0)
                r = policy_check_options_syntax(options, &error);
        if (r >= 0)
                r = bus_read_caller(m, req, &error);
        if (r >= 0)
                r = bus_read_source(req, fd, &error);
        if (r < 0)
                return bus_reply_error(m, &error);

        req->fstype = strdup(fstype);
        req->options = strdup(options);
        if (!req->fstype || !req->options)
                return -ENOMEM;
        req->params.read_only = req->params.read_only || req->source.read_only;

        manager_start_request(manager, TAKE_PTR(req));
        return 1;
}

static int method_not_yet(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return sd_bus_reply_method_errorf(m, SD_BUS_ERROR_NOT_SUPPORTED,
                "%s is not implemented in usermountd %s yet; use OpenMount and attach the "
                "returned mount yourself.", sd_bus_message_get_member(m), PACKAGE_VERSION);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *ret_error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

/* true if the running kernel knows fstype (built in or loaded); reads /proc/filesystems. */
static bool kernel_has_filesystem(const char *fstype) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/filesystems", "re");
        char line[128];

        if (!f)
                return true; /* can't tell: let the mount attempt say */
        while (fgets(line, sizeof(line), f)) {
                char *name = strrchr(line, '\t');

                name = name ? name + 1 : line;
                name[strcspn(name, "\n")] = 0;
                if (streq(name, fstype))
                        return true;
        }
        return false;
}

static int property_get_supported_filesystems(sd_bus *bus, const char *path,
                                              const char *interface, const char *property,
                                              sd_bus_message *reply, void *userdata,
                                              sd_bus_error *ret_error) {
        int r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        for (const char *const *t = policy_fstypes(); *t; t++) {
                if (!kernel_has_filesystem(*t))
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

static int append_info_string(sd_bus_message *m, const char *key, const char *value) {
        char buf[1024];

        if (isempty(value))
                return 0;
        /* Device data may hold anything; D-Bus strings must be valid UTF-8. */
        return sd_bus_message_append(m, "{sv}", key, "s", um_escape(value, buf, sizeof(buf)));
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

/* The info dict of DBUS-API.md for a mount built for req. */
static int append_info(sd_bus_message *m, const Request *req, const WorkerReply *result,
                       const char *mount_point) {
        _cleanup_free_ char *options = mount_options_to_string(&req->mount_options);
        int r;

        if (!options)
                return -ENOMEM;
        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = append_info_string(m, "mount-point", mount_point);
        if (r >= 0)
                r = append_info_string(m, "device", result->device);
        if (r >= 0)
                r = append_info_string(m, "backing-file", result->backing_file);
        if (r >= 0)
                r = append_info_string(m, "fstype", req->probe.fstype);
        if (r >= 0)
                r = append_info_string(m, "label", req->probe.label);
        if (r >= 0)
                r = append_info_string(m, "uuid", req->probe.uuid);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "options", "s", options);
        if (r >= 0)
                r = append_attributes(m, req->mount_options.attr_set);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "idmap", "s", "none");
        if (r >= 0 && result->mount_id)
                r = sd_bus_message_append(m, "{sv}", "mount-id", "t", result->mount_id);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int bus_reply_open_mount(Request *req, int mount_fd, const WorkerReply *result) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(req->message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "h", mount_fd);
        if (r < 0)
                return r;
        r = append_info(reply, req, result, NULL);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SupportedFilesystems", "as", property_get_supported_filesystems, 0, 0),
        /* UNPRIVILEGED: any user may call; polkit decides what they may do. */
        SD_BUS_METHOD_WITH_NAMES("Mount", "sssa{sv}",
                                 SD_BUS_PARAM(device) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_not_yet, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("MountFd", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info),
                                 method_not_yet, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("OpenMount", "hssa{sv}",
                                 SD_BUS_PARAM(source) SD_BUS_PARAM(fstype) SD_BUS_PARAM(options)
                                 SD_BUS_PARAM(params),
                                 "ha{sv}", SD_BUS_PARAM(mount) SD_BUS_PARAM(info),
                                 method_open_mount, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Unmount", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(params),
                                 "", "", method_not_yet, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListMounts", "a{sv}", SD_BUS_PARAM(params),
                                 "aa{sv}", SD_BUS_PARAM(mounts),
                                 method_not_yet, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_NAMES("MountAdded", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_SIGNAL_WITH_NAMES("MountRemoved", "sa{sv}", SD_BUS_PARAM(mount_point) SD_BUS_PARAM(info), 0),
        SD_BUS_VTABLE_END,
};
