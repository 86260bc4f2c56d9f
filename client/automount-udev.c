/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* usermount automount's view of udev (automount-udev.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "automount-udev.h"
#include "macro.h"

void automount_device_done(AutomountDevice *d) {
        free(d->label);
        *d = (AutomountDevice) {};
}

AutomountVerdict automount_device_verdict(const AutomountDevice *d) {
        if (d->usermount_image || d->udisks_ignore)
                return AUTOMOUNT_SYSTEM_SKIP;
        /* blkid says "other" for swap, "crypto" for LUKS, "raid" for md and LVM members. */
        if (!streq_ptr(d->fs_usage, "filesystem") || isempty(d->fs_type) || !d->devname)
                return AUTOMOUNT_NO_FS;
        if (streq(d->fs_type, "swap") || streq(d->fs_type, "crypto_LUKS"))
                return AUTOMOUNT_NO_FS;
        return AUTOMOUNT_MOUNT;
}

static int hex_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

char *automount_decode_udev(const char *s) {
        char *out = malloc(strlen(s) + 1), *o = out;

        if (!out)
                return NULL;
        while (*s) {
                if (s[0] == '\\' && s[1] == 'x' && hex_value(s[2]) >= 0 && hex_value(s[3]) >= 0) {
                        *o = (char) (hex_value(s[2]) << 4 | hex_value(s[3]));
                        if (*o == 0)
                                return mfree(out);
                        o++;
                        s += 4;
                } else
                        *o++ = *s++;
        }
        *o = 0;
        return out;
}

int automount_device_is_mounted(dev_t devnum) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        unsigned maj, min;

        if (!f)
                return -errno;
        /* "36 35 98:0 /mnt1 /mnt2 ...": the third field is the device's major:minor. */
        while (getline(&line, &size, f) >= 0)
                if (sscanf(line, "%*u %*u %u:%u", &maj, &min) == 2 &&
                    makedev(maj, min) == devnum)
                        return 1;
        return 0;
}

static bool property_is_true(sd_device *device, const char *key) {
        const char *v = NULL;

        return sd_device_get_property_value(device, key, &v) >= 0 && streq_ptr(v, "1");
}

/* Fills d from device's properties; strings point into device. */
static int device_read(sd_device *device, AutomountDevice *d) {
        const char *label = NULL;

        *d = (AutomountDevice) {};
        (void) sd_device_get_devname(device, &d->devname);
        (void) sd_device_get_devnum(device, &d->devnum);
        (void) sd_device_get_property_value(device, "ID_FS_USAGE", &d->fs_usage);
        (void) sd_device_get_property_value(device, "ID_FS_TYPE", &d->fs_type);
        (void) sd_device_get_property_value(device, "ID_FS_UUID", &d->uuid);
        d->usermount_image = property_is_true(device, "USERMOUNT_IMAGE");
        d->udisks_ignore = property_is_true(device, "UDISKS_IGNORE");
        /* ID_FS_LABEL has spaces and odd characters replaced; the _ENC form is exact. */
        if (sd_device_get_property_value(device, "ID_FS_LABEL_ENC", &label) >= 0 &&
            !isempty(label)) {
                d->label = automount_decode_udev(label);
                if (!d->label)
                        return -ENOMEM;
        }
        return 0;
}

static void device_dispatch(sd_device *device, bool removed, AutomountDeviceFunc func,
                            void *userdata) {
        AutomountDevice d;

        if (device_read(device, &d) >= 0)
                func(&d, removed, userdata);
        automount_device_done(&d);
}

int automount_udev_enumerate(AutomountDeviceFunc func, void *userdata) {
        _cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
        int r;

        r = sd_device_enumerator_new(&e);
        if (r < 0)
                return r;
        r = sd_device_enumerator_add_match_subsystem(e, "block", true);
        if (r < 0)
                return r;
        for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
             d = sd_device_enumerator_get_device_next(e))
                /* Only what udev has handled: its database has blkid's results. */
                if (sd_device_get_is_initialized(d) > 0)
                        device_dispatch(d, false, func, userdata);
        return 0;
}

static int on_uevent(sd_device_monitor *m, sd_device *device, void *userdata) {
        const AutomountWatch *w = userdata;
        sd_device_action_t action;

        if (sd_device_get_action(device, &action) < 0)
                return 0;
        if (action == SD_DEVICE_ADD || action == SD_DEVICE_CHANGE)
                device_dispatch(device, false, w->func, w->userdata);
        else if (action == SD_DEVICE_REMOVE)
                device_dispatch(device, true, w->func, w->userdata);
        return 0;
}

int automount_udev_watch(sd_event *event, const AutomountWatch *w, sd_device_monitor **ret) {
        _cleanup_(sd_device_monitor_unrefp) sd_device_monitor *m = NULL;
        int r;

        r = sd_device_monitor_new(&m);
        if (r < 0)
                return r;
        r = sd_device_monitor_filter_add_match_subsystem_devtype(m, "block", NULL);
        if (r < 0)
                return r;
        r = sd_device_monitor_attach_event(m, event);
        if (r < 0)
                return r;
        r = sd_device_monitor_start(m, on_uevent, (void *) w);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}
