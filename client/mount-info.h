/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "info" dict that usermountd returns for a mount (DBUS-API.md, "info keys"): reading
 * it from a message, and the one-line summary the client prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

typedef struct MountInfo {
        /* Strings point into the message they were read from and live as long as it. */
        const char *mount_point;
        const char *device;
        const char *backing_file;
        const char *fstype;
        const char *label;
        const char *uuid;
        const char *options;
        const char *idmap;
        char **attributes; /* owned, NULL-terminated */
        uint64_t mount_id;
} MountInfo;

/* Frees what info owns and zeroes it; accepts a zeroed MountInfo. */
void mount_info_done(MountInfo *info);

/*
 * Reads an a{sv} info dict from m into *ret (zeroed first). Keys this client does not know,
 * and known keys whose value has another type, are skipped, so that a newer daemon can
 * add keys. Returns 0 or -errno (a malformed message); call mount_info_done() either way.
 */
int mount_info_read(sd_bus_message *m, MountInfo *ret);

/* true if attr (e.g. "ro") is one of info's attributes. */
bool mount_info_has_attribute(const MountInfo *info, const char *attr);

/*
 * Formats "Mounted DEVICE (FSTYPE, label 'L', image FILE, options 'O') at TARGET, read-only,
 * nodev,nosuid,noexec locked" into a new string; source stands in for a missing device.
 * Every string is escaped for the terminal. Returns 0 or -ENOMEM; the caller frees *ret.
 */
int mount_info_format_summary(const MountInfo *info, const char *source, const char *target,
                              char **ret);
