/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a block device is removable media (see removable.h for the rules): the device's
 * sysfs directory is opened through dev/block/MAJOR:MINOR and its parents are reached with
 * "..", so the decision rests on attributes the kernel wrote, never on what a path says.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "macro.h"
#include "fs-util.h"
#include "removable.h"

/* Deeper than any real device tree (a USB disk behind hubs is about 20 levels). */
#define REMOVABLE_MAX_DEPTH 64

static const struct {
        bool removable;
        const char *phrase;
} why_table[_REMOVABLE_WHY_MAX] = {
        [REMOVABLE_WHY_SD_CARD] = { true, "an SD card" },
        [REMOVABLE_WHY_MEDIA] = { true, "removable media" },
        [REMOVABLE_WHY_PARENT] = { true, "on a port the kernel marks removable" },
        [REMOVABLE_WHY_MMC] = { false, "an eMMC or MMC card" },
        [REMOVABLE_WHY_FIXED] = { false, "a fixed disk" },
};

/* The MMC bus's card types (the card's "type" attribute) that are cards in a slot. */
static const char *const mmc_card_types_in_slot[] = { "SD", "SDIO", "SDcombo" };

/* What the walk of a disk's parent devices found. */
typedef struct Parents {
        bool on_mmc;           /* a parent is on the MMC bus (the card) */
        char mmc_type[16];     /* the nearest such card's "type", "" if unreadable */
        bool marked_removable; /* a parent's "removable" attribute says "removable" */
} Parents;

const char *removable_why_to_string(RemovableWhy why) {
        if ((unsigned) why >= ELEMENTSOF(why_table))
                return "unknown";
        return why_table[why].phrase;
}

/* The first line of the attribute name of the device directory dir_fd, in buf. */
static int read_attribute(int dir_fd, const char *name, char *buf, size_t n) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t l;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        l = read(fd, buf, n - 1);
        if (l < 0)
                return -errno;
        buf[l] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return 0;
}

static bool attribute_is(int dir_fd, const char *name, const char *value) {
        char buf[32];

        return read_attribute(dir_fd, name, buf, sizeof(buf)) >= 0 && streq(buf, value);
}

/* Whether the "subsystem" link of dir_fd ends in /name ("../../bus/mmc" for "mmc"). */
static bool subsystem_is(int dir_fd, const char *name) {
        char link[PATH_MAX];
        const char *base;
        ssize_t l;

        l = readlinkat(dir_fd, "subsystem", link, sizeof(link) - 1);
        if (l < 0)
                return false;
        link[l] = 0;
        base = strrchr(link, '/');
        return streq(base ? base + 1 : link, name);
}

/* The directory of the whole disk of devnum: a partition's directory is inside its disk's. */
static int open_disk(int sysfs_fd, dev_t devnum, int *ret_fd) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], value[16];

        snprintf(path, sizeof(path), "dev/block/%u:%u", major(devnum), minor(devnum));
        fd = openat(sysfs_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (read_attribute(fd, "partition", value, sizeof(value)) >= 0) {
                int disk_fd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

                if (disk_fd < 0)
                        return -errno;
                safe_close(fd);
                fd = disk_fd;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Records what the parent directory dir_fd says about removability, if it is a device. */
static void parents_note(Parents *p, int dir_fd) {
        if (!p->on_mmc && subsystem_is(dir_fd, "mmc")) {
                p->on_mmc = true;
                if (read_attribute(dir_fd, "type", p->mmc_type, sizeof(p->mmc_type)) < 0)
                        p->mmc_type[0] = 0;
        }
        if (attribute_is(dir_fd, "removable", "removable"))
                p->marked_removable = true;
}

/*
 * Walks from the disk's parent up to sysfs's "devices" directory (or the sysfs root, for
 * a tree without one), noting each directory on the way. Directories that are not devices
 * ("block", "host0" glue, "virtual") have none of the attributes read and add nothing.
 */
static int parents_walk(int sysfs_fd, int disk_fd, Parents *ret) {
        _cleanup_close_ int fd = -EBADF;
        struct stat root, devices = {}, st;
        Parents p = {};

        if (fstat(sysfs_fd, &root) < 0)
                return -errno;
        if (fstatat(sysfs_fd, "devices", &devices, 0) < 0 && errno != ENOENT)
                return -errno;
        fd = openat(disk_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (unsigned depth = 0;; depth++) {
                int parent_fd;

                if (depth >= REMOVABLE_MAX_DEPTH)
                        return -ELOOP;
                if (fstat(fd, &st) < 0)
                        return -errno;
                if (stat_same_inode(&st, &root) || stat_same_inode(&st, &devices))
                        break;
                parents_note(&p, fd);
                parent_fd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (parent_fd < 0)
                        return -errno;
                safe_close(fd);
                fd = parent_fd;
        }
        *ret = p;
        return 0;
}

static bool mmc_type_in_slot(const char *type) {
        for (size_t i = 0; i < ELEMENTSOF(mmc_card_types_in_slot); i++)
                if (streq(type, mmc_card_types_in_slot[i]))
                        return true;
        return false;
}

int removable_check(int sysfs_fd, dev_t devnum, RemovableWhy *ret_why) {
        _cleanup_close_ int disk_fd = -EBADF;
        RemovableWhy why;
        Parents p;
        int r;

        r = open_disk(sysfs_fd, devnum, &disk_fd);
        if (r < 0)
                return r;
        r = parents_walk(sysfs_fd, disk_fd, &p);
        if (r < 0)
                return r;

        if (p.on_mmc)
                why = mmc_type_in_slot(p.mmc_type) ? REMOVABLE_WHY_SD_CARD : REMOVABLE_WHY_MMC;
        else if (attribute_is(disk_fd, "removable", "1"))
                why = REMOVABLE_WHY_MEDIA;
        else if (p.marked_removable)
                why = REMOVABLE_WHY_PARENT;
        else
                why = REMOVABLE_WHY_FIXED;

        if (ret_why)
                *ret_why = why;
        return why_table[why].removable;
}
