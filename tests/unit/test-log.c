/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the daemon's logging (daemon/log.c) and of its status line (daemon/service.c):
 * the journal fields of an entry (log_fields_build(), which is all the journal target
 * adds to a message), the recognition of stderr as the journal's stream, the log target
 * names, that the stderr target writes exactly "<N>message\n", which tests and
 * journald's stream parser rely on, and that nothing from a caller reaches either target
 * with a control or direction-changing character in it (log_escape()). Also the one
 * predicate of the characters every escaper of device data escapes (utf8_char_unsafe(),
 * checked against GLib's Unicode tables) and that the daemon's escapers agree on labels:
 * um_escape(), log_escape() and the mount point names (mountname_sanitize()).
 */
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"
#include "um-error.h"
#include "service.h"
#include "utf8.h"

/* The fields of f as "NAME=value" strings, in order. */
static GPtrArray *fields_of(const LogFields *f) {
        GPtrArray *a = g_ptr_array_new_with_free_func(g_free);

        for (size_t i = 0; i < f->n; i++)
                g_ptr_array_add(a, g_strndup(f->iov[i].iov_base, f->iov[i].iov_len));
        return a;
}

static void assert_fields(LogFields *f, const char *const *want) {
        g_autoptr(GPtrArray) have = fields_of(f);
        size_t n = 0;

        for (; want[n]; n++) {
                g_assert_cmpuint(n, <, have->len);
                g_assert_cmpstr(have->pdata[n], ==, want[n]);
        }
        g_assert_cmpuint(have->len, ==, n);
}

static void test_fields_request(void) {
        const LogSite site = { "daemon/manager.c", 812, "on_attach_done" };
        const LogRequest req = { 61001, "/dev/loop3", "mount", "ext4", "/run/media/u/stick" };
        const char *const want[] = {
                "MESSAGE=Mounted it.",
                "PRIORITY=6",
                "SYSLOG_IDENTIFIER=usermountd",
                "CODE_FILE=daemon/manager.c",
                "CODE_LINE=812",
                "CODE_FUNC=on_attach_done",
                "USERMOUNT_UID=61001",
                "USERMOUNT_DEVICE=/dev/loop3",
                "USERMOUNT_ACTION=mount",
                "USERMOUNT_FSTYPE=ext4",
                "USERMOUNT_MOUNT_POINT=/run/media/u/stick",
                NULL,
        };
        LogFields f;

        g_assert_cmpint(log_fields_build(LOG_LEVEL_INFO, 0, &site, &req, "Mounted it.", &f), ==, 0);
        assert_fields(&f, want);
        log_fields_done(&f);
        g_assert_cmpuint(f.n, ==, 0);
}

/* What is not known is left out, not written empty; uid 0 is a uid. */
static void test_fields_partial(void) {
        const LogSite site = { "daemon/service.c", 0, NULL };
        const LogRequest refuse = { 0, "/home/u/x.img", "refuse", NULL, NULL };
        const LogRequest idle = { LOG_UID_NONE, NULL, "idle-exit", NULL, NULL };
        const char *const want_refuse[] = {
                "MESSAGE=No.", "PRIORITY=4", "SYSLOG_IDENTIFIER=usermountd",
                "CODE_FILE=daemon/service.c", "USERMOUNT_UID=0",
                "USERMOUNT_DEVICE=/home/u/x.img", "USERMOUNT_ACTION=refuse", NULL,
        };
        const char *const want_idle[] = {
                "MESSAGE=Idle.", "PRIORITY=6", "SYSLOG_IDENTIFIER=usermountd",
                "USERMOUNT_ACTION=idle-exit", NULL,
        };
        LogFields f;

        g_assert_cmpint(log_fields_build(LOG_LEVEL_WARNING, 0, &site, &refuse, "No.", &f), ==, 0);
        assert_fields(&f, want_refuse);
        log_fields_done(&f);
        g_assert_cmpint(log_fields_build(LOG_LEVEL_INFO, 0, NULL, &idle, "Idle.", &f), ==, 0);
        assert_fields(&f, want_idle);
        log_fields_done(&f);
}

/* A message that is not about a request has no USERMOUNT_ fields; an error has ERRNO=
 * (positive, whichever sign it was passed with). */
static void test_fields_plain_and_errno(void) {
        const LogSite site = { "daemon/main.c", 7, "main" };
        const char *const want[] = {
                "MESSAGE=Failed.", "PRIORITY=3", "SYSLOG_IDENTIFIER=usermountd", "ERRNO=13",
                "CODE_FILE=daemon/main.c", "CODE_LINE=7", "CODE_FUNC=main", NULL,
        };
        LogFields f;

        g_assert_cmpint(log_fields_build(LOG_LEVEL_ERROR, -EACCES, &site, NULL, "Failed.", &f), ==, 0);
        assert_fields(&f, want);
        log_fields_done(&f);
        g_assert_cmpint(log_fields_build(LOG_LEVEL_ERROR, EACCES, &site, NULL, "Failed.", &f), ==, 0);
        assert_fields(&f, want);
        log_fields_done(&f);
}

/* The message and the values from a request are escaped: the journal's native protocol
 * would carry binary data, but journalctl shows it to an administrator's terminal. A field
 * never ends early or runs into the next; the daemon's own fields are kept as they are. */
static void test_fields_escaped(void) {
        const LogSite site = { "daemon/manager.c", 1, "f" };
        const LogRequest req = { 1000, "/dev/sdb1\x1b[2J", "mount", "ext4",
                                 "/run/media/u/a\nb=c\xe2\x80\xaegpj.exe" };
        const char *const want[] = {
                "MESSAGE=two\\x0alines\\xc2\\x9b",
                "PRIORITY=6",
                "SYSLOG_IDENTIFIER=usermountd",
                "CODE_FILE=daemon/manager.c",
                "CODE_LINE=1",
                "CODE_FUNC=f",
                "USERMOUNT_UID=1000",
                "USERMOUNT_DEVICE=/dev/sdb1\\x1b[2J",
                "USERMOUNT_ACTION=mount",
                "USERMOUNT_FSTYPE=ext4",
                "USERMOUNT_MOUNT_POINT=/run/media/u/a\\x0ab=c\\xe2\\x80\\xaegpj.exe",
                NULL,
        };
        LogFields f;

        g_assert_cmpint(log_fields_build(LOG_LEVEL_INFO, 0, &site, &req, "two\nlines\xc2\x9b", &f),
                        ==, 0);
        assert_fields(&f, want);
        log_fields_done(&f);
}

typedef struct EscapeCase {
        const char *in, *out;
} EscapeCase;

static const EscapeCase escape_cases[] = {
        /* Kept: printable ASCII, backslashes (um_escape() output stays as it is), and
         * letters of every script. */
        { "", "" },
        { "/run/media/u/stick", "/run/media/u/stick" },
        { "a\\x1b b", "a\\x1b b" },
        { "caf\u00e9 \u65e5\u672c \u05e9\u05dc\u05d5\u05dd \U0001f600",
          "caf\u00e9 \u65e5\u672c \u05e9\u05dc\u05d5\u05dd \U0001f600" },
        { "\u00a0-\u2027\u202f", "\u00a0-\u2027\u202f" },
        { "e\u0301 \u2764\ufe0f \u0627\u0644 \ud55c", "e\u0301 \u2764\ufe0f \u0627\u0644 \ud55c" },
        /* C0 controls, DEL. */
        { "a\nb\rc\td", "a\\x0ab\\x0dc\\x09d" },
        { "\x01\x1b[31m\x7f", "\\x01\\x1b[31m\\x7f" },
        /* C1 controls: NEL, CSI, and the ends of the range. */
        { "\xc2\x80\xc2\x85\xc2\x9b\xc2\x9f", "\\xc2\\x80\\xc2\\x85\\xc2\\x9b\\xc2\\x9f" },
        /* Bidi: embeddings and overrides, isolates, marks. */
        { "x\u202ay\u202bz\u202c", "x\\xe2\\x80\\xaay\\xe2\\x80\\xabz\\xe2\\x80\\xac" },
        { "\u202d\u202e", "\\xe2\\x80\\xad\\xe2\\x80\\xae" },
        { "\u2066\u2067\u2068\u2069",
          "\\xe2\\x81\\xa6\\xe2\\x81\\xa7\\xe2\\x81\\xa8\\xe2\\x81\\xa9" },
        { "\u200e\u200f\u061c", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c" },
        /* Invisible: zero-width characters, word joiner, line and paragraph separators, BOM,
         * interlinear annotations. */
        { "\u200b\u200d\u2060\u2028\u2029\ufeff\ufff9",
          "\\xe2\\x80\\x8b\\xe2\\x80\\x8d\\xe2\\x81\\xa0\\xe2\\x80\\xa8\\xe2\\x80\\xa9"
          "\\xef\\xbb\\xbf\\xef\\xbf\\xb9" },
        /* Bidi controls among letters that stay. */
        { "\u202egpj.exe caf\u00e9 \u65e5\u672c \U0001f600",
          "\\xe2\\x80\\xaegpj.exe caf\u00e9 \u65e5\u672c \U0001f600" },
        { "\u2066\u05e9\u05dc\u05d5\u05dd\u2069 \u200f\u00e9",
          "\\xe2\\x81\\xa6\u05e9\u05dc\u05d5\u05dd\\xe2\\x81\\xa9 \\xe2\\x80\\x8f\u00e9" },
        /* The other format characters: soft hyphen, Arabic number sign and end of ayah,
         * Mongolian vowel separator, invisible plus, a musical format control, tags. */
        { "pay\u00adpal", "pay\\xc2\\xadpal" },
        { "\u0600\u06dd\u180e\u2064", "\\xd8\\x80\\xdb\\x9d\\xe1\\xa0\\x8e\\xe2\\x81\\xa4" },
        { "\U0001d173x\U000e0041\U000e007f",
          "\\xf0\\x9d\\x85\\xb3x\\xf3\\xa0\\x81\\x81\\xf3\\xa0\\x81\\xbf" },
        /* Noncharacters: U+FDD0, U+FFFE, U+10FFFF. */
        { "\xef\xb7\x90\xef\xbf\xbe\xf4\x8f\xbf\xbf",
          "\\xef\\xb7\\x90\\xef\\xbf\\xbe\\xf4\\x8f\\xbf\\xbf" },
        /* Not UTF-8: stray continuation, overlong '/', a surrogate, a cut sequence. */
        { "a\x80" "b\xc0\xaf" "c", "a\\x80b\\xc0\\xafc" },
        { "\xed\xa0\x80", "\\xed\\xa0\\x80" },
        { "end\xe2\x80", "end\\xe2\\x80" },
};

/* um_escape() (error messages, the registry, the bus) escapes the same characters, and
 * backslashes too. */
static void test_um_escape_agrees(void) {
        char a[256], b[256];

        for (size_t i = 0; i < G_N_ELEMENTS(escape_cases); i++) {
                if (strchr(escape_cases[i].in, '\\'))
                        continue;
                g_assert_cmpstr(um_escape(escape_cases[i].in, a, sizeof(a)), ==,
                                log_escape(escape_cases[i].in, b, sizeof(b)));
        }
        g_assert_cmpstr(um_escape("a\\b", a, sizeof(a)), ==, "a\\x5cb");
}

static void test_escape(void) {
        char buf[256];

        for (size_t i = 0; i < G_N_ELEMENTS(escape_cases); i++) {
                g_assert_true(log_escape(escape_cases[i].in, buf, sizeof(buf)) == buf);
                g_assert_cmpstr(buf, ==, escape_cases[i].out);
                /* Escaping escaped text changes nothing. */
                g_assert_cmpstr(log_escape(escape_cases[i].out, buf, sizeof(buf)), ==,
                                escape_cases[i].out);
        }
        g_assert_cmpstr(log_escape(NULL, buf, sizeof(buf)), ==, "");
}

/* Cut where a whole character or escape no longer fits, never in the middle of one. */
static void test_escape_truncated(void) {
        char buf[8];

        g_assert_cmpstr(log_escape("abcdefghij", buf, sizeof(buf)), ==, "abcdefg");
        g_assert_cmpstr(log_escape("abcd\u00e9", buf, sizeof(buf)), ==, "abcd\u00e9");
        g_assert_cmpstr(log_escape("abcdef\u00e9", buf, sizeof(buf)), ==, "abcdef");
        g_assert_cmpstr(log_escape("abc\n", buf, sizeof(buf)), ==, "abc\\x0a");
        g_assert_cmpstr(log_escape("abcd\n", buf, sizeof(buf)), ==, "abcd");
        g_assert_cmpstr(log_escape("\u202e", buf, sizeof(buf)), ==, "");
        g_assert_cmpstr(log_escape("x", buf, 1), ==, "");
        g_assert_cmpstr(log_escape("x", buf, 0), ==, ""); /* buf untouched, still "" */
}

/*
 * utf8_char_unsafe() against GLib's tables, every code point: each control, format
 * character and line or paragraph separator is unsafe, and nothing else is but
 * noncharacters and unassigned code points in blocks that are all format characters.
 * When Unicode (and GLib with it) adds a format character, this fails until utf8.h
 * knows it.
 */
static void test_unsafe_predicate(void) {
        for (gunichar cp = 0; cp <= 0x10ffff; cp++) {
                GUnicodeType t;
                bool want;

                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue; /* surrogates: never decoded */
                t = g_unichar_type(cp);
                want = t == G_UNICODE_CONTROL || t == G_UNICODE_FORMAT ||
                       t == G_UNICODE_LINE_SEPARATOR || t == G_UNICODE_PARAGRAPH_SEPARATOR;
                if (want && !utf8_char_unsafe(cp))
                        g_error("U+%04X (GLib type %d) is not unsafe", cp, (int) t);
                if (!want && utf8_char_unsafe(cp) && t != G_UNICODE_UNASSIGNED)
                        g_error("U+%04X (GLib type %d) is unsafe", cp, (int) t);
        }
}

typedef struct LabelCase {
        const char *label;
        const char *escaped; /* by um_escape() and log_escape() */
        const char *name;    /* by mountname_sanitize(); NULL: nothing usable */
} LabelCase;

/* Device labels with bidi and invisible characters among letters that must stay. */
static const LabelCase label_cases[] = {
        { "\u202egpj.exe", "\\xe2\\x80\\xaegpj.exe", "gpj.exe" },
        { "caf\u00e9\u2066\u65e5\u672c\u2069 \U0001f600",
          "caf\u00e9\\xe2\\x81\\xa6\u65e5\u672c\\xe2\\x81\\xa9 \U0001f600",
          "caf\u00e9_\u65e5\u672c_ \U0001f600" },
        { "\u200fRLM\u200f", "\\xe2\\x80\\x8fRLM\\xe2\\x80\\x8f", "RLM" },
        { "a\u061cb", "a\\xd8\\x9cb", "a_b" },
        { "x\u2067\u202d\u200ey", "x\\xe2\\x81\\xa7\\xe2\\x80\\xad\\xe2\\x80\\x8ey", "x_y" },
        { "pay\u00adpal", "pay\\xc2\\xadpal", "pay_pal" },
        { "USB\U000e0069\U000e0067\U000e006e", "USB\\xf3\\xa0\\x81\\xa9\\xf3\\xa0\\x81\\xa7"
          "\\xf3\\xa0\\x81\\xae", "USB" },
        { "line\u2028two", "line\\xe2\\x80\\xa8two", "line_two" },
        { "\u2764\ufe0f e\u0301 \u0441\u043b\u043e\u0432\u043e",
          "\u2764\ufe0f e\u0301 \u0441\u043b\u043e\u0432\u043e",
          "\u2764\ufe0f e\u0301 \u0441\u043b\u043e\u0432\u043e" },
        { "\u202e\u2069\u200f", "\\xe2\\x80\\xae\\xe2\\x81\\xa9\\xe2\\x80\\x8f", NULL },
};

static void test_label_escapers(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(label_cases); i++) {
                const LabelCase *c = &label_cases[i];
                char buf[256] = "unchanged";
                bool ok;

                g_assert_cmpstr(um_escape(c->label, buf, sizeof(buf)), ==, c->escaped);
                g_assert_cmpstr(log_escape(c->label, buf, sizeof(buf)), ==, c->escaped);
                ok = mountname_sanitize(c->label, buf, sizeof(buf));
                g_assert_cmpint(ok, ==, !!c->name);
                g_assert_cmpstr(buf, ==, c->name ?: "");
        }
}

static void test_journal_stream(void) {
        g_autofree char *path = g_build_filename(g_get_tmp_dir(), "um-test-log-XXXXXX", NULL);
        g_autofree char *match = NULL, *other_ino = NULL, *other_dev = NULL;
        struct stat st;
        int fd;

        fd = g_mkstemp(path);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(fstat(fd, &st), ==, 0);
        match = g_strdup_printf("%llu:%llu", (unsigned long long) st.st_dev,
                                (unsigned long long) st.st_ino);
        other_ino = g_strdup_printf("%llu:%llu", (unsigned long long) st.st_dev,
                                    (unsigned long long) st.st_ino + 1);
        other_dev = g_strdup_printf("%llu:%llu", (unsigned long long) st.st_dev + 1,
                                    (unsigned long long) st.st_ino);

        g_assert_true(log_fd_is_journal_stream(fd, match));
        g_assert_false(log_fd_is_journal_stream(fd, other_ino));
        g_assert_false(log_fd_is_journal_stream(fd, other_dev));
        g_assert_false(log_fd_is_journal_stream(fd, NULL));
        g_assert_false(log_fd_is_journal_stream(fd, ""));
        for (const char *const *bad = (const char *const[]) { ":", "1:", ":1", "1", "-1:2",
                     " 1:2", "1:2 ", "1:2:3", "x:y", "99999999999999999999999:1", NULL };
             *bad; bad++)
                g_assert_false(log_fd_is_journal_stream(fd, *bad));
        /* The variable inherited, the fd not: a closed fd is not the journal. */
        g_assert_cmpint(close(fd), ==, 0);
        g_assert_false(log_fd_is_journal_stream(fd, match));
        g_assert_cmpint(unlink(path), ==, 0);
}

static void test_target_names(void) {
        g_assert_cmpint(log_target_from_string("auto"), ==, LOG_TARGET_AUTO);
        g_assert_cmpint(log_target_from_string("stderr"), ==, LOG_TARGET_STDERR);
        g_assert_cmpint(log_target_from_string("journal"), ==, LOG_TARGET_JOURNAL);
        g_assert_cmpint(log_target_from_string("console"), ==, -EINVAL);
        g_assert_cmpint(log_target_from_string(""), ==, -EINVAL);
        g_assert_cmpint(log_target_from_string("Journal"), ==, -EINVAL);
}

/* The stderr target, request events included, writes the same lines as before fields
 * existed; levels above the maximum write nothing. */
static void test_stderr_format(void) {
        g_autofree char *path = g_build_filename(g_get_tmp_dir(), "um-test-log-XXXXXX", NULL);
        g_autofree char *text = NULL;
        int fd, saved;

        fd = g_mkstemp(path);
        g_assert_cmpint(fd, >=, 0);
        saved = dup(STDERR_FILENO);
        g_assert_cmpint(dup2(fd, STDERR_FILENO), ==, STDERR_FILENO);

        log_set_target(LOG_TARGET_STDERR);
        log_info("Plain %d.", 1);
        log_request_mount(LOG_LEVEL_INFO, 61001, "/dev/loop3", "mount", "ext4", "/mnt",
                          "Mounted %s for uid %u.", "x.img", 61001u);
        log_request(LOG_LEVEL_WARNING, LOG_UID_NONE, NULL, "idle-exit", "Idle.");
        g_assert_cmpint(log_warning_errno(-ENOENT, "Gone: %m"), ==, -ENOENT);
        log_debug("Not shown.");
        /* A caller's target can neither start a line of its own nor turn this one around. */
        log_request_mount(LOG_LEVEL_INFO, 61001, "/dev/loop3", "mount", "ext4", "/mnt",
                          "Mounted at %s.", "/home/u/a\n<0>forged\u202eexe.txt");
        fflush(stderr);

        g_assert_cmpint(dup2(saved, STDERR_FILENO), ==, STDERR_FILENO);
        close(saved);
        close(fd);
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_assert_cmpstr(text, ==, "<6>Plain 1.\n"
                                  "<6>Mounted x.img for uid 61001.\n"
                                  "<4>Idle.\n"
                                  "<4>Gone: No such file or directory\n"
                                  "<6>Mounted at /home/u/a\\x0a<0>forged\\xe2\\x80\\xaeexe.txt.\n");
        g_assert_cmpint(unlink(path), ==, 0);
}

static void test_status_line(void) {
        char buf[128], tiny[8];

        g_assert_cmpstr(service_format_status(0, 0, buf, sizeof(buf)), ==,
                        "Serving 0 requests, 0 mounts");
        g_assert_cmpstr(service_format_status(1, 1, buf, sizeof(buf)), ==,
                        "Serving 1 request, 1 mount");
        g_assert_cmpstr(service_format_status(2, 3, buf, sizeof(buf)), ==,
                        "Serving 2 requests, 3 mounts");
        g_assert_cmpstr(service_format_status(2, 3, tiny, sizeof(tiny)), ==, "Serving");
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/log/fields/request", test_fields_request);
        g_test_add_func("/log/fields/partial", test_fields_partial);
        g_test_add_func("/log/fields/plain-and-errno", test_fields_plain_and_errno);
        g_test_add_func("/log/fields/escaped", test_fields_escaped);
        g_test_add_func("/log/escape", test_escape);
        g_test_add_func("/log/escape/um-escape-agrees", test_um_escape_agrees);
        g_test_add_func("/log/escape/truncated", test_escape_truncated);
        g_test_add_func("/log/escape/unsafe-predicate", test_unsafe_predicate);
        g_test_add_func("/log/escape/labels", test_label_escapers);
        g_test_add_func("/log/journal-stream", test_journal_stream);
        g_test_add_func("/log/target-names", test_target_names);
        g_test_add_func("/log/stderr-format", test_stderr_format);
        g_test_add_func("/service/status-line", test_status_line);
        return g_test_run();
}
