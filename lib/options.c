/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The options of a mount request: the fstype and options strings of the call and one
 * setter per params key of org.freedesktop.UserMount1(5) (usermount_open_mount(3)). Strings are
 * checked as UTF-8 here, where the caller learns which one is wrong, not when the call is built.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "lib-internal.h"
#include "utf8.h"

_public_ int usermount_options_new(usermount_options **ret) {
        usermount_options *o;

        if (!ret)
                return -EINVAL;
        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->userns_fd = -EBADF;
        *ret = o;
        return 0;
}

_public_ usermount_options *usermount_options_free(usermount_options *o) {
        if (!o)
                return NULL;
        free(o->fstype);
        free(o->fs_options);
        free(o->target);
        free(o->idmap);
        free(o->driver);
        safe_close(o->userns_fd);
        free(o);
        return NULL;
}

/* Replaces *field with a copy of value (NULL or "" clears it). */
static int set_string(usermount_options *o, char **field, const char *value) {
        char *copy = NULL;

        if (!o)
                return -EINVAL;
        if (!isempty(value)) {
                if (!utf8_is_valid(value))
                        return -EINVAL;
                copy = strdup(value);
                if (!copy)
                        return -ENOMEM;
        }
        free(*field);
        *field = copy;
        return 0;
}

_public_ int usermount_options_set_fstype(usermount_options *o, const char *fstype) {
        return set_string(o, o ? &o->fstype : NULL, fstype);
}

_public_ int usermount_options_set_fs_options(usermount_options *o, const char *options) {
        return set_string(o, o ? &o->fs_options : NULL, options);
}

_public_ int usermount_options_set_target(usermount_options *o, const char *path) {
        if (path && !isempty(path) && path[0] != '/')
                return -EINVAL;
        return set_string(o, o ? &o->target : NULL, path);
}

_public_ int usermount_options_set_idmap(usermount_options *o, const char *idmap) {
        return set_string(o, o ? &o->idmap : NULL, idmap);
}

_public_ int usermount_options_set_driver(usermount_options *o, const char *driver) {
        return set_string(o, o ? &o->driver : NULL, driver);
}

_public_ int usermount_options_set_read_only(usermount_options *o, int read_only) {
        if (!o)
                return -EINVAL;
        o->read_only = read_only;
        return 0;
}

_public_ int usermount_options_set_exec(usermount_options *o, int exec) {
        if (!o)
                return -EINVAL;
        o->exec = exec;
        return 0;
}

_public_ int usermount_options_set_partition(usermount_options *o, uint32_t partition) {
        if (!o)
                return -EINVAL;
        o->partition = partition;
        return 0;
}

_public_ int usermount_options_set_userns_fd(usermount_options *o, int fd) {
        int copy = -EBADF;

        if (!o)
                return -EINVAL;
        /* A copy of our own: the caller's fd stays the caller's. */
        if (fd >= 0) {
                copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (copy < 0)
                        return -errno;
        }
        safe_close(o->userns_fd);
        o->userns_fd = copy;
        return 0;
}

int options_append_params(sd_bus_message *m, const usermount_options *o, bool interactive) {
        int r;

        r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r >= 0 && o && o->target)
                r = sd_bus_message_append(m, "{sv}", "target", "s", o->target);
        if (r >= 0 && o && o->read_only)
                r = sd_bus_message_append(m, "{sv}", "read-only", "b", 1);
        if (r >= 0 && o && o->exec)
                r = sd_bus_message_append(m, "{sv}", "exec", "b", 1);
        if (r >= 0 && o && o->idmap)
                r = sd_bus_message_append(m, "{sv}", "idmap", "s", o->idmap);
        if (r >= 0 && o && o->userns_fd >= 0)
                r = sd_bus_message_append(m, "{sv}", "userns", "h", o->userns_fd);
        if (r >= 0 && o && o->partition > 0)
                r = sd_bus_message_append(m, "{sv}", "partition", "u", o->partition);
        if (r >= 0 && o && o->driver)
                r = sd_bus_message_append(m, "{sv}", "driver", "s", o->driver);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "interactive", "b", (int) interactive);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}
