/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One mount request to usermountd through libusermount (mount-call.h). */
#include "bus-client.h"
#include "macro.h"
#include "mount-call.h"

/* The options object of call (usermount_open_mount(3)). */
static int mount_call_options(const MountCall *call, usermount_options **ret) {
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        int r;

        r = usermount_options_new(&o);
        if (r >= 0)
                r = usermount_options_set_fstype(o, call->fstype);
        if (r >= 0)
                r = usermount_options_set_fs_options(o, call->options);
        if (r >= 0)
                r = usermount_options_set_target(o, call->target);
        if (r >= 0)
                r = usermount_options_set_read_only(o, call->read_only);
        if (r >= 0)
                r = usermount_options_set_exec(o, call->exec);
        if (r >= 0)
                r = usermount_options_set_idmap(o, call->idmap);
        if (r >= 0)
                r = usermount_options_set_userns_fd(o, call->userns_fd);
        if (r >= 0)
                r = usermount_options_set_driver(o, call->driver);
        if (r >= 0)
                r = usermount_options_set_partition(o, call->partition);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int mount_call(usermount_client *c, const MountCall *call, char **ret_mount_point,
               int *ret_mount_fd, usermount_info **ret_info) {
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        int r;

        r = mount_call_options(call, &o);
        if (r < 0)
                return r;
        if (streq(call->method, "OpenMount"))
                return usermount_open_mount(c, call->source_fd, o, ret_mount_fd, ret_info);
        if (streq(call->method, "MountFd"))
                return usermount_mount_fd(c, call->source_fd, o, ret_mount_point, ret_info);
        return usermount_mount(c, call->device, o, ret_mount_point, ret_info);
}
