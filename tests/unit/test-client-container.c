/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of --container (container.h): the PID it takes, the TARGET it takes, and
 * which lines of /proc/PID/mountinfo are usermountd's mounts, those unmount --container
 * takes down. TAP.
 */
#include <errno.h>
#include <stdio.h>

#include "container.h"
#include "macro.h"
#include "client-tap.h"

static void test_parse_pid(void) {
        static const struct {
                const char *s;
                int r;
                pid_t pid;
        } cases[] = {
                { "1", 0, 1 },
                { "4242", 0, 4242 },
                { "2147483647", 0, 2147483647 },
                { "0", -EINVAL, 0 },
                { "-1", -EINVAL, 0 },
                { "+5", -EINVAL, 0 },
                { " 5", -EINVAL, 0 },
                { "5 ", -EINVAL, 0 },
                { "12x", -EINVAL, 0 },
                { "2147483648", -EINVAL, 0 },
                { "99999999999999999999", -EINVAL, 0 },
                { "", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                pid_t pid = 0;
                int r = container_parse_pid(cases[i].s, &pid);

                check(r == cases[i].r && pid == cases[i].pid, "container_parse_pid");
                if (r != cases[i].r || pid != cases[i].pid)
                        printf("# '%s': %d, %d\n", cases[i].s, r, (int) pid);
        }
}

static void test_check_target(void) {
        check(container_check_target("/mnt") == 0, "an absolute target");
        check(container_check_target("/a/b c") == 0, "an absolute target with a space");
        check(container_check_target("mnt") == -EINVAL, "a relative target");
        check(container_check_target("./mnt") == -EINVAL, "a relative target with ./");
        check(container_check_target("") == -EINVAL, "an empty target");
        check(container_check_target("/\xff") == -EINVAL, "a target that is not UTF-8");
}

static void test_mountinfo(void) {
        static const struct {
                const char *line;
                uint64_t id;
                bool ours;
        } cases[] = {
                /* A kernel mount of an image's loop device, id-mapped, as podman sees it. */
                { "612 580 7:0 / /mnt rw,nosuid,nodev,noexec,relatime,idmapped shared:1 - ext4 "
                  "/dev/loop0 rw,errors=remount-ro\n", 612, true },
                /* The same line asked about another mount. */
                { "612 580 7:0 / /mnt rw,nosuid,nodev,noexec,relatime - ext4 /dev/loop0 rw\n",
                  613, false },
                /* A block device polkit allowed (no optional fields). */
                { "70 25 8:17 / /media/x rw,nosuid,nodev,noexec - vfat /dev/sdb1 rw\n", 70, true },
                /* usermountd's userspace driver. */
                { "88 25 0:52 / /mnt rw,nosuid,nodev,noexec - fuse.fuse2fs usermount "
                  "rw,user_id=0\n", 88, true },
                /* Someone else's FUSE mount, and FUSE claiming a device. */
                { "89 25 0:53 / /mnt rw,nosuid,nodev - fuse.sshfs host:/dir rw\n", 89, false },
                { "90 25 0:54 / /mnt rw,nosuid,nodev - fuseblk /dev/sdc1 rw\n", 90, false },
                /* The container's own mounts, nosuid and nodev as they are. */
                { "91 25 0:55 / /dev/shm rw,nosuid,nodev,noexec - tmpfs shm rw\n", 91, false },
                { "92 25 0:5 / /dev rw,nosuid - devtmpfs /dev rw\n", 92, false },
                { "93 25 0:22 / /proc rw,nosuid,nodev,noexec - proc proc rw\n", 93, false },
                /* A podman volume: a bind mount of a directory of the user's disk. */
                { "94 25 259:2 /home/u/data /data rw,nosuid,nodev,relatime - ext4 "
                  "/dev/nvme0n1p2 rw\n", 94, false },
                { "95 25 259:2 /x /data rw,nosuid,nodev - ext4 /dev/nvme0n1p2 rw\n", 95, false },
                /* Malformed. */
                { "612 580 7:0 / /mnt rw ext4 /dev/loop0 rw\n", 612, false },
                { "x 580 7:0 / /mnt rw - ext4 /dev/loop0 rw\n", 612, false },
                { "", 612, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                bool ours = container_mountinfo_is_usermount(cases[i].line, cases[i].id);

                check(ours == cases[i].ours, "container_mountinfo_is_usermount");
                if (ours != cases[i].ours)
                        printf("# case %zu: %d\n", i, ours);
        }
}

int main(void) {
        test_parse_pid();
        test_check_target();
        test_mountinfo();
        return tap_finish();
}
