/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The details polkit rules see for a call (authdetails.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <systemd/sd-device.h>

#include "authdetails.h"
#include "macro.h"
#include "mountname.h"

/*
 * Facts about the source that no path and no mount namespace can change, for rules that
 * must not be fooled: "device" is the path the source's fd has in the caller's mount
 * namespace, which a caller with a namespace of its own lays out at will. For an image,
 * owner and inode come from statx() with AT_STATX_DONT_SYNC: the attributes the kernel
 * has, so that the main loop never waits on a FUSE or network filesystem's server.
 */
static void auth_details_facts(AuthDetails *d, dev_t devnum, int image_fd) {
        struct statx stx = {};
        size_t n = 0;

        if (devnum != 0) {
                _cleanup_(sd_device_unrefp) sd_device *dev = NULL;
                const char *seat = NULL;

                snprintf(d->device_number, sizeof(d->device_number), "%u:%u", major(devnum),
                         minor(devnum));
                d->facts[n++] = "device-number";
                d->facts[n++] = d->device_number;
                /* The seat udev puts the device on (ID_SEAT; logind's rule: none is
                 * seat0), for rules on multi-seat machines; none when udev does not know
                 * the device. */
                if (sd_device_new_from_devnum(&dev, 'b', devnum) >= 0) {
                        if (sd_device_get_property_value(dev, "ID_SEAT", &seat) < 0 ||
                            isempty(seat))
                                seat = "seat0";
                        snprintf(d->device_seat, sizeof(d->device_seat), "%s", seat);
                        d->facts[n++] = "device-seat";
                        d->facts[n++] = d->device_seat;
                }
        }
        if (image_fd >= 0 &&
            statx(image_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_UID | STATX_INO,
                  &stx) >= 0 &&
            (stx.stx_mask & (STATX_UID | STATX_INO)) == (STATX_UID | STATX_INO)) {
                snprintf(d->image_owner_uid, sizeof(d->image_owner_uid), "%u", stx.stx_uid);
                snprintf(d->image_inode, sizeof(d->image_inode), "%u:%u:%llu", stx.stx_dev_major,
                         stx.stx_dev_minor, (unsigned long long) stx.stx_ino);
                d->facts[n++] = "image-owner-uid";
                d->facts[n++] = d->image_owner_uid;
                d->facts[n++] = "image-inode";
                d->facts[n++] = d->image_inode;
        }
        d->facts[n] = NULL;
}

void auth_details_of_mount(const MountRecord *rec, AuthDetails *d) {
        snprintf(d->device, sizeof(d->device), "%s", strempty(rec->device));
        d->fstype = strempty(rec->fstype);
        d->label = strempty(rec->label);
        d->uuid = strempty(rec->uuid);
        d->idmap = rec->idmap ?: "none";
        d->driver = rec->driver ?: "kernel";
        d->options = strempty(rec->options);
        d->read_only = rec->attr_set & MOUNT_ATTR_RDONLY;
        d->exec = !(rec->attr_set & MOUNT_ATTR_NOEXEC);
        snprintf(d->target, sizeof(d->target), "%s", strempty(rec->mount_point));
        if (rec->partition > 0)
                snprintf(d->partition, sizeof(d->partition), "%u", rec->partition);
        auth_details_facts(d, rec->devnum, -EBADF);
}

void auth_details_of_call(const MountCall *call, const AuthFacts *f, AuthDetails *d) {
        auth_details_facts(d, f->devnum, f->image_fd);
        snprintf(d->device, sizeof(d->device), "%s", strempty(f->device));
        d->fstype = f->probe->fstype;
        d->label = f->probe->label;
        d->uuid = f->probe->uuid;
        if (f->partition > 0)
                snprintf(d->partition, sizeof(d->partition), "%u", f->partition);
        d->idmap = idmap_mode_to_string(call->params.idmap);
        d->driver = driver_kind_name(f->driver);
        d->options = strempty(call->options);
        d->read_only = f->read_only;
        d->exec = call->params.exec;
        if (call->params.target)
                snprintf(d->target, sizeof(d->target), "%s", call->params.target);
        else if (call->method == METHOD_OPEN_MOUNT)
                d->target[0] = 0; /* nothing is attached */
        else {
                const AttachRequest a = {
                        .uid = call->caller.uid,
                        .media_root = f->media_root,
                        .user_name = call->caller.user_name,
                        .label = f->probe->label,
                        .uuid = f->probe->uuid,
                };

                mountname_default(&a, d->target, sizeof(d->target));
        }
}

void auth_details_list(const AuthDetails *d, const char *ret[AUTH_DETAILS_LIST_MAX]) {
        const char *const list[] = {
                "device", d->device,
                "fstype", d->fstype,
                "label", d->label,
                "uuid", d->uuid,
                "partition", d->partition,
                "read-only", d->read_only ? "true" : "false",
                "exec", d->exec ? "true" : "false",
                "idmap", d->idmap,
                "driver", d->driver,
                "target", d->target,
                "options", d->options,
                d->facts[0], d->facts[1], d->facts[2], d->facts[3], d->facts[4], d->facts[5],
                d->facts[6], d->facts[7],
                NULL,
        };

        _Static_assert(ELEMENTSOF(list) == AUTH_DETAILS_LIST_MAX, "AUTH_DETAILS_LIST_MAX");
        memcpy(ret, list, sizeof(list));
}
