/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front's view of block devices and drives, from udev and sysfs
 * (udisks-model.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>
#include <sys/sysmacros.h>

#include "removable.h"
#include "udisks-model.h"

static const char *startswith(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static void strv_free(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

char *udisks_escape_name(const char *s) {
        size_t n = strlen(s);
        char *out = malloc(n * 9 + 1), *p = out;

        if (!out)
                return NULL;
        for (const char *c = s; *c; c++) {
                if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || *c == '_')
                        *p++ = *c;
                else
                        /* As udisks: the char's value as a signed int, printed unsigned. */
                        p += sprintf(p, "_%02x", (unsigned) (int) *c);
        }
        *p = 0;
        return out;
}

static const char *prop(sd_device *d, const char *key) {
        const char *v = NULL;

        return sd_device_get_property_value(d, key, &v) >= 0 && v ? v : NULL;
}

static const char *attr(sd_device *d, const char *key) {
        const char *v = NULL;

        return sd_device_get_sysattr_value(d, key, &v) >= 0 && v ? v : NULL;
}

static uint64_t attr_u64(sd_device *d, const char *key) {
        const char *v = attr(d, key);

        return v ? strtoull(v, NULL, 0) : 0;
}

/* udev's boolean spelling, as udisks reads UDISKS_* (1, true, yes are true). */
static int prop_bool(sd_device *d, const char *key) {
        const char *v = prop(d, key);

        if (!v)
                return -1;
        return streq(v, "1") || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0;
}

static char *dup_or_empty(const char *s) {
        return strdup(s ?: "");
}

bool udisks_device_wanted(sd_device *d) {
        const char *name = NULL;

        if (sd_device_get_sysname(d, &name) < 0 || !name)
                return false;
        if (startswith(name, "ram"))
                return false;
        if (startswith(name, "loop"))
                return attr(d, "loop/backing_file") != NULL;
        if (startswith(name, "zram"))
                return attr_u64(d, "size") > 0;
        return true;
}

UDisksBlock *udisks_block_free(UDisksBlock *b) {
        if (!b)
                return NULL;
        free(b->name);
        free(b->path);
        free(b->device);
        strv_free(b->symlinks);
        free(b->id);
        free(b->disk);
        free(b->drive_path);
        free(b->id_usage);
        free(b->id_type);
        free(b->id_version);
        free(b->id_label);
        free(b->id_uuid);
        free(b->hint_name);
        free(b->hint_icon_name);
        free(b->hint_symbolic_icon_name);
        free(b->part_type);
        free(b->part_name);
        free(b->part_uuid);
        free(b->part_table);
        free(b->table_type);
        free(b->backing_file);
        free(b);
        return NULL;
}

UDisksDrive *udisks_drive_free(UDisksDrive *d) {
        if (!d)
                return NULL;
        free(d->name);
        free(d->path);
        free(d->disk);
        free(d->vendor);
        free(d->model);
        free(d->revision);
        free(d->serial);
        free(d->wwn);
        free(d->id);
        free(d->connection_bus);
        free(d->seat);
        free(d->sort_key);
        free(d->media);
        free(d->sibling_id);
        free(d);
        return NULL;
}

static char *object_path(const char *prefix, const char *name) {
        _cleanup_free_ char *esc = udisks_escape_name(name);
        char *p = NULL;

        if (!esc || asprintf(&p, "%s/%s", prefix, esc) < 0)
                return NULL;
        return p;
}

static int block_symlinks(sd_device *d, UDisksBlock *b) {
        size_t n = 0;

        for (const char *l = sd_device_get_devlink_first(d); l; l = sd_device_get_devlink_next(d))
                n++;
        b->symlinks = calloc(n + 1, sizeof(char *));
        if (!b->symlinks)
                return -ENOMEM;
        n = 0;
        for (const char *l = sd_device_get_devlink_first(d); l;
             l = sd_device_get_devlink_next(d)) {
                b->symlinks[n] = strdup(l);
                if (!b->symlinks[n++])
                        return -ENOMEM;
                /* Block.Id: the first by-id link, as udisks names it. */
                const char *rest = startswith(l, "/dev/disk/by-id/");
                if (rest && isempty(b->id)) {
                        free(b->id);
                        if (asprintf(&b->id, "by-id-%s", rest) < 0)
                                return (b->id = NULL), -ENOMEM;
                        for (char *c = b->id; *c; c++)
                                if (*c == '/')
                                        *c = '-';
                }
        }
        return 0;
}

/* The hints, as udisks' update_hints(): removable media are not the system's and are
 * mounted automatically, by usermount's own rules (removable.h); udev's UDISKS_* win. */
static int block_hints(sd_device *d, int sysfs_fd, UDisksBlock *b) {
        int v;

        b->hint_partitionable = true;
        b->hint_system = true;
        if (removable_check(sysfs_fd, b->devnum, NULL) > 0) {
                b->hint_system = false;
                b->hint_auto = true;
        }
        /* The loop devices of usermount's own image mounts (59-usermount-loop.rules): its
         * business, not a volume of the desktop's. */
        if (prop_bool(d, "USERMOUNT_IMAGE") > 0)
                b->hint_ignore = true;
        if ((v = prop_bool(d, "UDISKS_SYSTEM")) >= 0)
                b->hint_system = v;
        if ((v = prop_bool(d, "UDISKS_IGNORE")) >= 0)
                b->hint_ignore = v;
        if ((v = prop_bool(d, "UDISKS_AUTO")) >= 0)
                b->hint_auto = v;
        b->hint_name = dup_or_empty(prop(d, "UDISKS_NAME"));
        b->hint_icon_name = dup_or_empty(prop(d, "UDISKS_ICON_NAME"));
        b->hint_symbolic_icon_name = dup_or_empty(prop(d, "UDISKS_SYMBOLIC_ICON_NAME"));
        if (!b->hint_name || !b->hint_icon_name || !b->hint_symbolic_icon_name)
                return -ENOMEM;
        return 0;
}

static int block_partition(sd_device *d, UDisksBlock *b) {
        sd_device *disk = NULL;
        const char *disk_name = NULL, *flags;

        b->is_partition = true;
        b->part_number = (uint32_t) attr_u64(d, "partition");
        b->part_offset = attr_u64(d, "start") * 512;
        b->part_size = b->size;
        flags = prop(d, "ID_PART_ENTRY_FLAGS");
        b->part_flags = flags ? strtoull(flags, NULL, 0) : 0;
        b->part_type = dup_or_empty(prop(d, "ID_PART_ENTRY_TYPE"));
        b->part_name = dup_or_empty(prop(d, "ID_PART_ENTRY_NAME"));
        b->part_uuid = dup_or_empty(prop(d, "ID_PART_ENTRY_UUID"));
        if (!b->part_type || !b->part_name || !b->part_uuid)
                return -ENOMEM;
        if (sd_device_get_parent_with_subsystem_devtype(d, "block", "disk", &disk) < 0 ||
            sd_device_get_sysname(disk, &disk_name) < 0)
                return -ENODEV;
        b->disk = strdup(disk_name);
        b->part_table = object_path(UDISKS_BLOCK_PREFIX, disk_name);
        return b->disk && b->part_table ? 0 : -ENOMEM;
}

int udisks_block_new(sd_device *d, int sysfs_fd, UDisksBlock **ret) {
        _cleanup_(udisks_block_freep) UDisksBlock *b = calloc(1, sizeof(UDisksBlock));
        const char *name = NULL, *node = NULL, *devtype = NULL, *usage;
        int r;

        if (!b)
                return -ENOMEM;
        if (sd_device_get_sysname(d, &name) < 0 || sd_device_get_devname(d, &node) < 0 ||
            sd_device_get_devnum(d, &b->devnum) < 0)
                return -ENODEV;
        (void) sd_device_get_devtype(d, &devtype);
        b->name = strdup(name);
        b->path = object_path(UDISKS_BLOCK_PREFIX, name);
        b->device = strdup(node);
        b->id = strdup("");
        if (!b->name || !b->path || !b->device || !b->id)
                return -ENOMEM;
        r = block_symlinks(d, b);
        if (r < 0)
                return r;
        b->size = attr_u64(d, "size") * 512;
        b->read_only = attr_u64(d, "ro") != 0;
        b->drive_path = strdup("/");
        usage = prop(d, "ID_FS_USAGE");
        b->id_usage = dup_or_empty(usage);
        b->id_type = dup_or_empty(prop(d, "ID_FS_TYPE"));
        b->id_version = dup_or_empty(prop(d, "ID_FS_VERSION"));
        b->id_label = dup_or_empty(prop(d, "ID_FS_LABEL"));
        b->id_uuid = dup_or_empty(prop(d, "ID_FS_UUID"));
        b->table_type = dup_or_empty(prop(d, "ID_PART_TABLE_TYPE"));
        if (!b->drive_path || !b->id_usage || !b->id_type || !b->id_version || !b->id_label ||
            !b->id_uuid || !b->table_type)
                return -ENOMEM;
        b->has_filesystem = streq_ptr(usage, "filesystem");
        r = block_hints(d, sysfs_fd, b);
        if (r < 0)
                return r;
        if (streq_ptr(devtype, "partition")) {
                r = block_partition(d, b);
                if (r < 0)
                        return r;
        } else {
                b->disk = strdup(name);
                if (!b->disk)
                        return -ENOMEM;
                b->is_table = !isempty(b->table_type);
        }
        if (startswith(name, "loop")) {
                const char *backing = attr(d, "loop/backing_file");

                b->is_loop = true;
                b->backing_file = dup_or_empty(backing);
                if (!b->backing_file)
                        return -ENOMEM;
                b->autoclear = attr_u64(d, "loop/autoclear") != 0;
                b->hint_partitionable = false;
        }
        *ret = TAKE_PTR(b);
        return 0;
}

/* udisks' strip_and_replace_with_uscore(): trimmed, ' ' and '-' as '_'. */
static char *name_part(const char *s) {
        _cleanup_free_ char *t = NULL;
        size_t n;

        if (isempty(s))
                return NULL;
        while (*s == ' ')
                s++;
        t = strdup(s);
        if (!t)
                return NULL;
        n = strlen(t);
        while (n > 0 && t[n - 1] == ' ')
                t[--n] = 0;
        for (char *c = t; *c; c++)
                if (*c == ' ' || *c == '-')
                        *c = '_';
        return t[0] ? udisks_escape_name(t) : NULL;
}

static int drive_name(UDisksDrive *d) {
        const char *parts[] = { d->vendor, d->model, d->serial };
        char buf[1024] = "";
        size_t o = 0;

        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                _cleanup_free_ char *p = name_part(parts[i]);

                if (p && o < sizeof(buf))
                        o += (size_t) snprintf(buf + o, sizeof(buf) - o, "%s%s", o ? "_" : "",
                                               p);
        }
        d->name = strdup(o > 0 && o < sizeof(buf) ? buf : "drive");
        if (!d->name || asprintf(&d->path, "%s/%s", UDISKS_DRIVE_PREFIX, d->name) < 0)
                return (d->path = NULL), -ENOMEM;
        /* Drive.Id: VENDOR-MODEL-SERIAL, spaces and '/' as '-'. */
        if (asprintf(&d->id, "%s%s%s%s%s", d->vendor, *d->vendor ? "-" : "", d->model,
                     *d->serial ? "-" : "", d->serial) < 0)
                return (d->id = NULL), -ENOMEM;
        for (char *c = d->id; *c; c++)
                if (*c == ' ' || *c == '/')
                        *c = '-';
        return 0;
}

int udisks_drive_new(sd_device *dev, int sysfs_fd, uint64_t detected_usec, UDisksDrive **ret) {
        _cleanup_(udisks_drive_freep) UDisksDrive *d = NULL;
        const char *name = NULL, *devtype = NULL, *bus, *v;
        dev_t devnum;
        int r;

        if (sd_device_get_sysname(dev, &name) < 0 || sd_device_get_devtype(dev, &devtype) < 0 ||
            !streq(devtype, "disk") || sd_device_get_devnum(dev, &devnum) < 0)
                return -ENOENT;
        /* Disks stacked on others or on files never have a drive; a zram disk has one only
         * when udev gives it a product identity (the test suite's stand-in sticks). */
        if (startswith(name, "loop") || startswith(name, "ram") || startswith(name, "dm-") ||
            startswith(name, "md"))
                return -ENOENT;
        if (!prop(dev, "ID_SERIAL") && !prop(dev, "ID_MODEL") && !prop(dev, "ID_PATH"))
                return -ENOENT;
        d = calloc(1, sizeof(UDisksDrive));
        if (!d)
                return -ENOMEM;
        bus = prop(dev, "ID_BUS");
        d->disk = strdup(name);
        d->vendor = dup_or_empty(prop(dev, "ID_VENDOR"));
        d->model = dup_or_empty(prop(dev, "ID_MODEL"));
        d->revision = dup_or_empty(prop(dev, "ID_REVISION"));
        d->serial = dup_or_empty(prop(dev, "ID_SERIAL_SHORT") ?: prop(dev, "ID_SERIAL"));
        d->wwn = dup_or_empty(prop(dev, "ID_WWN_WITH_EXTENSION") ?: prop(dev, "ID_WWN"));
        d->connection_bus = dup_or_empty(streq_ptr(bus, "usb") || streq_ptr(bus, "ieee1394") ||
                                                         streq_ptr(bus, "sdio") ? bus : NULL);
        d->seat = strdup(prop(dev, "ID_SEAT") ?: "seat0");
        d->media = strdup("");
        d->sibling_id = strdup("");
        if (!d->disk || !d->vendor || !d->model || !d->revision || !d->serial || !d->wwn ||
            !d->connection_bus || !d->seat || !d->media || !d->sibling_id)
                return -ENOMEM;
        r = drive_name(d);
        if (r < 0)
                return r;
        d->size = attr_u64(dev, "size") * 512;
        d->media_removable = attr_u64(dev, "removable") != 0;
        d->removable = d->media_removable || !isempty(d->connection_bus) ||
                       removable_check(sysfs_fd, devnum, NULL) > 0;
        d->media_available = !d->media_removable || d->size > 0;
        d->ejectable = d->media_removable;
        d->can_power_off = streq(d->connection_bus, "usb");
        if ((v = prop(dev, "UDISKS_CAN_POWER_OFF")))
                d->can_power_off = streq(v, "1") || strcasecmp(v, "true") == 0;
        d->time_detected = detected_usec;
        d->time_media_detected = d->media_available ? detected_usec : 0;
        if (asprintf(&d->sort_key, "01hotplug/%" PRIu64, detected_usec) < 0)
                return (d->sort_key = NULL), -ENOMEM;
        *ret = TAKE_PTR(d);
        return 0;
}
