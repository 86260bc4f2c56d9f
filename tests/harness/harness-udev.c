/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A real systemd-udevd for the harness's private world (see harness.h, "udev"): the
 * distribution's udevd and its persistent-storage rules, seeing the kernel's real uevents,
 * with everything it writes kept private:
 *   - /run/udev (its database and control socket) is on the harness's private /run;
 *   - what it makes in /dev (/dev/disk/by-*, /dev/block and /dev/char links) goes to
 *     tmpfs mounts over those directories in the private mount namespace. Where the host
 *     has no such directory (no udevd runs there), an empty one is made to mount on, and
 *     removed again at teardown (listed, HARNESS_LIST_DEV_DIRS, for the supervisor and
 *     the janitor);
 *   - only Debian's 60-persistent-storage.rules, usermount's own 59-usermount-loop.rules
 *     (as built) and the harness's UDisks2 hints for zram disks are loaded (bind mounts over the rules directories): the rules that set owners and modes of device nodes would change the
 *     host's /dev. zram disks are added to the kernel names it serves, as the stand-in for
 *     the USB disks this machine does not have;
 *   - it runs in the harness's own network namespace (harness.c), so the events it sends
 *     reach the daemon under test and nobody on the host; the kernel's uevents reach every
 *     network namespace of the initial user namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness-private.h"
#include "harness.h"
#include "macro.h"

static const char *const dev_dirs[] = { "/dev/disk", "/dev/block", "/dev/char" };

/* The rules directories udevd reads; the last is the distribution's. */
static const char *const rules_dirs[] = { "/etc/udev/rules.d", "/usr/local/lib/udev/rules.d",
                                          "/usr/lib/udev/rules.d" };

#define PERSISTENT_STORAGE_RULES "60-persistent-storage.rules"
/* The end of the list of kernel names the rules serve, and the same with zram added. */
#define KERNEL_NAMES_END "|zd*\", GOTO=\"persistent_storage_end\""
#define KERNEL_NAMES_END_ZRAM "|zd*|zram*\", GOTO=\"persistent_storage_end\""

static int private_dev_dirs(void) {
        for (size_t i = 0; i < ELEMENTSOF(dev_dirs); i++) {
                if (mkdir(dev_dirs[i], 0755) == 0) {
                        int r = harness_list_append(HARNESS_LIST_DEV_DIRS, dev_dirs[i]);

                        if (r < 0)
                                return r;
                } else if (errno != EEXIST)
                        return -errno;
                if (mount("tmpfs", dev_dirs[i], "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0)
                        return -errno;
        }
        return 0;
}

/* usermount's own rule, as installed: no persistent links for the daemon's loop devices. */
static int write_loop_rules(const char *dir) {
        g_autofree char *to = g_build_filename(dir, "59-usermount-loop.rules", NULL);
        g_autofree char *rules = NULL;

        if (!g_file_get_contents(HARNESS_LOOP_RULES, &rules, NULL, NULL)) {
                harness_log("cannot read %s: is the tree built?", HARNESS_LOOP_RULES);
                return -ENOENT;
        }
        if (!g_file_set_contents(to, rules, -1, NULL))
                return -EIO;
        return 0;
}

/* zram disks stand in for USB sticks: the product identity udev's usb_id gives a stick
 * (a drive) and the hints udisks2's own rules and its removable checks would give it (not
 * the system's, mounted automatically), read by usermount's UDisks2 front
 * (docs/udisks2.md) and, through it, by udisksctl, gvfs and udiskie. Only udev's view:
 * usermount's own removable check (removable.h) still finds a fixed disk. */
static int write_udisks_rules(const char *dir) {
        g_autofree char *to = g_build_filename(dir, "61-usermount-harness-udisks2.rules", NULL);
        static const char rules[] =
                "# usermount test harness: zram disks look like removable sticks to UDisks2 "
                "clients.\n"
                "SUBSYSTEM==\"block\", KERNEL==\"zram*\", ENV{UDISKS_SYSTEM}=\"0\", "
                "ENV{UDISKS_AUTO}=\"1\", ENV{ID_BUS}=\"usb\", ENV{ID_VENDOR}=\"usermount\", "
                "ENV{ID_MODEL}=\"Test Stick\", ENV{ID_REVISION}=\"1.0\", "
                "ENV{ID_SERIAL_SHORT}=\"%k\", ENV{ID_SERIAL}=\"usermount_Test_Stick_%k\"\n";

        return g_file_set_contents(to, rules, -1, NULL) ? 0 : -EIO;
}

/* Debian's rules for /dev/disk/by-*, serving zram disks as well, usermount's, and the
 * UDisks2 hints of zram disks. */
static int write_rules(const char *dir) {
        g_autofree char *from = g_build_filename("/usr/lib/udev/rules.d",
                                                 PERSISTENT_STORAGE_RULES, NULL);
        g_autofree char *to = g_build_filename(dir, PERSISTENT_STORAGE_RULES, NULL);
        g_autofree char *rules = NULL;
        g_autoptr(GString) s = NULL;
        char *end;
        int r;

        if (!g_file_get_contents(from, &rules, NULL, NULL)) {
                harness_log("cannot read %s: is the udev package installed?", from);
                return -ENOENT;
        }
        end = strstr(rules, KERNEL_NAMES_END);
        if (!end) {
                harness_log("%s has no kernel name list this harness knows", from);
                return -EBADMSG;
        }
        s = g_string_new_len(rules, end - rules);
        g_string_append(s, KERNEL_NAMES_END_ZRAM);
        g_string_append(s, end + strlen(KERNEL_NAMES_END));
        if (!g_file_set_contents(to, s->str, -1, NULL))
                return -EIO;
        r = write_udisks_rules(dir);
        if (r < 0)
                return r;
        return write_loop_rules(dir);
}

int harness_udev_prepare(void) {
        g_autofree char *rules = g_build_filename(harness_tmpdir(), "udev", "rules", NULL);
        g_autofree char *empty = g_build_filename(harness_tmpdir(), "udev", "empty", NULL);
        int r;

        if (g_mkdir_with_parents(rules, 0755) < 0 || g_mkdir_with_parents(empty, 0755) < 0)
                return -errno;
        r = write_rules(rules);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(rules_dirs); i++) {
                bool ours = i == ELEMENTSOF(rules_dirs) - 1;

                if (access(rules_dirs[i], F_OK) < 0)
                        continue;
                if (mount(ours ? rules : empty, rules_dirs[i], NULL, MS_BIND, NULL) < 0) {
                        r = -errno;
                        harness_log("cannot bind-mount over %s: %s", rules_dirs[i],
                                    g_strerror(-r));
                        return r;
                }
        }
        r = private_dev_dirs();
        if (r < 0)
                harness_log("cannot make udev's part of /dev private: %s", g_strerror(-r));
        return r;
}

void harness_udev_release(void) {
        g_autofree char *contents = harness_list_read(HARNESS_LIST_DEV_DIRS);
        g_auto(GStrv) made = NULL;

        if (!contents)
                return;
        made = g_strsplit(contents, "\n", -1);
        for (size_t i = 0; made[i]; i++) {
                if (!*made[i])
                        continue;
                /* The tmpfs first (in the private namespace; the janitor, back in the host's,
                 * has none): the directory under it is the host's, and empty. */
                (void) umount2(made[i], MNT_DETACH);
                if (rmdir(made[i]) < 0 && errno != ENOENT)
                        harness_log("cannot remove %s: %s", made[i], g_strerror(errno));
        }
        harness_list_remove(HARNESS_LIST_DEV_DIRS);
}

char *harness_udevd_path(void) {
        static const char *const candidates[] = { "/usr/lib/systemd/systemd-udevd",
                                                  "/lib/systemd/systemd-udevd" };

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (access(candidates[i], X_OK) == 0)
                        return g_strdup(candidates[i]);
        return NULL;
}

int harness_udev_settle(void) {
        const char *argv[] = { "udevadm", "settle", "--timeout=30", NULL };

        return harness_run_command(argv);
}

int harness_udev_trigger(const char *node, const char *action) {
        g_autofree char *path = NULL;

        if (!g_str_has_prefix(node, "/dev/") || strchr(node + 5, '/'))
                return -EINVAL;
        path = g_strdup_printf("/sys/class/block/%s/uevent", node + 5);
        return harness_write_attribute(path, action);
}
