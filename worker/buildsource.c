/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source of a build as both kinds of build see it (buildsource.h): its device node for
 * the record, and its probe checked again right before the mount.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "buildsource.h"
#include "macro.h"

/*
 * The /dev node of a block device, found through sysfs and checked to be that very
 * device; falls back to the caller's fd through /proc, which the kernel resolves to the
 * same device, so a missing or renamed node never changes what is mounted.
 */
void block_device_node(dev_t rdev, int fd, char *buf, size_t n) {
        char path[320], line[256];
        _cleanup_(fclosep) FILE *f = NULL;
        struct stat st;

        snprintf(buf, n, "/proc/self/fd/%d", fd);
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(rdev), minor(rdev));
        f = fopen(path, "re");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "DEVNAME=", 8) != 0)
                        continue;
                char *name = line + 8;

                name[strcspn(name, "\n")] = 0;
                if (strchr(name, '.') || strlen(name) > 32)
                        return;
                char node[48];

                snprintf(node, sizeof(node), "/dev/%.32s", name);
                if (stat(node, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
                        snprintf(buf, n, "%s", node);
                return;
        }
}

/*
 * The checks of the probe, again, right before the mount: the caller could rewrite its
 * image or device while polkit was asked. What polkit was asked about must still be what
 * is there, and the superblock must still name no other device. fd: the image file, bound
 * to its loop device by now, or the block device; self: the device's number.
 */
int job_recheck_probe(const BuildJob *job, int fd, SourceProbe *ret, UmError *error) {
        int r;

        /* Only the prober of the type polkit was asked about: the kernel is asked to mount
         * that type, and reads nothing else (every prober again cost 0.4 ms here). A second
         * signature or a partition table written meanwhile is not looked for again: the
         * mount is of the authorised type, and loop devices are made without partition
         * scanning; the uuid and label checked are that type's. */
        r = source_probe_as_in(fd, &job->partition, job->probe.fstype, ret, error);
        if (r < 0)
                return r;
        if (!streq(ret->fstype, job->probe.fstype) || !streq(ret->uuid, job->probe.uuid) ||
            !streq(ret->label, job->probe.label))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EBUSY,
                                    "the filesystem changed while the request was being "
                                    "authorized; nothing was mounted");
        return 0;
}
