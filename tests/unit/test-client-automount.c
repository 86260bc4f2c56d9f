/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of usermount automount's pure parts: the configuration file and its errors,
 * the merge of the command line over it, the ignore lists, which udev devices are
 * mountable, udev's label decoding, and what a notification and its log line carry of a
 * label (markup and terminal escaping). TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "automount-config.h"
#include "automount-notify.h"
#include "automount-udev.h"
#include "macro.h"
#include "parse-util.h"
#include "client-tap.h"

/* Parses text as a file named "a.conf"; *ret_error gets the message or NULL. */
static int parse(const char *text, AutomountConfig *c, char **ret_error) {
        FILE *f = fmemopen((void *) text, strlen(text), "r");
        int r;

        *ret_error = NULL;
        if (!f)
                return -errno;
        r = automount_config_parse(f, "a.conf", c, ret_error);
        fclose(f);
        return r;
}

static void test_config_good(void) {
        AutomountConfig c = AUTOMOUNT_CONFIG_INIT;
        char *error = NULL;
        int r = parse("# my sticks\n"
                      "\n"
                      "[Automount]\n"
                      "IgnoreLabel=Backup disk\n"
                      "IgnoreLabel=CAMERA\n"
                      "  ; indented comment\n"
                      "IgnoreUUID=1234-ABCD  2f6b9a4e-1d3c-4e8a-9b7f-0c5d6e7f8a91\n"
                      "IgnoreFilesystemType=ntfs vfat\n"
                      "ReadOnly=yes\n"
                      "IdMap=user\n"
                      "Notify=off\n", &c, &error);

        check(r == 0 && !error, "a file with every setting parses");
        check(c.ignore_labels.n == 2 && streq(c.ignore_labels.items[0], "Backup disk") &&
              streq(c.ignore_labels.items[1], "CAMERA"),
              "IgnoreLabel= keeps spaces and adds up");
        check(c.ignore_uuids.n == 2 && streq(c.ignore_uuids.items[0], "1234-ABCD"),
              "IgnoreUUID= takes several, separated by spaces");
        check(c.ignore_fstypes.n == 2 && streq(c.ignore_fstypes.items[1], "vfat"),
              "IgnoreFilesystemType= takes several");
        check(c.read_only == 1 && c.idmap_user == 1 && c.notify == 0, "the scalars are set");
        check(streq_ptr(automount_config_ignores(&c, "Backup disk", NULL, NULL), "label"),
              "ignored by label");
        check(!automount_config_ignores(&c, "backup disk", NULL, "ext4"),
              "labels are compared as they are");
        check(streq_ptr(automount_config_ignores(&c, NULL, "1234-abcd", NULL), "UUID"),
              "UUIDs are compared in any case");
        check(streq_ptr(automount_config_ignores(&c, "X", "u", "vfat"), "filesystem type"),
              "ignored by filesystem type");
        check(!automount_config_ignores(&c, NULL, NULL, NULL), "nothing known, nothing ignored");
        automount_config_done(&c);
}

static void test_config_empty(void) {
        AutomountConfig c = AUTOMOUNT_CONFIG_INIT;
        char *error = NULL;

        check(parse("", &c, &error) == 0 && c.read_only == -1 && c.notify == -1 &&
              c.idmap_user == -1 && c.ignore_labels.n == 0,
              "an empty file leaves everything unset");
        automount_config_done(&c);
}

static const struct {
        const char *text;
        const char *error;
} bad_files[] = {
        { "ReadOnly=yes\n", "a.conf:1: settings must follow a [Automount] line" },
        { "[Automount]\nReadOnly=maybe\n", "a.conf:2: ReadOnly= needs yes or no, not 'maybe'" },
        { "[Automount]\nNotify=1\nNotify=0\n", "a.conf:3: Notify= is set twice" },
        { "[Automount]\nIdMap=namespace\n",
          "a.conf:2: IdMap= needs none or user, not 'namespace'" },
        { "[Automount]\n\nIgnoreLabels=x\n", "a.conf:3: unknown setting 'IgnoreLabels'" },
        { "[Automount]\nIgnoreLabel=\n", "a.conf:2: IgnoreLabel= needs a label" },
        { "[General]\nReadOnly=yes\n",
          "a.conf:2: unknown section [General]; the file has only [Automount]" },
        { "[Automount]\nReadOnly yes\n", "a.conf:2: not a [Section] or Key=value line" },
        { "[Automount\n", "a.conf:1: not a [Section] or Key=value line" },
        { "[Automount]\nFoo=1\nbar\n", "a.conf:2: unknown setting 'Foo'" },
        { "[Automount]\nbar\nFoo=1\n", "a.conf:2: not a [Section] or Key=value line" },
        { "[Automount]\nIgnoreLabel=\x1b[31m\nX=1\n", "a.conf:3: unknown setting 'X'" },
};

static void test_config_bad(void) {
        for (size_t i = 0; i < ELEMENTSOF(bad_files); i++) {
                AutomountConfig c = AUTOMOUNT_CONFIG_INIT;
                char *error = NULL, *what = NULL;
                int r = parse(bad_files[i].text, &c, &error);
                bool ok = r == -EINVAL && error &&
                          strncmp(error, bad_files[i].error, strlen(bad_files[i].error)) == 0;

                if (asprintf(&what, "bad file %zu: '%s'", i, bad_files[i].error) < 0)
                        abort();
                if (!ok)
                        printf("# got %d '%s'\n", r, strempty(error));
                check(ok && c.ignore_labels.n == 0 && c.read_only == -1, what);
                free(what);
                free(error);
                automount_config_done(&c);
        }
}

static void test_config_escape(void) {
        AutomountConfig c = AUTOMOUNT_CONFIG_INIT;
        char *error = NULL;
        int r = parse("[Automount]\nIdMap=\x1b[2J\n", &c, &error);

        check(r == -EINVAL && error && !strchr(error, '\x1b') && strstr(error, "\\x1b"),
              "control characters in the file are escaped in the message");
        free(error);
        automount_config_done(&c);
}

static void test_config_merge(void) {
        AutomountConfig c = AUTOMOUNT_CONFIG_INIT, o = AUTOMOUNT_CONFIG_INIT;
        char *error = NULL;

        parse("[Automount]\nReadOnly=yes\nNotify=no\nIgnoreLabel=A\n", &c, &error);
        o.read_only = 0;
        strlist_add(&o.ignore_labels, "B");
        check(automount_config_merge(&c, &o) == 0, "merge");
        check(c.read_only == 0, "an option overrides the file");
        check(c.notify == 0, "what the options leave unset, the file keeps");
        check(c.ignore_labels.n == 2 && streq(c.ignore_labels.items[1], "B"),
              "ignore options add to the file's lists");
        automount_config_done(&c);
        automount_config_done(&o);
}

static void test_config_default_path(void) {
        char *path = NULL;

        setenv("XDG_CONFIG_HOME", "/cfg", 1);
        setenv("HOME", "/home/u", 1);
        check(automount_config_default_path(&path) == 0 &&
              streq(path, "/cfg/usermount/automount.conf"), "$XDG_CONFIG_HOME wins");
        free(path);
        setenv("XDG_CONFIG_HOME", "relative", 1);
        check(automount_config_default_path(&path) == 0 &&
              streq(path, "/home/u/.config/usermount/automount.conf"),
              "a relative $XDG_CONFIG_HOME is ignored, $HOME/.config is used");
        free(path);
        unsetenv("XDG_CONFIG_HOME");
        check(automount_config_default_path(&path) == 0 &&
              streq(path, "/home/u/.config/usermount/automount.conf"), "no $XDG_CONFIG_HOME");
        free(path);
}

static void test_parse_values(void) {
        check(parse_boolean("Yes") == 1 && parse_boolean("on") == 1 &&
              parse_boolean("1") == 1 && parse_boolean("true") == 1,
              "booleans: yes");
        check(parse_boolean("NO") == 0 && parse_boolean("off") == 0 &&
              parse_boolean("0") == 0 && parse_boolean("false") == 0,
              "booleans: no");
        check(parse_boolean("") == -EINVAL && parse_boolean("y") == -EINVAL,
              "booleans: anything else");
        check(automount_parse_idmap("user") == 1 && automount_parse_idmap("none") == 0 &&
              automount_parse_idmap("namespace") == -EINVAL &&
              automount_parse_idmap("User") == -EINVAL,
              "id-mappings: none and user only");
}

static const struct {
        AutomountDevice d;
        AutomountVerdict verdict;
        const char *what;
} devices[] = {
        { { .devname = "/dev/sdb1", .fs_usage = "filesystem", .fs_type = "ext4" },
          AUTOMOUNT_MOUNT, "an ext4 filesystem" },
        { { .devname = "/dev/sdb1", .fs_usage = "filesystem", .fs_type = "vfat" },
          AUTOMOUNT_MOUNT, "a vfat filesystem" },
        { { .devname = "/dev/sdb" }, AUTOMOUNT_NO_FS, "a disk with a partition table" },
        { { .devname = "/dev/sdb2", .fs_usage = "other", .fs_type = "swap" },
          AUTOMOUNT_NO_FS, "swap" },
        { { .devname = "/dev/sdb2", .fs_usage = "filesystem", .fs_type = "swap" },
          AUTOMOUNT_NO_FS, "swap, whatever the usage says" },
        { { .devname = "/dev/sdb3", .fs_usage = "crypto", .fs_type = "crypto_LUKS" },
          AUTOMOUNT_NO_FS, "LUKS" },
        { { .devname = "/dev/sdb4", .fs_usage = "raid", .fs_type = "linux_raid_member" },
          AUTOMOUNT_NO_FS, "a RAID member" },
        { { .devname = "/dev/sdb5", .fs_usage = "filesystem" }, AUTOMOUNT_NO_FS, "no type" },
        { { .fs_usage = "filesystem", .fs_type = "ext4" }, AUTOMOUNT_NO_FS, "no device node" },
        { { .devname = "/dev/loop3", .fs_usage = "filesystem", .fs_type = "ext4",
            .usermount_image = true }, AUTOMOUNT_SYSTEM_SKIP, "usermountd's own loop device" },
        { { .devname = "/dev/sdc1", .fs_usage = "filesystem", .fs_type = "ext4",
            .udisks_ignore = true }, AUTOMOUNT_SYSTEM_SKIP, "UDISKS_IGNORE=1" },
};

static void test_verdicts(void) {
        for (size_t i = 0; i < ELEMENTSOF(devices); i++)
                check(automount_device_verdict(&devices[i].d) == devices[i].verdict,
                      devices[i].what);
}

static void test_decode(void) {
        char *s = automount_decode_udev("My\\x20Stick\\x2fA");

        check(streq_ptr(s, "My Stick/A"), "udev's \\xNN escapes are decoded");
        free(s);
        s = automount_decode_udev("a\\x00b");
        check(!s, "a NUL byte is refused");
        s = automount_decode_udev("a\\xZZ\\x4");
        check(streq_ptr(s, "a\\xZZ\\x4"), "what is not an escape stays");
        free(s);
}

static void test_is_mounted(void) {
        struct stat st;

        check(stat("/proc", &st) == 0 && automount_device_is_mounted(st.st_dev) == 1,
              "the device of /proc is mounted");
        check(automount_device_is_mounted(makedev(4095, 1048575)) == 0,
              "a device that does not exist is not mounted");
}

static void test_markup(void) {
        char *s = notifier_escape_markup("<b>A & B</b> \"q\" 'a'");

        check(streq_ptr(s, "&lt;b&gt;A &amp; B&lt;/b&gt; &quot;q&quot; &apos;a&apos;"),
              "the notification body's markup is escaped");
        free(s);
}

/*
 * The summary and body as a notification server gets them: controls, bidi and invisible
 * characters escaped in both; the body's markup as entities; the summary's markup
 * characters as their fullwidth forms (U+FF06 &, U+FF1C <, U+FF1E >), which read the same
 * as plain text and as markup; letters, accents, CJK and emoji as they are.
 */
static void test_notification_texts(void) {
        static const struct {
                const char *summary, *body, *want_summary, *want_body;
        } cases[] = {
                { "Mounted Tom & Jerry at /run/media/u/Tom & Jerry", "/dev/sdb1, vfat",
                  "Mounted Tom \uff06 Jerry at /run/media/u/Tom \uff06 Jerry", "/dev/sdb1, vfat" },
                { "Mounted <b>x</b> at /run/media/u/<b>x</b>", "<i>y</i> & \"q\" 'a'",
                  "Mounted \uff1cb\uff1ex\uff1c/b\uff1e at "
                  "/run/media/u/\uff1cb\uff1ex\uff1c/b\uff1e",
                  "&lt;i&gt;y&lt;/i&gt; &amp; &quot;q&quot; &apos;a&apos;" },
                { "Ignoring A &amp; B", NULL, "Ignoring A \uff06amp; B", "" },
                { "Mounted \u202egpj.exe at /run/media/u/gpj.exe", "/dev/sdb1\u2066, ext4",
                  "Mounted \\xe2\\x80\\xaegpj.exe at /run/media/u/gpj.exe",
                  "/dev/sdb1\\xe2\\x81\\xa6, ext4" },
                { "Could not mount \u200f<i>\u2069 (/dev/sdb1)", "a\nb\u200f<\u2068",
                  "Could not mount \\xe2\\x80\\x8f\uff1ci\uff1e\\xe2\\x81\\xa9 (/dev/sdb1)",
                  "a\\x0ab\\xe2\\x80\\x8f&lt;\\xe2\\x81\\xa8" },
                { "Mounted caf\u00e9 \u65e5\u672c \U0001f600 at /run/media/u/caf\u00e9",
                  "/dev/sdb1, exfat, read-only",
                  "Mounted caf\u00e9 \u65e5\u672c \U0001f600 at /run/media/u/caf\u00e9",
                  "/dev/sdb1, exfat, read-only" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *s = NULL, *b = NULL;
                int r = notifier_format(cases[i].summary, cases[i].body, &s, &b);
                bool ok = r == 0 && streq_ptr(s, cases[i].want_summary) &&
                          streq_ptr(b, cases[i].want_body);

                check(ok, "the notification's summary and body are escaped");
                if (!ok)
                        printf("# got %d '%s' '%s'\n", r, strempty(s), strempty(b));
        }
}

/* The log line keeps a label's markup characters as they are and escapes the rest. */
static void test_notification_log(void) {
        int fd = memfd_create("stderr", MFD_CLOEXEC);
        int saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        char text[256] = "";
        ssize_t n = -1;

        if (fd >= 0 && saved >= 0 && dup2(fd, STDERR_FILENO) >= 0) {
                notifier_log("Mounted Tom & <Jerry> \u202egpj.exe \u00e9", "/dev/sdb1\n");
                notifier_log("Ignoring \u65e5\u672c \U0001f600\u2066", NULL);
                fflush(stderr);
                dup2(saved, STDERR_FILENO);
                n = pread(fd, text, sizeof(text) - 1, 0);
        }
        if (n >= 0)
                text[n] = 0;
        check(streq(text, "usermount: Mounted Tom & <Jerry> \\xe2\\x80\\xaegpj.exe \u00e9: "
                          "/dev/sdb1\\x0a\n"
                          "usermount: Ignoring \u65e5\u672c \U0001f600\\xe2\\x81\\xa6\n"),
              "the log line of a notification is escaped for the terminal only");
        if (saved >= 0)
                close(saved);
        if (fd >= 0)
                close(fd);
}

int main(void) {
        test_config_good();
        test_config_empty();
        test_config_bad();
        test_config_escape();
        test_config_merge();
        test_config_default_path();
        test_parse_values();
        test_verdicts();
        test_decode();
        test_is_mounted();
        test_markup();
        test_notification_texts();
        test_notification_log();
        return tap_finish();
}
