/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zram disks for tests that need a real block device that is not a loop device (Mount
 * by path). Each disk the harness makes is listed (HARNESS_LIST_ZRAM), so that the
 * supervisor can remove it even when the test process dies half-way: it lazily unmounts
 * whatever still uses the disk in the private namespace, turns swap off, and hot-removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness-private.h"
#include "harness.h"
#include "macro.h"

static void list_update(int id, bool add) {
        g_autofree char *contents = harness_list_read(HARNESS_LIST_ZRAM);
        g_autoptr(GString) out = g_string_new(NULL);
        g_auto(GStrv) lines = NULL;

        lines = g_strsplit(contents ?: "", "\n", -1);
        for (size_t i = 0; lines[i]; i++)
                if (*lines[i] && atoi(lines[i]) != id)
                        g_string_append_printf(out, "%s\n", lines[i]);
        if (add)
                g_string_append_printf(out, "%d\n", id);
        (void) harness_list_write(HARNESS_LIST_ZRAM, out->str);
}

int harness_zram_new(const char *size, char **ret_node) {
        g_autofree char *id = NULL, *disksize = NULL;
        int n, r;

        if (!g_file_get_contents("/sys/class/zram-control/hot_add", &id, NULL, NULL))
                return -ENODEV;
        n = atoi(id);
        list_update(n, true);
        disksize = g_strdup_printf("/sys/block/zram%d/disksize", n);
        r = harness_write_attribute(disksize, size);
        if (r < 0) {
                g_autofree char *node = g_strdup_printf("/dev/zram%d", n);
                harness_zram_free(node);
                return r;
        }
        *ret_node = g_strdup_printf("/dev/zram%d", n);
        return 0;
}

/* Lazily unmounts every mount of devnum in our namespace (deepest first). */
static void umount_device(dev_t devnum) {
        g_autofree char *info = NULL;
        g_auto(GStrv) lines = NULL;
        g_autofree char *needle = g_strdup_printf(" %u:%u ", major(devnum), minor(devnum));

        if (!g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL))
                return;
        lines = g_strsplit(info, "\n", -1);
        for (size_t i = g_strv_length(lines); i > 0; i--) {
                g_auto(GStrv) f = NULL;

                if (!strstr(lines[i - 1], needle))
                        continue;
                f = g_strsplit(lines[i - 1], " ", 6);
                if (g_strv_length(f) >= 5)
                        (void) umount2(f[4], MNT_DETACH);
        }
}

int harness_zram_new_fs(const char *size, const char *mkfs, char **ret_node) {
        g_autofree char *node = NULL, *cmd = NULL;
        int r;

        r = harness_zram_new(size, &node);
        if (r < 0)
                return r;
        cmd = g_strdup_printf("%s %s >&2", mkfs, node);
        r = system(cmd);
        if (r != 0) {
                harness_log("'%s' failed (status %d)", cmd, r);
                (void) harness_zram_free(node);
                return -EIO;
        }
        r = harness_udev_trigger(node, "change");
        if (r >= 0)
                r = harness_udev_settle();
        if (r < 0) {
                (void) harness_zram_free(node);
                return r;
        }
        *ret_node = TAKE_PTR(node);
        return 0;
}

int harness_zram_free(const char *node) {
        g_autofree char *id = NULL;
        struct stat st;
        int n, r = -EBUSY;

        if (sscanf(node, "/dev/zram%d", &n) != 1)
                return -EINVAL;
        id = g_strdup_printf("%d", n);
        if (stat(node, &st) == 0 && S_ISBLK(st.st_mode)) {
                umount_device(st.st_rdev);
                (void) swapoff(node);
        }
        /* A lazily detached superblock lets go of the disk a moment later: retry, bounded. */
        for (int i = 0; i < 100 && r == -EBUSY; i++) {
                r = harness_write_attribute("/sys/class/zram-control/hot_remove", id);
                if (r == -EBUSY)
                        usleep(50 * 1000);
        }
        if (r == 0 || r == -ENODEV || r == -EINVAL)
                list_update(n, false);
        return r == -ENODEV || r == -EINVAL ? 0 : r;
}

int harness_release_leftover_zrams(void) {
        g_autofree char *contents = harness_list_read(HARNESS_LIST_ZRAM);
        g_auto(GStrv) lines = NULL;
        int n = 0;

        if (!contents)
                return 0;
        lines = g_strsplit(contents, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_autofree char *node = NULL;

                if (!*lines[i])
                        continue;
                node = g_strdup_printf("/dev/zram%d", atoi(lines[i]));
                if (harness_zram_free(node) == 0)
                        n++;
        }
        return n;
}
