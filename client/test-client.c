/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the client's pure parts: terminal escaping, UTF-8 checks, reading and
 * summarising the info dict, and the mapping of D-Bus errors to exit statuses. TAP output.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "bus-client.h"
#include "mount-info.h"
#include "output.h"
#include "usermount-names.h"

static unsigned n_tests, n_failed;

static void check(bool ok, const char *what) {
        n_tests++;
        if (!ok)
                n_failed++;
        printf("%sok %u - %s\n", ok ? "" : "not ", n_tests, what);
}

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

static void test_info_full(void) {
        _cleanup_close_ int peer = -EBADF;
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_message(&bus, &peer);
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
        check(mount_info_read(m, &info) >= 0, "mount_info_read");
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
        check(mount_info_read(m, &info) >= 0, "mount_info_read partial");
        check(mount_info_format_summary(&info, "stick.img", "dir\nname", &summary) >= 0,
              "partial summary formatted");
        check_streq(summary,
                    "Mounted stick.img (vfat, UUID AB12-CD34) at dir\\x0aname, id-mapped (user), "
                    "nodev,nosuid,noexec locked",
                    "partial summary: source stands in for device, target escaped");

        check(mount_info_format_summary(&none, "img", "tgt", &empty) >= 0 &&
              streq_ptr(empty, "Mounted img at tgt"), "empty info");
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
                { UM_ERROR_NOT_MOUNTED, -EINVAL, EXIT_STATUS_FAILURE },
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
                check(client_bus_error_status(&e, cases[i].r) == cases[i].status, what);
        }
}

int main(void) {
        test_escape();
        test_utf8();
        test_info_full();
        test_info_partial();
        test_error_status();
        printf("1..%u\n", n_tests);
        return n_failed > 0;
}
