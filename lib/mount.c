/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The methods of org.freedesktop.UserMount1.Manager: OpenMount, MountFd, Mount
 * (usermount_open_mount(3)), Unmount (usermount_unmount(3)) and ListMounts
 * (usermount_list(3)).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "lib-internal.h"
#include "utf8.h"

typedef struct MountCall {
        const char *device; /* Mount: the device path; else NULL and source_fd is sent */
        int source_fd;      /* stays open: a second attempt sends it again */
        const usermount_options *options;
} MountCall;

/* A ClientBuildFunc: (s device | h source, s fstype, s options, a{sv} params). */
static int build_mount(sd_bus_message *m, bool interactive, const void *userdata) {
        const MountCall *call = userdata;
        const usermount_options *o = call->options;
        int r;

        if (call->device)
                r = sd_bus_message_append(m, "s", call->device);
        else
                r = sd_bus_message_append(m, "h", call->source_fd);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", o ? strempty(o->fstype) : "",
                                          o ? strempty(o->fs_options) : "");
        if (r >= 0)
                r = options_append_params(m, o, interactive);
        return r;
}

/* Reads (s mount_point, a{sv} info), the reply of Mount and MountFd. */
static int read_mount_reply(sd_bus_message *reply, char **ret_mount_point,
                            usermount_info **ret_info) {
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_free_ char *copy = NULL;
        const char *mount_point;
        int r;

        r = sd_bus_message_read(reply, "s", &mount_point);
        if (r < 0)
                return r;
        r = info_read(reply, &info);
        if (r < 0)
                return r;
        if (ret_mount_point) {
                copy = strdup(mount_point);
                if (!copy)
                        return -ENOMEM;
                *ret_mount_point = TAKE_PTR(copy);
        }
        if (ret_info)
                *ret_info = TAKE_PTR(info);
        return 0;
}

_public_ int usermount_open_mount(usermount_client *c, int source_fd,
                                  const usermount_options *o, int *ret_mount_fd,
                                  usermount_info **ret_info) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_close_ int mount_fd = -EBADF;
        int fd, r;

        /* An argument refused here leaves no error of an earlier call behind. */
        if (c)
                client_reset_error(c);
        if (!c || source_fd < 0 || !ret_mount_fd)
                return -EINVAL;
        r = client_call(c, "OpenMount", build_mount,
                        &(MountCall) { .source_fd = source_fd, .options = o }, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return r;
        /* The message owns fd and closes it with the message: a copy of our own. */
        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (mount_fd < 0)
                return -errno;
        r = info_read(reply, &info);
        if (r < 0)
                return r;

        *ret_mount_fd = TAKE_FD(mount_fd);
        if (ret_info)
                *ret_info = TAKE_PTR(info);
        return 0;
}

_public_ int usermount_mount_fd(usermount_client *c, int source_fd, const usermount_options *o,
                                char **ret_mount_point, usermount_info **ret_info) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        /* An argument refused here leaves no error of an earlier call behind. */
        if (c)
                client_reset_error(c);
        if (!c || source_fd < 0)
                return -EINVAL;
        r = client_call(c, "MountFd", build_mount,
                        &(MountCall) { .source_fd = source_fd, .options = o }, &reply);
        if (r < 0)
                return r;
        return read_mount_reply(reply, ret_mount_point, ret_info);
}

_public_ int usermount_mount(usermount_client *c, const char *device, const usermount_options *o,
                             char **ret_mount_point, usermount_info **ret_info) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        /* An argument refused here leaves no error of an earlier call behind. */
        if (c)
                client_reset_error(c);
        if (!c || isempty(device) || !utf8_is_valid(device))
                return -EINVAL;
        r = client_call(c, "Mount", build_mount,
                        &(MountCall) { .device = device, .source_fd = -EBADF, .options = o },
                        &reply);
        if (r < 0)
                return r;
        return read_mount_reply(reply, ret_mount_point, ret_info);
}

typedef struct UnmountCall {
        const char *mount_point;
        unsigned flags;
} UnmountCall;

/* A ClientBuildFunc: (s mount_point, a{sv} params), "force" and "interactive" always. */
static int build_unmount(sd_bus_message *m, bool interactive, const void *userdata) {
        const UnmountCall *call = userdata;

        return sd_bus_message_append(m, "sa{sv}", call->mount_point, 2,
                                     "force", "b", (int) !!(call->flags & USERMOUNT_UNMOUNT_FORCE),
                                     "interactive", "b", (int) interactive);
}

_public_ int usermount_unmount(usermount_client *c, const char *mount_point, unsigned flags) {
        int r;

        /* An argument refused here leaves no error of an earlier call behind. */
        if (c)
                client_reset_error(c);
        if (!c || isempty(mount_point) || !utf8_is_valid(mount_point) ||
            (flags & ~USERMOUNT_UNMOUNT_FORCE))
                return -EINVAL;
        r = client_call(c, "Unmount", build_unmount,
                        &(UnmountCall) { .mount_point = mount_point, .flags = flags }, NULL);
        return r < 0 ? r : 0;
}

/* A ClientBuildFunc: ListMounts takes no params yet, and never authenticates. */
static int build_list(sd_bus_message *m, bool interactive, const void *userdata) {
        return sd_bus_message_append(m, "a{sv}", 0);
}

_public_ int usermount_list(usermount_client *c, usermount_info ***ret_infos, size_t *ret_n) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        /* An argument refused here leaves no error of an earlier call behind. */
        if (c)
                client_reset_error(c);
        if (!c || !ret_infos || !ret_n)
                return -EINVAL;
        r = client_call(c, "ListMounts", build_list, NULL, &reply);
        if (r < 0)
                return r;

        return info_read_array(reply, ret_infos, ret_n);
}
