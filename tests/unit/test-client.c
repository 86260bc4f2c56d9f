/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the client's pure parts: terminal escaping and widths, UTF-8 checks,
 * reading and summarising the info dict, the list table, JSON conversion, absolute paths,
 * the routing decisions of mount and unmount, and the mapping of D-Bus errors to exit
 * statuses. TAP output.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "args.h"
#include "bus-client.h"
#include "lib-internal.h"
#include "mount-info.h"
#include "mount-json.h"
#include "mount-table.h"
#include "namespace.h"
#include "output.h"
#include "partspec.h"
#include "path.h"
#include "polkit-agent.h"
#include "route.h"
#include "table.h"
#include "usermount-names.h"
#include "userns.h"
#include "client-tap.h"

static void check_streq(const char *got, const char *expected, const char *what) {
        bool ok = streq_ptr(got, expected);

        check(ok, what);
        if (!ok)
                printf("# got '%s', expected '%s'\n", strempty(got), strempty(expected));
}

static void test_escape(void) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "plain /mnt/x", "plain /mnt/x" },
                { "", "" },
                { "a\x1b[31mb", "a\\x1b[31mb" },
                { "line\nbreak\ttab\r", "line\\x0abreak\\x09tab\\x0d" },
                { "del\x7f", "del\\x7f" },
                { "c1 \xc2\x9b" "1m", "c1 \\xc2\\x9b1m" },
                { "bad \xff byte", "bad \\xff byte" },
                { "cut \xc3", "cut \\xc3" },
                { "overlong \xc0\xaf", "overlong \\xc0\\xaf" },
                { "surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80" },
                { "caf\xc3\xa9 \xf0\x9f\x92\xbe \xc2\xa0nbsp",
                  "caf\xc3\xa9 \xf0\x9f\x92\xbe \xc2\xa0nbsp" },
                { "kept \\x5c backslash", "kept \\x5c backslash" },
                /* Bidi controls and other invisible characters (utf8_char_unsafe()) among
                 * letters, accents and emoji that stay as they are. */
                { "\u202egpj.exe", "\\xe2\\x80\\xaegpj.exe" },
                { "caf\u00e9 \u2066\u65e5\u672c\u2069 \U0001f600",
                  "caf\u00e9 \\xe2\\x81\\xa6\u65e5\u672c\\xe2\\x81\\xa9 \U0001f600" },
                { "\u200fRLM \u061cALM \u200eLRM",
                  "\\xe2\\x80\\x8fRLM \\xd8\\x9cALM \\xe2\\x80\\x8eLRM" },
                { "\u202a\u202b\u202c\u202d",
                  "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad" },
                { "\u2067\u2068\u2069", "\\xe2\\x81\\xa7\\xe2\\x81\\xa8\\xe2\\x81\\xa9" },
                { "one\u2028two\u2029", "one\\xe2\\x80\\xa8two\\xe2\\x80\\xa9" },
                { "pay\u00adpal\u200b\ufeff", "pay\\xc2\\xadpal\\xe2\\x80\\x8b\\xef\\xbb\\xbf" },
                { "tag\U000e0041", "tag\\xf3\\xa0\\x81\\x81" },
                { "\u2764\ufe0f e\u0301 \u05e9\u05dc\u05d5\u05dd",
                  "\u2764\ufe0f e\u0301 \u05e9\u05dc\u05d5\u05dd" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *e = output_escape(cases[i].in);

                check_streq(e, cases[i].out, "output_escape");
        }

        _cleanup_free_ char *n = output_escape(NULL);
        check_streq(n, "", "output_escape(NULL)");
}

static void test_utf8(void) {
        check(output_utf8_is_valid(NULL), "NULL is valid UTF-8 (not given)");
        check(output_utf8_is_valid("noatime,commit=30"), "ASCII is valid");
        check(output_utf8_is_valid("\xc3\xa9\xf4\x8f\xbf\xbf"), "U+00E9 and U+10FFFF are valid");
        check(!output_utf8_is_valid("\xff"), "0xff is invalid");
        check(!output_utf8_is_valid("\xc0\xaf"), "overlong '/' is invalid");
        check(!output_utf8_is_valid("\xed\xa0\x80"), "surrogate is invalid");
        check(!output_utf8_is_valid("\xf4\x90\x80\x80"), "above U+10FFFF is invalid");
        check(!output_utf8_is_valid("ab\xe2\x82"), "truncated sequence is invalid");
}

/*
 * A message to fill, seal and read back; the bus (on a socketpair whose other end is
 * *peer) is only there because sd-bus creates messages for a started connection.
 */
static sd_bus_message *new_message(sd_bus **bus, int *peer) {
        sd_bus_message *m = NULL;
        int sv[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return NULL;
        *peer = sv[1];
        if (sd_bus_new(bus) < 0 || sd_bus_set_fd(*bus, sv[0], sv[0]) < 0 ||
            sd_bus_start(*bus) < 0)
                return NULL;
        if (sd_bus_message_new_method_call(*bus, &m, "a.b", "/a", "a.b", "M") < 0)
                return NULL;
        return m;
}

static int seal(sd_bus_message *m) {
        int r = sd_bus_message_seal(m, 1, 0);

        return r < 0 ? r : sd_bus_message_rewind(m, true);
}

/*
 * Reads the info dict at m with libusermount's reader (info_read(), linked into this test
 * statically) into *src, and the client's view of it into *info, as the CLI does.
 */
static int read_info(sd_bus_message *m, usermount_info **src, MountInfo *info) {
        int r = info_read(m, src);

        return r < 0 ? r : mount_info_from_usermount(*src, info);
}

static void test_info_full(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        _cleanup_(usermount_info_freep) usermount_info *src = NULL;
        _cleanup_(mount_info_done) MountInfo info = {};
        _cleanup_free_ char *summary = NULL;
        int r;

        check(m, "message created");
        if (!m)
                return;
        r = sd_bus_message_append(m, "a{sv}", 13,
                                  "device", "s", "/dev/loop3",
                                  "backing-file", "s", "/home/u/disk.img",
                                  "fstype", "s", "ext4",
                                  "label", "s", "my\x1b[2Jdisk",
                                  "uuid", "s", "1234",
                                  "options", "s", "errors=remount-ro",
                                  "attributes", "as", 1, "nodev",
                                  "attributes", "as", 4, "nodev", "nosuid", "noexec", "ro",
                                  "idmap", "s", "none",
                                  "mount-id", "t", UINT64_C(42),
                                  "mount-id", "s", "wrong type: skipped",
                                  "future", "a{ss}", 1, "k", "v",
                                  "label", "u", 7);
        check(r >= 0 && seal(m) >= 0, "info message built");
        check(read_info(m, &src, &info) >= 0, "info_read: the full dict");
        check(sd_bus_message_at_end(m, true) > 0, "whole dict consumed");
        check(info.mount_id == 42, "mount-id read, wrongly typed repeat skipped");
        check_streq(info.fstype, "ext4", "fstype read");
        check(mount_info_has_attribute(&info, "ro") && !mount_info_has_attribute(&info, "exec"),
              "attributes: last one wins");
        check(mount_info_format_summary(&info, "disk.img", "/mnt/x", &summary) >= 0,
              "summary formatted");
        check_streq(summary,
                    "Mounted /dev/loop3 (ext4, label 'my\\x1b[2Jdisk', image /home/u/disk.img, "
                    "options 'errors=remount-ro') at /mnt/x, read-only, nodev,nosuid,noexec locked",
                    "full summary");
}

static void test_info_partial(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        _cleanup_(usermount_info_freep) usermount_info *src = NULL;
        _cleanup_(mount_info_done) MountInfo info = {};
        _cleanup_free_ char *summary = NULL, *empty = NULL;
        MountInfo none = {};

        check(m, "message created");
        if (!m)
                return;
        check(sd_bus_message_append(m, "a{sv}", 4,
                                    "fstype", "s", "vfat",
                                    "uuid", "s", "AB12-CD34",
                                    "idmap", "s", "user",
                                    "attributes", "as", 4, "nodev", "nosuid", "noexec",
                                    "idmap") >= 0 && seal(m) >= 0,
              "partial message built");
        check(read_info(m, &src, &info) >= 0, "info_read: a partial dict");
        check(mount_info_format_summary(&info, "stick.img", "dir\nname", &summary) >= 0,
              "partial summary formatted");
        check_streq(summary,
                    "Mounted stick.img (vfat, UUID AB12-CD34) at dir\\x0aname, id-mapped (user), "
                    "nodev,nosuid,noexec locked",
                    "partial summary: source stands in for device, target escaped");

        check(mount_info_format_summary(&none, "img", "tgt", &empty) >= 0 &&
              streq_ptr(empty, "Mounted img at tgt"), "empty info");
}

/* The maps applied by an id-mapped mount are part of the summary, escaped. */
static void test_info_idmap_maps(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        _cleanup_(usermount_info_freep) usermount_info *src = NULL;
        _cleanup_(mount_info_done) MountInfo info = {};
        _cleanup_free_ char *summary = NULL;

        check(m, "message created");
        if (!m)
                return;
        check(sd_bus_message_append(m, "a{sv}", 6,
                                    "device", "s", "/dev/loop3",
                                    "fstype", "s", "ext4",
                                    "idmap", "s", "namespace",
                                    "idmap-uid-map", "s", "0:1000:1,1:100000:65536",
                                    "idmap-gid-map", "s", "0:1000:1\n",
                                    "attributes", "as", 3, "nodev", "nosuid", "idmap") >= 0 &&
                      seal(m) >= 0,
              "idmap message built");
        check(read_info(m, &src, &info) >= 0 &&
                      streq_ptr(info.idmap_uid_map, "0:1000:1,1:100000:65536") &&
                      streq_ptr(info.idmap_gid_map, "0:1000:1\n"),
              "info_read reads the maps");
        check(mount_info_format_summary(&info, "img", "/mnt", &summary) >= 0,
              "idmap summary formatted");
        check_streq(summary,
                    "Mounted /dev/loop3 (ext4) at /mnt, id-mapped (namespace: uids "
                    "0:1000:1,1:100000:65536, gids 0:1000:1\\x0a), nodev,nosuid locked",
                    "idmap summary names the mode and both maps, escaped");
}

static void test_width(void) {
        check(output_width("") == 0 && output_width(NULL) == 0, "width of nothing");
        check(output_width("/run/media") == 10, "width of ASCII");
        check(output_width("caf\xc3\xa9") == 4, "width of U+00E9 is 1");
        check(output_width("\xe6\x97\xa5\xe6\x9c\xac") == 4, "width of two CJK characters is 4");
        check(output_width("e\xcc\x81") == 1, "a combining mark takes no column");
}

static void test_path(void) {
        static const struct {
                const char *path, *cwd, *out;
                int r;
        } cases[] = {
                { "/mnt/x", "/home/u", "/mnt/x", 0 },
                { "/mnt/x", NULL, "/mnt/x", 0 },
                { "disk", "/home/u", "/home/u/disk", 0 },
                { "./disk/", "/home/u", "/home/u/disk", 0 },
                { "a//b/./c//", "/home/u/", "/home/u/a/b/c", 0 },
                /* ".." is kept: after a symlink it is not the lexical parent. */
                { "../link/..", "/home/u", "/home/u/../link/..", 0 },
                { ".", "/home/u", "/home/u", 0 },
                { ".", "/", "/", 0 },
                { "/", NULL, "/", 0 },
                { "//", NULL, "/", 0 },
                { "/./", NULL, "/", 0 },
                { "dir name/\xc3\xa9", "/x", "/x/dir name/\xc3\xa9", 0 },
                { "", "/home/u", NULL, -EINVAL },
                { NULL, "/home/u", NULL, -EINVAL },
                { "rel", NULL, NULL, -EINVAL },
                { "rel", "(unreachable)/x", NULL, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = NULL;
                char what[200];
                int r = path_make_absolute(cases[i].path, cases[i].cwd, &out);

                snprintf(what, sizeof(what), "path_make_absolute('%s', '%s')",
                         strempty(cases[i].path), strempty(cases[i].cwd));
                check(r == cases[i].r, what);
                check_streq(out, cases[i].out, what);
        }

        _cleanup_free_ char *cwd = getcwd(NULL, 0), *abs = NULL, *expected = NULL;
        check(cwd && path_make_absolute_cwd("x/", &abs) == 0 &&
              asprintf(&expected, "%s/x", streq(cwd, "/") ? "" : cwd) > 0 &&
              streq_ptr(abs, expected), "path_make_absolute_cwd joins getcwd()");
}

static void test_uid_map(void) {
        check(userns_uid_map_is_initial("         0          0 4294967295\n"),
              "initial uid_map");
        check(!userns_uid_map_is_initial("         0       1000          1\n"),
              "unshare --map-root-user uid_map");
        check(!userns_uid_map_is_initial("0 0 4294967295\n1 1 1\n"), "two lines");
        check(!userns_uid_map_is_initial("0 0 4294967294\n"), "not the whole range");
        check(!userns_uid_map_is_initial(""), "empty uid_map (nothing mapped yet)");
        check(!userns_uid_map_is_initial(NULL), "no uid_map");
        check(userns_detect() >= 0, "userns_detect() answers");

        /* What this process's own uid_map says, and 1 in a new user namespace. */
        char map[4096] = "";
        FILE *f = fopen("/proc/self/uid_map", "re");
        size_t n = f ? fread(map, 1, sizeof(map) - 1, f) : 0;
        pid_t pid;
        int status = -1;

        if (f)
                fclose(f);
        map[n] = 0;
        check(userns_detect() == !userns_uid_map_is_initial(map),
              "userns_detect() agrees with this process's uid_map");
        pid = fork();
        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) < 0 ? 2 : userns_detect() == 1 ? 0 : 1);
        check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
              WEXITSTATUS(status) != 1, "userns_detect() is 1 in a new user namespace");
}

static void test_mount_route(void) {
        static const struct {
                int can_attach, in_userns;
                mode_t mode;
                MountRoute route;
        } cases[] = {
                /* An ordinary user on the host: usermountd attaches. */
                { 0, 0, S_IFBLK, MOUNT_ROUTE_DEVICE },
                { 0, 0, S_IFREG, MOUNT_ROUTE_FD },
                /* Root on the host administers its namespace, but wants a tracked mount. */
                { 1, 0, S_IFBLK, MOUNT_ROUTE_DEVICE },
                { 1, 0, S_IFREG, MOUNT_ROUTE_FD },
                /* unshare --user --map-root-user --mount, a rootless container. */
                { 1, 1, S_IFBLK, MOUNT_ROUTE_OPEN_MOUNT },
                { 1, 1, S_IFREG, MOUNT_ROUTE_OPEN_MOUNT },
                /* unshare --user without --mount: the host's mount namespace. */
                { 0, 1, S_IFREG, MOUNT_ROUTE_FD },
                /* Undecided: usermountd can attach anywhere. */
                { -ENODATA, 1, S_IFREG, MOUNT_ROUTE_FD },
                { -ENOENT, -ENOENT, S_IFBLK, MOUNT_ROUTE_DEVICE },
                { 1, -ENOENT, S_IFREG, MOUNT_ROUTE_FD },
                /* Not a source at all, whatever the namespace. */
                { 1, 1, S_IFDIR, MOUNT_ROUTE_BAD_SOURCE },
                { 0, 0, S_IFCHR, MOUNT_ROUTE_BAD_SOURCE },
                { 0, 0, S_IFIFO, MOUNT_ROUTE_BAD_SOURCE },
                { 0, 0, S_IFSOCK, MOUNT_ROUTE_BAD_SOURCE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char what[120];

                snprintf(what, sizeof(what), "mount_route(%d, %d, 0%o) == %d",
                         cases[i].can_attach, cases[i].in_userns, (unsigned) cases[i].mode,
                         cases[i].route);
                check(mount_route(cases[i].can_attach, cases[i].in_userns, cases[i].mode) ==
                              cases[i].route, what);
        }
}

static void test_unmount_route(void) {
        check(unmount_route(0, S_IFDIR) == UNMOUNT_ROUTE_MOUNT_POINT, "directory: mount point");
        check(unmount_route(0, S_IFBLK) == UNMOUNT_ROUTE_SOURCE, "block device: source");
        check(unmount_route(0, S_IFREG) == UNMOUNT_ROUTE_SOURCE, "image file: source");
        check(unmount_route(0, S_IFCHR) == UNMOUNT_ROUTE_MOUNT_POINT,
              "char device: left to usermountd");
        check(unmount_route(-ENOENT, S_IFREG) == UNMOUNT_ROUTE_MOUNT_POINT,
              "missing path: left to usermountd");
        check(unmount_route(-EIO, 0) == UNMOUNT_ROUTE_MOUNT_POINT,
              "EIO (a vanished device's mount): left to usermountd");
}

static void test_source_matches(void) {
        char image[] = "/tmp/test-client-XXXXXX";
        _cleanup_close_ int fd = mkostemp(image, O_CLOEXEC);
        _cleanup_free_ char *link = NULL;
        struct stat st = {}, blk = { .st_mode = S_IFBLK, .st_rdev = makedev(8, 17) };
        MountInfo stick = { .device = "/dev/sdb1", .mount_point = "/run/media/u/STICK" };
        MountInfo img = { .device = "/dev/loop3", .backing_file = "/home/u/disk.img" };
        MountInfo real = { .device = "/dev/loop4" };

        check(route_source_matches(&stick, "/dev/sdb1", NULL, &blk), "device by path");
        check(route_source_matches(&stick, "/dev/disk/by-label/STICK", "/dev/sdb1", &blk),
              "device by a link that resolves to it");
        check(!route_source_matches(&stick, "/dev/sdc1", "/dev/sdc1", &blk),
              "another device, and /dev/sdb1 not found here");
        check(route_source_matches(&img, "/home/u/disk.img", NULL, NULL), "image by path");
        check(route_source_matches(&img, "/dev/loop3", NULL, NULL), "no stat: device too");
        check(!route_source_matches(&img, "/dev/loop3", NULL, &(struct stat) {
                                            .st_mode = S_IFREG }),
              "a regular file is never matched against the device");
        check(!route_source_matches(&stick, "/dev/sdb1", NULL, &(struct stat) {
                                              .st_mode = S_IFREG }),
              "a regular file named like a device is not it");

        /* Same file under another name: matched by inode. */
        check(fd >= 0 && fstat(fd, &st) == 0, "temporary image made");
        check(asprintf(&link, "%s.link", image) > 0 && symlink(image, link) == 0,
              "symlink to it made");
        real.backing_file = link;
        check(route_source_matches(&real, "/elsewhere/disk.img", NULL, &st),
              "image by inode, under another path");
        real.backing_file = "/nonexistent/disk.img";
        check(!route_source_matches(&real, "/elsewhere/disk.img", NULL, &st),
              "a listed path that does not exist matches nothing");
        (void) unlink(link);
        (void) unlink(image);
}

static void test_info_array(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        usermount_info **src = NULL;
        MountInfo infos[2] = {};
        size_t n = 0;
        int r;

        check(m, "message created");
        if (!m)
                return;
        r = sd_bus_message_open_container(m, 'a', "a{sv}");
        r = r >= 0 ? sd_bus_message_append(m, "a{sv}", 3,
                                           "mount-point", "s", "/run/media/u/STICK",
                                           "owner-uid", "u", UINT32_C(0),
                                           "created-usec", "t", UINT64_C(1700000000000000))
                   : r;
        r = r >= 0 ? sd_bus_message_append(m, "a{sv}", 2,
                                           "mount-point", "s", "/mnt/x",
                                           "owner-uid", "s", "wrong type") : r;
        r = r >= 0 ? sd_bus_message_close_container(m) : r;
        check(r >= 0 && seal(m) >= 0, "ListMounts reply built");
        check(info_read_array(m, &src, &n) >= 0 && n == 2, "two mounts read");
        if (n == 2) {
                check(mount_info_from_usermount(src[0], &infos[0]) >= 0 &&
                      mount_info_from_usermount(src[1], &infos[1]) >= 0, "two mounts shown");
                check(infos[0].owner_uid == 0 && infos[0].created_usec == 1700000000000000,
                      "owner-uid 0 and created-usec read");
                check(infos[1].owner_uid == MOUNT_INFO_UID_INVALID && infos[1].created_usec == 0,
                      "missing or mistyped owner-uid is invalid, created-usec 0");
                check_streq(infos[1].mount_point, "/mnt/x", "second mount point");
                mount_info_done(&infos[0]);
                mount_info_done(&infos[1]);
        }
        usermount_info_list_free(src, n);
}

static void test_info_array_empty(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        usermount_info **infos = NULL;
        size_t n = 1;

        check(m && sd_bus_message_append(m, "aa{sv}", 0) >= 0 && seal(m) >= 0,
              "empty ListMounts reply built");
        check(m && info_read_array(m, &infos, &n) >= 0 && n == 0, "no mounts read");
        usermount_info_list_free(infos, n);
}

static void test_event_line(void) {
        char *attrs[] = { (char *) "nodev", NULL };
        MountInfo stick = { .mount_point = "/info/mp", .device = "/dev/sdb1", .fstype = "ext4",
                            .attributes = attrs };
        MountInfo img = { .device = "/dev/loop3", .backing_file = "/home/u/my disk.img" };
        MountInfo none = {};
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;

        check(mount_info_format_event(&stick, true, "/run/media/alice/STICK", &a) >= 0, "+");
        check_streq(a, "+ /run/media/alice/STICK /dev/sdb1 ext4", "added line");
        check(mount_info_format_event(&img, false, NULL, &b) >= 0, "-");
        check_streq(b, "- - /home/u/my disk.img -", "removed line, image file, gaps");
        check(mount_info_format_event(&stick, false, "", &c) >= 0, "empty argument");
        check_streq(c, "- /info/mp /dev/sdb1 ext4", "info's mount point stands in");
        check(mount_info_format_event(&none, true, "/a\x1b]0;x\x07", &d) >= 0, "escaped");
        check_streq(d, "+ /a\\x1b]0;x\\x07 - -", "mount point escaped");
}

static void test_table(void) {
        static const char *const headers[] = { "A", "LONG HEADER", "C" };
        _cleanup_(table_freep) Table *t = table_new(headers, ELEMENTSOF(headers));
        _cleanup_free_ char *text = NULL;

        check(t && table_rows(t) == 0, "table made, no rows");
        if (!t)
                return;
        check(table_add_cell(t, "wide cell") >= 0 && table_add_cell(t, "") >= 0 &&
              table_add_cell(t, "last") >= 0, "first row");
        check(table_add_cell(t, "\xe6\x97\xa5") >= 0 && table_add_cell(t, "x\ty") >= 0,
              "partial row");
        check(table_rows(t) == 2, "two rows");
        check(table_format(t, &text) >= 0, "table formatted");
        check_streq(text,
                    "A          LONG HEADER  C\n"
                    "wide cell  -            last\n"
                    "\xe6\x97\xa5         x\\x09y       -\n",
                    "columns sized to content, escaped, wide characters, no trailing space");
}

static void test_mount_table(void) {
        char *attrs[] = { (char *) "nodev", (char *) "nosuid", (char *) "noexec",
                          (char *) "ro", (char *) "idmap", NULL };
        MountInfo stick = {
                .mount_point = "/run/media/alice/STICK", .device = "/dev/sdb1",
                .fstype = "vfat", .label = "STICK", .options = "uid=1000,gid=1000",
                .attributes = attrs, .idmap = "user", .created_usec = UINT64_C(1700000000123456),
        };
        MountInfo img = {
                .mount_point = "/home/bob/d", .device = "/dev/loop3",
                .backing_file = "/home/bob/disk.img", .fstype = "ext4",
                .label = "la\x1b[1mbel",
        };
        _cleanup_(table_freep) Table *t = mount_table_new();
        _cleanup_free_ char *text = NULL, *options = NULL;
        char created[32];

        /* Local time is what the table shows; pin the zone for the test. */
        setenv("TZ", "UTC", 1);
        tzset();
        check_streq(mount_table_format_created(UINT64_C(1700000000123456), created,
                                               sizeof(created)),
                    "2023-11-14 22:13:20", "created as local time");
        check_streq(mount_table_format_created(0, created, sizeof(created)), "",
                    "no creation time");
        check(mount_table_format_options(&stick, &options) >= 0, "options formatted");
        check_streq(options, "nodev,nosuid,noexec,ro,idmap=user,uid=1000,gid=1000",
                    "attributes then options");

        check(t && mount_table_add(t, &stick, "alice") >= 0 &&
              mount_table_add(t, &img, "1001") >= 0, "rows added");
        check(t && table_format(t, &text) >= 0, "mount table formatted");
        check_streq(text,
                    "MOUNT POINT             DEVICE              TYPE  LABEL         OWNER  "
                    "CREATED              OPTIONS\n"
                    "/run/media/alice/STICK  /dev/sdb1           vfat  STICK         alice  "
                    "2023-11-14 22:13:20  nodev,nosuid,noexec,ro,idmap=user,uid=1000,gid=1000\n"
                    "/home/bob/d             /home/bob/disk.img  ext4  la\\x1b[1mbel  1001   "
                    "-                    -\n",
                    "mount table");
}

/* Converts the sealed message m to JSON and compares the one-line form with expected. */
static void check_json(sd_bus_message *m, const char *expected, const char *what) {
        _cleanup_(usermount_info_freep) usermount_info *src = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char *text = NULL;

        check(info_read(m, &src) >= 0 && mount_json_from_usermount(src, &o) >= 0 &&
              mount_json_format(o, false, &text) >= 0, what);
        check_streq(text, expected, what);
}

static void test_json_info(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
        int r;

        check(m, "message created");
        if (!m)
                return;
        r = sd_bus_message_append(m, "a{sv}", 12,
                                  "mount-point", "s", "/run/media/u/A \"quoted\"",
                                  "label", "s", "esc\x1b[2J\n",
                                  "attributes", "as", 3, "nodev", "nosuid", "noexec",
                                  "mount-id", "t", UINT64_MAX,
                                  "owner-uid", "u", UINT32_C(4294967294),
                                  "created-usec", "t", UINT64_C(1700000000123456),
                                  "future-bool", "b", 1,
                                  "future-int", "i", -5,
                                  "future-dict", "a{ss}", 1, "k", "v",
                                  "future-struct", "(yd)", 7, 0.5,
                                  "future-nested", "v", "o", "/org/x",
                                  "label", "s", "last");
        check(r >= 0 && seal(m) >= 0, "typed info message built");
        check_json(m,
                   "{\"mount-point\":\"/run/media/u/A \\\"quoted\\\"\",\"label\":\"last\","
                   "\"attributes\":[\"nodev\",\"nosuid\",\"noexec\"],"
                   "\"mount-id\":18446744073709551615,\"owner-uid\":4294967294,"
                   "\"created-usec\":1700000000123456,\"future-bool\":true,\"future-int\":-5,"
                   "\"future-dict\":{\"k\":\"v\"},\"future-struct\":[7,0.5],"
                   "\"future-nested\":\"/org/x\"}",
                   "info dict as JSON: types kept, last repeat wins, slashes unescaped");
}

static void test_json_list(void) {
        _cleanup_close_ int peer = -EBADF, peer2 = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL, *bus2 = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer),
                                                        *empty = new_message(&bus2, &peer2);
        _cleanup_(json_object_putp) json_object *o = NULL, *e = NULL;
        _cleanup_free_ char *pretty = NULL, *pretty_empty = NULL;
        usermount_info **src = NULL, **src_empty = NULL;
        size_t n = 0, n_empty = 1;
        int r;

        check(m && empty, "messages created");
        if (!m || !empty)
                return;
        r = sd_bus_message_open_container(m, 'a', "a{sv}");
        r = r >= 0 ? sd_bus_message_append(m, "a{sv}", 2, "device", "s", "/dev/sdb1",
                                           "label", "s", "ctl\x01") : r;
        r = r >= 0 ? sd_bus_message_close_container(m) : r;
        check(r >= 0 && seal(m) >= 0, "ListMounts reply built");
        check(info_read_array(m, &src, &n) >= 0 && mount_json_from_list(src, n, &o) >= 0 &&
              mount_json_format(o, true, &pretty) >= 0,
              "list as pretty JSON");
        usermount_info_list_free(src, n);
        check_streq(pretty,
                    "[\n"
                    "  {\n"
                    "    \"device\":\"/dev/sdb1\",\n"
                    "    \"label\":\"ctl\\u0001\"\n"
                    "  }\n"
                    "]",
                    "pretty JSON array, control characters escaped");

        check(sd_bus_message_append(empty, "aa{sv}", 0) >= 0 && seal(empty) >= 0 &&
              info_read_array(empty, &src_empty, &n_empty) >= 0 &&
              mount_json_from_list(src_empty, n_empty, &e) >= 0 &&
              json_object_is_type(e, json_type_array) &&
              mount_json_format(e, true, &pretty_empty) >= 0, "empty list as JSON");
        usermount_info_list_free(src_empty, n_empty);
        check_streq(pretty_empty, "[]", "empty list");
}

static void test_json_event(void) {
        _cleanup_(json_object_putp) json_object *info = json_object_new_object(), *ev = NULL,
                                                *ev2 = NULL;
        _cleanup_free_ char *text = NULL, *text2 = NULL;

        check(info && json_object_object_add(info, "mount-point",
                                             json_object_new_string("/info")) == 0 &&
              json_object_object_add(info, "device", json_object_new_string("/dev/sdb1")) == 0 &&
              json_object_object_add(info, "event", json_object_new_string("spoofed")) == 0,
              "info object built");
        check(mount_json_event("added", "/run/media/u/S", info, &ev) >= 0 &&
              mount_json_format(ev, false, &text) >= 0, "event built");
        check_streq(text,
                    "{\"event\":\"added\",\"mount-point\":\"/run/media/u/S\","
                    "\"device\":\"/dev/sdb1\"}",
                    "event first, signal's mount point wins, info's event dropped");
        check(mount_json_event("removed", NULL, info, &ev2) >= 0 &&
              mount_json_format(ev2, false, &text2) >= 0, "event without argument built");
        check_streq(text2,
                    "{\"event\":\"removed\",\"mount-point\":\"/info\",\"device\":\"/dev/sdb1\"}",
                    "info's mount point kept without an argument");
}

static void test_error_status(void) {
        static const struct {
                const char *name;
                int r;
                ExitStatus status;
        } cases[] = {
                { UM_ERROR_NOT_AUTHORIZED, -EACCES, EXIT_STATUS_NOT_AUTHORIZED },
                { UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN, -EACCES, EXIT_STATUS_NOT_AUTHORIZED },
                { UM_ERROR_INVALID_ARGUMENT, -EINVAL, EXIT_STATUS_REFUSED },
                { UM_ERROR_INVALID_SOURCE, -EINVAL, EXIT_STATUS_REFUSED },
                { UM_ERROR_FILESYSTEM_NOT_ALLOWED, -EINVAL, EXIT_STATUS_REFUSED },
                { UM_ERROR_OPTION_NOT_ALLOWED, -EINVAL, EXIT_STATUS_REFUSED },
                { UM_ERROR_DEVICE_BUSY, -EBUSY, EXIT_STATUS_BUSY },
                { UM_ERROR_INVALID_TARGET, -EINVAL, EXIT_STATUS_TARGET },
                { UM_ERROR_NOT_MOUNTED, -EINVAL, EXIT_STATUS_NOT_MOUNTED },
                { UM_ERROR_LIMIT_EXCEEDED, -EINVAL, EXIT_STATUS_LIMIT },
                { UM_ERROR_FAILED, -EIO, EXIT_STATUS_FAILURE },
                { SD_BUS_ERROR_SERVICE_UNKNOWN, -EHOSTUNREACH, EXIT_STATUS_UNAVAILABLE },
                { SD_BUS_ERROR_NAME_HAS_NO_OWNER, -ENXIO, EXIT_STATUS_UNAVAILABLE },
                { SD_BUS_ERROR_NO_REPLY, -ETIMEDOUT, EXIT_STATUS_UNAVAILABLE },
                { SD_BUS_ERROR_TIMEOUT, -ETIMEDOUT, EXIT_STATUS_UNAVAILABLE },
                { SD_BUS_ERROR_ACCESS_DENIED, -EACCES, EXIT_STATUS_NOT_AUTHORIZED },
                { "org.freedesktop.DBus.Error.Spawn.ChildExited", -EIO, EXIT_STATUS_UNAVAILABLE },
                { SD_BUS_ERROR_NOT_SUPPORTED, -EOPNOTSUPP, EXIT_STATUS_FAILURE },
                /* A daemon's errno-style error says nothing about our connection. */
                { "System.Error.ENOENT", -ENOENT, EXIT_STATUS_FAILURE },
                { NULL, -ECONNREFUSED, EXIT_STATUS_UNAVAILABLE },
                { NULL, -ENOENT, EXIT_STATUS_UNAVAILABLE },
                { NULL, -EPERM, EXIT_STATUS_NOT_AUTHORIZED },
                { NULL, -ENOMEM, EXIT_STATUS_FAILURE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                char what[160];

                if (cases[i].name)
                        sd_bus_error_set(&e, cases[i].name, "message");
                snprintf(what, sizeof(what), "exit status of %s/%d",
                         strempty(cases[i].name), cases[i].r);
                check(client_error_status(sd_bus_error_is_set(&e) ? e.name : NULL, cases[i].r) ==
                      cases[i].status, what);
        }
}

static unsigned help_shown;

static void count_help(void) {
        help_shown++;
}

/* The parser list and monitor share: --json, --help, and nothing else. */
static void test_args_json_only(void) {
        static const struct {
                const char *argv[4];
                int r;
                bool json;
        } cases[] = {
                { { "list", NULL }, 1, false },
                { { "list", "--json", NULL }, 1, true },
                { { "monitor", "--help", NULL }, 0, false },
                { { "list", "extra", NULL }, -EINVAL, false },
                { { "list", "--json", "extra", NULL }, -EINVAL, true },
                { { "list", "--bogus", NULL }, -EINVAL, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *argv[4];
                int argc = 0;
                bool json = false;
                unsigned before = help_shown;
                int r;

                for (; cases[i].argv[argc]; argc++)
                        argv[argc] = (char *) cases[i].argv[argc];
                argv[argc] = NULL;
                r = args_parse_json_only(argc, argv, count_help, &json);
                check(r == cases[i].r, "args_parse_json_only result");
                check(json == cases[i].json, "args_parse_json_only --json");
                check((help_shown > before) == (cases[i].r == 0), "args_parse_json_only --help");
        }
}

/* Writes a stand-in agent script into dir; returns its path (static buffer). */
static const char *write_agent(const char *dir, const char *name, const char *body) {
        static char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        if (!f)
                return "/nonexistent";
        fprintf(f, "#!/bin/sh\n%s\n", body);
        fclose(f);
        chmod(path, 0755);
        return path;
}

/* polkit_agent_start() with stand-ins: registered (fd 3 closed), too slow, missing. */
static void test_polkit_agent(void) {
        char dir[] = "/tmp/test-client-agent.XXXXXX";
        const char *path;
        pid_t pid = 0;
        int r;

        if (!mkdtemp(dir)) {
                check(false, "mkdtemp");
                return;
        }

        r = polkit_agent_start("/nonexistent/pkttyagent", 5000, &pid);
        check(r == -ENOENT && pid == 0, "polkit_agent_start: missing program is -ENOENT");

        /* The arguments are checked by the stand-in: it only "registers" if they are right. */
        path = write_agent(dir, "good", "[ \"$*\" = \"--notify-fd 3 --fallback --process $PPID\" ] "
                                        "|| exit 1\nexec 3>&-\nexec sleep 60");
        r = polkit_agent_start(path, 5000, &pid);
        check(r == 0 && pid > 0, "polkit_agent_start: registered agent");
        pid = polkit_agent_stop(pid);
        check(pid == 0 && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
              "polkit_agent_stop: agent reaped");

        path = write_agent(dir, "slow", "exec sleep 60");
        r = polkit_agent_start(path, 200, &pid);
        check(r == -ETIMEDOUT && pid == 0, "polkit_agent_start: no registration is -ETIMEDOUT");
        check(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
              "polkit_agent_start: nothing left after a timeout");

        unlink(path);
        unlink(write_agent(dir, "good", ""));
        rmdir(dir);
}

static void test_partspec_parse(void) {
        static const struct {
                const char *in;
                int r;
                PartSpecKind kind;
                uint32_t number;
                const char *value;
        } cases[] = {
                { "2", 0, PART_SPEC_NUMBER, 2, NULL },
                { "128", 0, PART_SPEC_NUMBER, 128, NULL },
                { "4294967295", 0, PART_SPEC_NUMBER, 4294967295U, NULL },
                { "label:rootfs", 0, PART_SPEC_LABEL, 0, "rootfs" },
                { "label:a:b", 0, PART_SPEC_LABEL, 0, "a:b" },
                { "uuid:4E7B0161-75E3-F048-BE31-517EB3D1637B", 0, PART_SPEC_UUID, 0,
                  "4E7B0161-75E3-F048-BE31-517EB3D1637B" },
                { "type:root-x86-64", 0, PART_SPEC_TYPE, 0, "root-x86-64" },
                { "0", -EINVAL, 0, 0, NULL },
                { "4294967296", -EINVAL, 0, 0, NULL },
                { "02", -EINVAL, 0, 0, NULL },
                { "-1", -EINVAL, 0, 0, NULL },
                { "+1", -EINVAL, 0, 0, NULL },
                { " 1", -EINVAL, 0, 0, NULL },
                { "1 ", -EINVAL, 0, 0, NULL },
                { "0x2", -EINVAL, 0, 0, NULL },
                { "two", -EINVAL, 0, 0, NULL },
                { "label:", -EINVAL, 0, 0, NULL },
                { "uuid:", -EINVAL, 0, 0, NULL },
                { "name:x", -EINVAL, 0, 0, NULL },
                { "", -EINVAL, 0, 0, NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PartSpec s = { .kind = 99 };
                int r = partspec_parse(cases[i].in, &s);
                bool ok = r == cases[i].r;

                if (ok && r == 0)
                        ok = s.kind == cases[i].kind && s.number == cases[i].number &&
                             streq_ptr(s.value, cases[i].value);
                check(ok, "partspec_parse");
                if (!ok)
                        printf("# '%s': %d\n", cases[i].in, r);
        }
}

static PartEntry part_entry(uint32_t number, const char *type, const char *type_name,
                            const char *name, const char *uuid, const char *label,
                            const char *fsuuid) {
        PartEntry e = { .number = number };

        snprintf(e.type, sizeof(e.type), "%s", type);
        snprintf(e.type_name, sizeof(e.type_name), "%s", type_name);
        snprintf(e.name, sizeof(e.name), "%s", name);
        snprintf(e.uuid, sizeof(e.uuid), "%s", uuid);
        snprintf(e.label, sizeof(e.label), "%s", label);
        snprintf(e.fsuuid, sizeof(e.fsuuid), "%s", fsuuid);
        return e;
}

static void test_partspec_resolve(void) {
        static const struct {
                const char *spec;
                int r;
                uint32_t number, other;
        } cases[] = {
                { "7", 0, 7, 0 },                                  /* taken as it is */
                { "label:EFI System", 0, 1, 0 },                   /* GPT name */
                { "label:um-data", 0, 2, 0 },                      /* filesystem label */
                { "label:root", 0, 3, 0 },
                { "label:ROOT", -ENOENT, 0, 0 },                   /* labels are exact */
                { "label:twin", -ENOTUNIQ, 2, 3 },                 /* name of 2, label of 3 */
                { "uuid:aaaaaaaa-0000-0000-0000-000000000002", 0, 2, 0 },
                { "uuid:AAAAAAAA-0000-0000-0000-000000000002", 0, 2, 0 },
                { "uuid:ffff-3", 0, 3, 0 },                        /* filesystem UUID */
                { "uuid:nope", -ENOENT, 0, 0 },
                { "type:esp", 0, 1, 0 },
                { "type:root-x86-64", 0, 3, 0 },
                { "type:C12A7328-F81F-11D2-BA4B-00A0C93EC93B", 0, 1, 0 },
                { "type:linux-generic", 0, 2, 0 },
                { "type:0x83", 0, 5, 0 },
                { "type:83", 0, 5, 0 },
                { "type:home", -ENOENT, 0, 0 },
        };
        static PartTable t = { .type = "gpt", .n_entries = 4 };

        t.entries[0] = part_entry(1, "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "esp", "EFI System",
                                  "aaaaaaaa-0000-0000-0000-000000000001", "", "");
        t.entries[1] = part_entry(2, "0fc63daf-8483-4772-8e79-3d69d8477de4", "linux-generic",
                                  "twin", "aaaaaaaa-0000-0000-0000-000000000002", "um-data",
                                  "ffff-2");
        t.entries[2] = part_entry(3, "4f68bce3-e8cd-4db1-96e7-fbcaf984b709", "root-x86-64",
                                  "root", "aaaaaaaa-0000-0000-0000-000000000003", "twin",
                                  "ffff-3");
        t.entries[3] = part_entry(5, "0x83", "", "", "", "", "");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint32_t number = 0, other = 0;
                PartSpec s;
                int r = partspec_parse(cases[i].spec, &s);

                if (r == 0)
                        r = partspec_resolve(&s, &t, &number, &other);
                check(r == cases[i].r && number == cases[i].number && other == cases[i].other,
                      "partspec_resolve");
                if (r != cases[i].r || number != cases[i].number)
                        printf("# '%s': %d, %u, %u\n", cases[i].spec, r, number, other);
        }
}

int main(void) {
        test_escape();
        test_partspec_parse();
        test_partspec_resolve();
        test_args_json_only();
        test_utf8();
        test_info_full();
        test_info_partial();
        test_info_idmap_maps();
        test_width();
        test_path();
        test_uid_map();
        test_mount_route();
        test_unmount_route();
        test_source_matches();
        test_info_array();
        test_info_array_empty();
        test_event_line();
        test_table();
        test_mount_table();
        test_json_info();
        test_json_list();
        test_json_event();
        test_error_status();
        test_polkit_agent();
        return tap_finish();
}
