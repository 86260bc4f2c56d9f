/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount automount's view of udev: which block devices hold a filesystem worth
 * mounting, the ones present now (sd_device_enumerator) and those that come and go
 * (sd_device_monitor, udev's events after its rules ran, so that blkid's ID_FS_* are set).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

/* What automount knows of a block device, from udev's properties. */
typedef struct AutomountDevice {
        const char *devname;  /* /dev/sdb1 */
        dev_t devnum;
        const char *fs_usage; /* ID_FS_USAGE: "filesystem", "other" (swap), "crypto"... */
        const char *fs_type;  /* ID_FS_TYPE */
        char *label;          /* ID_FS_LABEL_ENC decoded (owned), NULL: none */
        const char *uuid;     /* ID_FS_UUID */
        bool usermount_image; /* USERMOUNT_IMAGE: a loop device usermountd made itself */
        bool udisks_ignore;   /* UDISKS_IGNORE: the system asks desktop tools to leave it */
} AutomountDevice;

typedef enum AutomountVerdict {
        AUTOMOUNT_MOUNT,       /* a filesystem to mount */
        AUTOMOUNT_NO_FS,       /* nothing mountable: no filesystem, a partition table, swap,
                                * an encrypted or RAID member */
        AUTOMOUNT_SYSTEM_SKIP, /* usermountd's own loop device, or UDISKS_IGNORE */
} AutomountVerdict;

/* Frees what d owns. */
void automount_device_done(AutomountDevice *d);

/* Whether d is a filesystem automount should try to mount (before the user's settings). */
AutomountVerdict automount_device_verdict(const AutomountDevice *d);

/*
 * Decodes udev's \xNN escapes (ID_FS_LABEL_ENC) into a new string; NULL when out of memory
 * or when the result would hold a NUL byte.
 */
char *automount_decode_udev(const char *s);

/* Whether devnum is mounted in our mount namespace (/proc/self/mountinfo): 1, 0, -errno. */
int automount_device_is_mounted(dev_t devnum);

/*
 * Called for each block device: removed is true for udev's "remove" event; d's strings
 * live until the callback returns.
 */
typedef void (*AutomountDeviceFunc)(const AutomountDevice *d, bool removed, void *userdata);

/* Calls func for every block device udev knows now. Returns 0 or -errno. */
int automount_udev_enumerate(AutomountDeviceFunc func, void *userdata);

typedef struct AutomountWatch {
        AutomountDeviceFunc func;
        void *userdata;
} AutomountWatch;

/*
 * Starts watching udev's block device events on event, calling w->func for each "add",
 * "change" and "remove"; w must outlive the monitor. *ret is the caller's
 * (sd_device_monitor_unref). Returns 0 or -errno.
 */
int automount_udev_watch(sd_event *event, const AutomountWatch *w, sd_device_monitor **ret);
