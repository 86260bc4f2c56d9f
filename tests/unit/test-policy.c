/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table-driven tests of the mount policy (daemon/policy.c): the filesystem allow-list,
 * the syntax check of option strings, the options refused on every filesystem
 * (docs/security.md, classes 5-11), forced options, the per-type allow-lists with their
 * value checks, read-only and exec handling, and the memory contract of the results.
 *
 * The expectations below are written out independently of the policy's own tables: each
 * row states the exact fsconfig() items and mount attributes a request must produce, or
 * the error class it must get, so that a change to a table fails a test.
 *
 * Embedded NUL bytes cannot be expressed in a C string; the bus edge rejects them (a D-Bus
 * string cannot contain NUL), so these tests cover every other byte class instead.
 */
#include <glib.h>
#include <sys/mount.h>

#include "conf.h"
#include "policy.h"

#define UID 1000
#define GID 1001
#define UMASK 0027
#define ATTR_BASE ((uint64_t) (MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC))

#define OK 0
#define INVALID UM_ERROR_KIND_INVALID_ARGUMENT
#define NOT_ALLOWED UM_ERROR_KIND_OPTION_NOT_ALLOWED

/* PolicyInput flags. A read-only source implies a read-only request, as at the bus edge. */
enum {
        IN_RO = 1 << 0,
        IN_SOURCE_RO = 1 << 1,
        IN_EXEC = 1 << 2,
};

static const char *const allowed_fstypes[] = {
        "ext2", "ext3", "ext4", "xfs", "btrfs", "squashfs", "erofs",
        "vfat", "exfat", "ntfs3", "iso9660", "udf",
};

/* Types without Unix ownership, which get the caller's uid= and gid=. */
static bool is_owner_type(const char *fstype) {
        return g_strv_contains((const char *const[]){ "vfat", "exfat", "ntfs3", "iso9660", "udf",
                                                      NULL }, fstype);
}

/* Types without Unix ownership whose driver has umask=, which gets the caller's umask. */
static bool is_umask_type(const char *fstype) {
        return g_strv_contains((const char *const[]){ "vfat", "exfat", "ntfs3", "udf", NULL },
                               fstype);
}

/* What usermount puts before the caller's items (for UMASK), written out here. */
static const char *forced_first(const char *fstype) {
        return is_umask_type(fstype) ? "umask=0027" : "";
}

/* What usermount appends to every mount of a type (for UID and GID), written out here. */
static const char *forced_last(const char *fstype) {
        if (g_strv_contains((const char *const[]){ "ext2", "ext3", "ext4", NULL }, fstype))
                return "errors=remount-ro";
        if (is_owner_type(fstype))
                return "uid=1000,gid=1001";
        return "";
}

/* Everything usermount forces on a type when the caller gives no options. */
static const char *forced_items(const char *fstype) {
        return is_umask_type(fstype) ? "umask=0027,uid=1000,gid=1001" : forced_last(fstype);
}

static PolicyInput input(const char *fstype, const char *options, unsigned flags) {
        return (PolicyInput){
                .fstype = fstype,
                .options = options,
                .read_only = (flags & (IN_RO | IN_SOURCE_RO)) != 0,
                .source_read_only = (flags & IN_SOURCE_RO) != 0,
                .exec = (flags & IN_EXEC) != 0,
                .uid = UID,
                .gid = GID,
                .umask = UMASK,
        };
}

/* Comma-joins the non-empty ones of a NULL-terminated list. */
static char *join_items(const char *const *parts) {
        GString *s = g_string_new(NULL);

        for (; *parts; parts++) {
                if (isempty(*parts))
                        continue;
                if (s->len > 0)
                        g_string_append_c(s, ',');
                g_string_append(s, *parts);
        }
        return g_string_free(s, false);
}

/* "items" of the caller between the forced ones (umask= first, the rest last). */
static char *with_forced(const char *fstype, const char *items) {
        return join_items((const char *const[]){ forced_first(fstype), items,
                                                 forced_last(fstype), NULL });
}

static size_t count_items(const char *items) {
        size_t n = 1;

        if (isempty(items))
                return 0;
        for (const char *c = items; *c; c++)
                n += *c == ',';
        return n;
}

/* ---- Invariants every call must keep --------------------------------------------------------- */

static MountOption sentinel_item;

/* What *ret holds before a call that must fail; it must still hold it afterwards. */
static MountOptions sentinel(void) {
        return (MountOptions){
                .items = &sentinel_item, .n_items = 77, .attr_set = 0xdead, .read_only = true,
        };
}

static void assert_untouched(const MountOptions *o) {
        g_assert_true(o->items == &sentinel_item);
        g_assert_cmpuint(o->n_items, ==, 77);
        g_assert_cmphex(o->attr_set, ==, 0xdead);
        g_assert_true(o->read_only);
}

/* A message is a human sentence: not empty, valid UTF-8, no control characters. */
static void assert_clean_message(const UmError *e) {
        g_assert_cmpuint(strlen(e->message), >, 10);
        g_assert_true(g_utf8_validate(e->message, -1, NULL));
        for (const char *c = e->message; *c; c++)
                g_assert_true((unsigned char) *c >= 0x20 && *c != 0x7f);
}

static void assert_error(int r, const UmError *e, int want_r, UmErrorKind kind,
                         const char *message) {
        g_assert_cmpint(r, ==, want_r);
        g_assert_cmpint(e->kind, ==, kind);
        g_assert_cmpint(e->error, ==, -want_r);
        assert_clean_message(e);
        if (message && !strstr(e->message, message))
                g_error("message \"%s\" lacks \"%s\"", e->message, message);
}

/* Runs policy_build_options() expecting a failure; *ret must be untouched. */
static void expect_refused(const PolicyInput *in, int want_r, UmErrorKind kind,
                           const char *message) {
        MountOptions o = sentinel();
        UmError e = {};
        int r;

        r = policy_build_options(in, &o, &e);
        assert_error(r, &e, want_r, kind, message);
        assert_untouched(&o);
}

/* Runs policy_build_options() expecting success with exactly these items and attributes. */
static bool is_read_only_media(const char *fstype) {
        return g_strv_contains((const char *const[]){ "squashfs", "erofs", "iso9660", NULL },
                               fstype);
}

/* What a read-only mount of a type gets so that no journal or log is replayed. */
static const char *replay_skip(const char *fstype) {
        if (g_strv_contains((const char *const[]){ "ext3", "ext4", NULL }, fstype))
                return "noload";
        if (streq(fstype, "xfs"))
                return "norecovery";
        if (streq(fstype, "btrfs"))
                return "rescue=nologreplay";
        return NULL;
}

/*
 * The items a read-only mount really gets: the tables below write the caller's items and
 * the forced ones; the replay skip goes between them unless the caller gave it.
 */
static char *with_replay_skip(const char *fstype, const char *items, bool read_only) {
        const char *skip = replay_skip(fstype), *last = forced_last(fstype);
        size_t n = strlen(items), l = strlen(last);
        g_autofree char *head = NULL;

        if (!read_only || !skip || strstr(items, skip))
                return g_strdup(items);
        if (l > 0 && n >= l && streq(items + n - l, last)) {
                head = g_strndup(items, n - l);
                return g_strdup_printf("%s%s,%s", head, skip, last);
        }
        return g_strdup_printf("%s%s%s", items, *items ? "," : "", skip);
}

static void expect_built(const PolicyInput *in, const char *items_written, uint64_t attr,
                         bool read_only) {
        UmError e = { .kind = UM_ERROR_KIND_LIMIT_EXCEEDED, .message = "untouched" };
        MountOptions o = {};
        g_autofree char *items = NULL;
        char *s;
        int r;

        /* Filesystems whose drivers never write are always mounted (and reported) read-only. */
        if (is_read_only_media(in->fstype)) {
                read_only = true;
                attr |= MOUNT_ATTR_RDONLY;
        }
        items = with_replay_skip(in->fstype, items_written, read_only);

        r = policy_build_options(in, &o, &e);
        if (r < 0)
                g_error("refused (%d): %s", r, e.message);
        /* The error is only written on failure. */
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_LIMIT_EXCEEDED);
        g_assert_cmpstr(e.message, ==, "untouched");

        s = mount_options_to_string(&o);
        g_assert_cmpstr(s, ==, items);
        g_assert_cmphex(o.attr_set, ==, attr);
        g_assert_cmpint(o.read_only, ==, read_only);
        g_assert_cmpuint(o.n_items, ==, count_items(items));
        for (size_t i = 0; i < o.n_items; i++) {
                g_assert_nonnull(o.items[i].key);
                /* Mount attributes and "ro" never travel as filesystem parameters. */
                g_assert_false(g_strv_contains((const char *const[]){ "ro", "rw", "nosuid",
                        "nodev", "noexec", "noatime", "relatime", "strictatime", "nodiratime",
                        NULL }, o.items[i].key));
        }
        g_free(s);
        mount_options_done(&o);
        g_assert_null(o.items);
        g_assert_cmpuint(o.n_items, ==, 0);
}

/* squashfs, erofs and iso9660 are read-only whatever the caller asks. */
/* Written out, not through with_replay_skip(): a read-only mount never replays a log. */
static void test_read_only_skips_replay(void) {
        static const struct {
                const char *fstype, *options;
                unsigned flags;
                const char *items;
        } cases[] = {
                { "ext4", "", IN_RO, "noload,errors=remount-ro" },
                { "ext3", "", IN_SOURCE_RO, "noload,errors=remount-ro" },
                { "ext4", "ro", 0, "noload,errors=remount-ro" },
                { "ext4", "noload,ro", 0, "noload,errors=remount-ro" },
                { "ext4", "", 0, "errors=remount-ro" },
                { "ext2", "", IN_RO, "errors=remount-ro" },
                { "xfs", "", IN_RO, "norecovery" },
                { "xfs", "norecovery", IN_SOURCE_RO, "norecovery" },
                { "xfs", "", 0, "" },
                { "btrfs", "", IN_RO, "rescue=nologreplay" },
                { "btrfs", "", 0, "" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                PolicyInput in = input(cases[i].fstype, cases[i].options, cases[i].flags);
                _cleanup_(mount_options_done) MountOptions o = {};
                g_autofree char *s = NULL;
                UmError e = {};

                g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
                s = mount_options_to_string(&o);
                g_assert_cmpstr(s, ==, cases[i].items);
        }
        /* What the driver refuses without its journal is refused by name. */
        for (size_t i = 0; i < 3; i++) {
                const char *option = (const char *[]){ "commit=5", "data=journal",
                                                       "journal_checksum" }[i];
                PolicyInput in = input("ext4", option, IN_RO);

                expect_refused(&in, -EPERM, UM_ERROR_KIND_OPTION_NOT_ALLOWED,
                               "needs the journal, and a read-only mount never loads it");
        }
}

static void test_read_only_media(void) {
        for (const char *const *t = (const char *const[]){ "squashfs", "erofs", "iso9660", NULL };
             *t; t++) {
                const PolicyInput in = { .fstype = *t, .options = "", .uid = 1000, .gid = 1000 };
                MountOptions o = {};
                UmError e = {};

                g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
                g_assert_true(o.read_only);
                g_assert_cmphex(o.attr_set & MOUNT_ATTR_RDONLY, ==, MOUNT_ATTR_RDONLY);
                mount_options_done(&o);
        }
        for (const char *const *t = (const char *const[]){ "ext4", "xfs", "btrfs", "udf", NULL };
             *t; t++) {
                const PolicyInput in = { .fstype = *t, .options = "", .uid = 1000, .gid = 1000 };
                MountOptions o = {};
                UmError e = {};

                g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
                g_assert_false(o.read_only);
                mount_options_done(&o);
        }
}

/* Test paths from option strings: '/' and anything unusual become %XX. */
static char *test_path(const char *prefix, const char *a, const char *b) {
        GString *s = g_string_new(prefix);

        for (const char *part = a; part; part = part == a ? b : NULL) {
                g_string_append_c(s, '/');
                if (!*part)
                        g_string_append(s, "(empty)");
                for (const unsigned char *c = (const unsigned char *) part; *c; c++) {
                        if (g_ascii_isalnum(*c) || strchr("._=,:-+*", *c))
                                g_string_append_c(s, (char) *c);
                        else
                                g_string_append_printf(s, "%%%02X", *c);
                }
        }
        return g_string_free(s, FALSE);
}

/* One table row run against one filesystem type. */
typedef struct TypedCase {
        const char *fstype;
        const void *row;
} TypedCase;

static void add_typed(const char *prefix, const char *fstype, const char *name, const void *row,
                      GTestDataFunc fn) {
        TypedCase *c = g_new(TypedCase, 1);
        char *path = test_path(prefix, fstype, name);

        c->fstype = fstype;
        c->row = row;
        g_test_add_data_func_full(path, c, fn, g_free);
        g_free(path);
}

static void add_row(const char *prefix, const char *name, const void *row, GTestDataFunc fn) {
        char *path = test_path(prefix, name, NULL);

        g_test_add_data_func(path, row, fn);
        g_free(path);
}

/* ---- Filesystem types (docs/security.md, class 11) ----------------------------------------- */

static const char *const refused_fstypes[] = {
        "proc", "sysfs", "debugfs", "bpf", "configfs", "overlay", "fuse", "fuseblk",
        "fuse.sshfs", "nfs", "nfs4", "cifs", "smb3", "tmpfs", "ramfs", "devtmpfs", "devpts",
        "securityfs", "tracefs", "cgroup", "cgroup2", "hugetlbfs", "mqueue", "binfmt_misc",
        "autofs", "pstore", "efivarfs", "nsfs", "pipefs", "ext", "ext5", "fat", "msdos",
        "ntfs", "hfsplus", "f2fs", "jfs", "zfs", "nilfs2", "9p", "ceph", "made-up-fs",
        "usermount-would-load-a-module", "EXT4", "Ext4", "XFS", "ext4 ", " ext4", "ext4\n",
        "ext4,ro", "ext4/", "../ext4", "ext4\x7f", "\xff", "%s%n", "",
};

static void test_fstype_allowed(const void *data) {
        const char *fstype = data;
        PolicyInput in = input(fstype, NULL, 0);

        g_assert_true(fstype_allowed(fstype));
        expect_built(&in, forced_items(fstype), ATTR_BASE, false);
}

static void test_fstype_refused(const void *data) {
        const char *fstype = data;
        PolicyInput in = input(fstype, "", 0);

        g_assert_false(fstype_allowed(fstype));
        expect_refused(&in, -EPERM, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, "is not allowed");
        /* Also with options that would be fine on an allowed type. */
        in.options = "ro,noatime";
        expect_refused(&in, -EPERM, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, "is not allowed");
}

static void test_fstype_list(void) {
        const char *const *list = fstype_names();
        size_t n = 0;

        for (; list[n]; n++) {
                g_assert_cmpuint(n, <, G_N_ELEMENTS(allowed_fstypes));
                g_assert_cmpstr(list[n], ==, allowed_fstypes[n]);
                g_assert_true(fstype_allowed(list[n]));
        }
        g_assert_cmpuint(n, ==, G_N_ELEMENTS(allowed_fstypes));
}

static void test_fstype_null(void) {
        PolicyInput in = input(NULL, "", 0);

        g_assert_false(fstype_allowed(NULL));
        expect_refused(&in, -EPERM, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, "is not allowed");
}

/* A type name from the caller is escaped in the message, never interpreted. */
static void test_fstype_message_escaped(void) {
        PolicyInput in = input("\x1b[31m%s%n\n", "", 0);

        expect_refused(&in, -EPERM, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, "\\x1b[31m%s%n\\x0a");
}

/* ---- Syntax (docs/security.md, classes 8 and 10) --------------------------------------------- */

typedef struct SyntaxCase {
        const char *name;
        const char *options;
        UmErrorKind kind; /* OK, INVALID or NOT_ALLOWED */
        const char *message;
} SyntaxCase;

static const SyntaxCase syntax_cases[] = {
        /* Accepted by the syntax check (the filesystem decides about the keys later). */
        { "null", NULL, OK, NULL },
        { "empty", "", OK, NULL },
        { "flag", "ro", OK, NULL },
        { "flags", "ro,noatime,sync", OK, NULL },
        { "key-value", "commit=5", OK, NULL },
        { "unknown-key", "no-such-option", OK, NULL },
        { "key-charset", "A.b-c_9=x", OK, NULL },
        { "value-space", "subvol=my volume", OK, NULL },
        { "value-colon", "compress=zstd:3", OK, NULL },
        { "value-slash", "subvol=/a/b", OK, NULL },
        { "value-utf8-2", "subvol=\xc3\xa9t\xc3\xa9", OK, NULL },
        { "value-utf8-3", "subvol=\xe6\x97\xa5\xe6\x9c\xac", OK, NULL },
        { "value-utf8-4", "subvol=\xf0\x9f\x98\x80", OK, NULL },
        { "value-percent", "subvol=%s%n", OK, NULL },
        { "errors-remount-ro", "errors=remount-ro", OK, NULL },
        { "errors-other", "errors=whatever", OK, NULL },
        { "user-xattr-is-not-user", "user_xattr,nouser_xattr", OK, NULL },
        { "dev-prefix-is-not-dev", "devices,execute,suidx,xattr,smack,contexts", OK, NULL },

        /* Control characters, anywhere. */
        { "newline", "ro\nrw", INVALID, "control character (U+000A at byte 2)" },
        { "newline-end", "ro\n", INVALID, "control character" },
        { "newline-value", "subvol=a\nb", INVALID, "control character" },
        { "tab", "subvol=a\tb", INVALID, "control character (U+0009" },
        { "tab-alone", "\t", INVALID, "control character" },
        { "cr", "ro\r", INVALID, "control character (U+000D" },
        { "escape", "subvol=\x1b[31m", INVALID, "control character (U+001B" },
        { "soh", "\x01", INVALID, "control character (U+0001" },
        { "del", "subvol=\x7f", INVALID, "control character (U+007F" },
        { "c1-nel", "subvol=\xc2\x85", INVALID, "control character (U+0085" },
        { "c1-csi", "subvol=\xc2\x9b" "31m", INVALID, "control character (U+009B" },

        /* Not UTF-8. */
        { "byte-ff", "subvol=\xff", INVALID, "not valid UTF-8 (at byte 7)" },
        { "byte-fe", "\xfe", INVALID, "not valid UTF-8 (at byte 0)" },
        { "latin1", "subvol=caf\xe9", INVALID, "not valid UTF-8" },
        { "lone-continuation", "subvol=\x80", INVALID, "not valid UTF-8" },
        { "truncated-2", "subvol=\xc3", INVALID, "not valid UTF-8" },
        { "truncated-3", "subvol=\xe6\x97", INVALID, "not valid UTF-8" },
        { "overlong-slash-2", "subvol=\xc0\xaf", INVALID, "not valid UTF-8" },
        { "overlong-comma-2", "subvol=a\xc0\xac" "b", INVALID, "not valid UTF-8" },
        { "overlong-slash-3", "subvol=\xe0\x80\xaf", INVALID, "not valid UTF-8" },
        { "overlong-slash-4", "subvol=\xf0\x80\x80\xaf", INVALID, "not valid UTF-8" },
        { "overlong-nul-2", "subvol=\xc0\x80", INVALID, "not valid UTF-8" },
        { "surrogate", "subvol=\xed\xa0\x80", INVALID, "not valid UTF-8" },
        { "beyond-unicode", "subvol=\xf4\x90\x80\x80", INVALID, "not valid UTF-8" },
        { "five-byte", "subvol=\xf8\x88\x80\x80\x80", INVALID, "not valid UTF-8" },

        /* Quotes and escapes: nothing is ever unquoted or unescaped. */
        { "backslash-comma", "\\,", INVALID, "contains \\ at byte 0" },
        { "backslash-in-value", "subvol=a\\,b", INVALID, "quotes and backslashes" },
        { "backslash-end", "subvol=a\\", INVALID, "quotes and backslashes" },
        { "double-quotes", "subvol=\"a,b\"", INVALID, "contains \" at byte 7" },
        { "single-quotes", "subvol='a'", INVALID, "contains ' at byte 7" },
        { "quoted-flag", "\"ro\"", INVALID, "quotes and backslashes" },

        /* Empty items. */
        { "comma", ",", INVALID, "empty item" },
        { "commas", ",,", INVALID, "empty item" },
        { "leading-comma", ",ro", INVALID, "empty item" },
        { "trailing-comma", "ro,", INVALID, "empty item" },
        { "double-comma", "ro,,noatime", INVALID, "empty item" },

        /* Keys. */
        { "empty-key", "=v", INVALID, "option name '=v' is not valid" },
        { "only-equals", "=", INVALID, "is not valid" },
        { "key-space", "no atime", INVALID, "option name 'no atime' is not valid" },
        { "key-leading-space", " ro", INVALID, "is not valid" },
        { "key-trailing-space", "ro ", INVALID, "is not valid" },
        { "key-colon", "a:b=1", INVALID, "is not valid" },
        { "key-slash", "a/b", INVALID, "is not valid" },
        { "key-semicolon", "ro;rw", INVALID, "is not valid" },
        { "key-non-ascii", "k\xc3\xa9=1", INVALID, "is not valid" },
        { "key-format", "%n%s%x", INVALID, "option name '%n%s%x' is not valid" },
        { "key-64", "k123456789012345678901234567890123456789012345678901234567890123", OK,
          NULL },
        { "key-65", "k1234567890123456789012345678901234567890123456789012345678901234",
          INVALID, "longer than 64 bytes" },

        /* Values. */
        { "second-equals", "a=b=c", INVALID, "contains '='" },
        { "double-equals", "a==b", INVALID, "contains '='" },
        { "empty-value", "a=", INVALID, "option 'a' has an empty value" },
        { "empty-value-then-more", "a=,ro", INVALID, "empty value" },

        /* Duplicates, whatever the key (forced ones included). */
        { "duplicate-flag", "ro,ro", NOT_ALLOWED, "option 'ro' is given more than once" },
        { "duplicate-apart", "ro,noatime,ro", NOT_ALLOWED, "more than once" },
        { "duplicate-value", "commit=5,commit=5", NOT_ALLOWED, "more than once" },
        { "duplicate-values", "commit=5,commit=6", NOT_ALLOWED, "more than once" },
        { "duplicate-uid", "uid=1000,uid=0", NOT_ALLOWED, "option 'uid' is given more than once" },
        { "duplicate-unknown", "foo,foo", NOT_ALLOWED, "more than once" },
};

static void test_syntax(const void *data) {
        const SyntaxCase *c = data;
        UmError e = {};
        int r;

        r = policy_check_options_syntax(c->options, &e);
        if (c->kind == OK) {
                if (r < 0)
                        g_error("refused: %s", e.message);
                g_assert_cmpint(r, ==, 0);
                g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
                return;
        }
        assert_error(r, &e, c->kind == INVALID ? -EINVAL : -EPERM, c->kind, c->message);
}

/* policy_build_options() redoes the syntax check: a refused string is refused on every type. */
static void test_syntax_typed(const void *data) {
        const TypedCase *t = data;
        const SyntaxCase *c = t->row;
        PolicyInput in = input(t->fstype, c->options, IN_RO);

        expect_refused(&in, c->kind == INVALID ? -EINVAL : -EPERM, c->kind, NULL);
}

/* Exactly POLICY_OPTIONS_MAX distinct items pass; one byte more is a clean InvalidArgument. */
static void test_syntax_length_limit(void) {
        GString *s = g_string_new(NULL);
        UmError e = {};

        for (unsigned i = 0; s->len + 8 <= POLICY_OPTIONS_MAX; i++)
                g_string_append_printf(s, "%sk%05u", i ? "," : "", i);
        g_string_append_c(s, ',');
        while (s->len < POLICY_OPTIONS_MAX)
                g_string_append_c(s, 'z');
        g_assert_cmpuint(s->len, ==, POLICY_OPTIONS_MAX);
        g_assert_cmpint(policy_check_options_syntax(s->str, &e), ==, 0);

        g_string_append_c(s, 'z');
        assert_error(policy_check_options_syntax(s->str, &e), &e, -EINVAL, INVALID,
                     "too long: at most 4096 bytes");
        g_string_free(s, TRUE);
}

/* 64 KiB and more: refused without echoing any of it (docs/security.md, class 10). */
static void test_syntax_overlong(void) {
        const char *const fills[] = { "a", "ro,", "subvol=", "\xff", "\n" };

        for (size_t f = 0; f < G_N_ELEMENTS(fills); f++) {
                for (size_t size = 64 * 1024; size <= 1024 * 1024; size *= 16) {
                        GString *s = g_string_new(NULL);
                        UmError e = {};

                        while (s->len < size)
                                g_string_append(s, fills[f]);
                        assert_error(policy_check_options_syntax(s->str, &e), &e, -EINVAL,
                                     INVALID, "too long");
                        g_assert_cmpuint(strlen(e.message), <, 100);
                        g_assert_null(strstr(e.message, "aaaa"));
                        for (size_t i = 0; i < G_N_ELEMENTS(allowed_fstypes); i++) {
                                PolicyInput in = input(allowed_fstypes[i], s->str, 0);

                                expect_refused(&in, -EINVAL, INVALID, "too long");
                        }
                        g_string_free(s, TRUE);
                }
        }
}

/* A value of POLICY_VALUE_MAX bytes passes, one more does not, on every type. */
static void test_syntax_value_limit(void) {
        char *v255 = g_strnfill(POLICY_VALUE_MAX, 'v');
        char *ok = g_strdup_printf("subvol=%s", v255);
        char *bad = g_strdup_printf("subvol=%sv", v255);
        PolicyInput in = input("btrfs", ok, 0);
        char *items = g_strdup_printf("subvol=%s", v255);
        UmError e = {};

        g_assert_cmpint(policy_check_options_syntax(ok, &e), ==, 0);
        expect_built(&in, items, ATTR_BASE, false);
        assert_error(policy_check_options_syntax(bad, &e), &e, -EINVAL, INVALID,
                     "longer than 255 bytes");
        g_assert_null(strstr(e.message, "vvvv"));
        for (size_t i = 0; i < G_N_ELEMENTS(allowed_fstypes); i++) {
                in = input(allowed_fstypes[i], bad, 0);
                expect_refused(&in, -EINVAL, INVALID, "longer than 255 bytes");
        }
        g_free(v255);
        g_free(ok);
        g_free(bad);
        g_free(items);
}

/* A NULL UmError is allowed: the return value still tells. */
static void test_syntax_null_error(void) {
        PolicyInput in = input("ext4", "suid", 0);
        MountOptions o = sentinel();

        g_assert_cmpint(policy_check_options_syntax("ro\n", NULL), ==, -EINVAL);
        g_assert_cmpint(policy_check_options_syntax("dev", NULL), ==, -EPERM);
        g_assert_cmpint(policy_build_options(&in, &o, NULL), ==, -EPERM);
        assert_untouched(&o);
}

/* ---- Options refused on every filesystem (docs/security.md, classes 5, 6, 7, 9) -------------- */

typedef struct RefusedCase {
        const char *options;
        const char *shown;  /* how the message names the option */
        const char *reason; /* part of the sentence that says why */
} RefusedCase;

/* The start of the reason each refusal gives, as the user reads it. */
#define WHY_SUID "setuid and setgid bits"
#define WHY_DEV "device nodes are never honoured on user mounts"
#define WHY_EXEC "running programs from a mount is requested with the 'exec' parameter"
#define WHY_FSTAB "it is an /etc/fstab permission for mount(8)"
#define WHY_BOOT "it only steers 'mount -a'"
#define WHY_BIND "usermount mounts filesystems from devices and images"
#define WHY_PROPAGATION "mount propagation is decided by usermount"
#define WHY_X "x-* options are meant for user-space helpers"
#define WHY_HELPER "it would run a helper program as root"
#define WHY_LOOP "usermount sets up loop devices itself"
#define WHY_LABEL "security labels on user mounts are set by usermount only"

static const RefusedCase refused_cases[] = {
        { "suid", "suid", WHY_SUID },
        { "suid=1", "suid", WHY_SUID },
        { "SUID", "SUID", WHY_SUID },
        { "dev", "dev", WHY_DEV },
        { "Dev", "Dev", "device nodes are never honoured" },
        { "exec", "exec", WHY_EXEC },
        { "EXEC", "EXEC", "running programs from a mount is requested" },
        { "defaults", "defaults", "it stands for suid, dev and exec" },
        { "user", "user", WHY_FSTAB },
        { "user=alice", "user", WHY_FSTAB },
        { "users", "users", WHY_FSTAB },
        { "owner", "owner", WHY_FSTAB },
        { "group", "group", WHY_FSTAB },
        { "nouser", "nouser", WHY_FSTAB },
        { "auto", "auto", WHY_BOOT },
        { "noauto", "noauto", WHY_BOOT },
        { "_netdev", "_netdev", WHY_BOOT },
        { "nofail", "nofail", WHY_BOOT },
        { "remount", "remount", "a user mount cannot be changed once made" },
        { "bind", "bind", WHY_BIND },
        { "rbind", "rbind", WHY_BIND },
        { "move", "move", WHY_BIND },
        { "shared", "shared", WHY_PROPAGATION },
        { "rshared", "rshared", WHY_PROPAGATION },
        { "private", "private", WHY_PROPAGATION },
        { "rprivate", "rprivate", WHY_PROPAGATION },
        { "slave", "slave", WHY_PROPAGATION },
        { "rslave", "rslave", WHY_PROPAGATION },
        { "unbindable", "unbindable", WHY_PROPAGATION },
        { "runbindable", "runbindable", WHY_PROPAGATION },
        { "make-shared", "make-shared", WHY_PROPAGATION },
        { "make-rshared", "make-rshared", WHY_PROPAGATION },
        { "make-private", "make-private", WHY_PROPAGATION },
        { "make-rprivate", "make-rprivate", WHY_PROPAGATION },
        { "make-slave", "make-slave", WHY_PROPAGATION },
        { "make-rslave", "make-rslave", WHY_PROPAGATION },
        { "make-unbindable", "make-unbindable", WHY_PROPAGATION },
        { "make-runbindable", "make-runbindable", WHY_PROPAGATION },
        { "Make-Private", "Make-Private", WHY_PROPAGATION },
        { "x-gvfs-show", "x-gvfs-show", WHY_X },
        { "x-systemd.automount", "x-systemd.automount", WHY_X },
        { "x-foo=bar", "x-foo", WHY_X },
        { "X-mount.mkdir", "X-mount.mkdir", WHY_X },
        { "X-mount.mkdir=0700", "X-mount.mkdir", WHY_X },
        { "X-mount.owner=root", "X-mount.owner", WHY_X },
        { "X-mount.idmap=u:0:1000:1", "X-mount.idmap", WHY_X },
        { "X-MOUNT.SUBDIR=a", "X-MOUNT.SUBDIR", WHY_X },
        { "x-", "x-", WHY_X },
        { "uhelper=udisks2", "uhelper", WHY_HELPER },
        { "helper=/bin/sh", "helper", WHY_HELPER },
        { "loop", "loop", WHY_LOOP },
        { "loop=/dev/loop0", "loop", WHY_LOOP },
        { "offset=4096", "offset", WHY_LOOP },
        { "sizelimit=1048576", "sizelimit", WHY_LOOP },
        { "encryption=aes", "encryption", WHY_LOOP },
        { "context=system_u:object_r:tmp_t:s0", "context", WHY_LABEL },
        { "fscontext=system_u:object_r:tmp_t:s0", "fscontext", WHY_LABEL },
        { "defcontext=system_u:object_r:tmp_t:s0", "defcontext", WHY_LABEL },
        { "rootcontext=system_u:object_r:tmp_t:s0", "rootcontext", WHY_LABEL },
        { "seclabel", "seclabel", WHY_LABEL },
        { "smackfsroot=*", "smackfsroot", WHY_LABEL },
        { "smackfsdef=_", "smackfsdef", WHY_LABEL },
        { "smackfshat=^", "smackfshat", WHY_LABEL },
        { "smackfsfloor=_", "smackfsfloor", WHY_LABEL },
        { "smackfstransmute=x", "smackfstransmute", WHY_LABEL },
        /* The kernel's LSM option parsers compare exactly, but no spelling may slip through. */
        { "CONTEXT=system_u:object_r:tmp_t:s0", "CONTEXT", WHY_LABEL },
        { "RootContext=system_u:object_r:tmp_t:s0", "RootContext", WHY_LABEL },
        { "SmackFsRoot=_", "SmackFsRoot", WHY_LABEL },
        { "smackfsanything=x", "smackfsanything", WHY_LABEL },
        { "errors=panic", "errors=panic", "a damaged filesystem would crash the whole system" },
        { "errors=continue", "errors=continue", "the filesystem would keep writing after it" },
        { "Errors=PANIC", "Errors=PANIC", "a damaged filesystem would crash the whole system" },
        /* Refused first, whatever comes with it. */
        { "ro,noatime,dev", "dev", "device nodes are never honoured" },
        { "suid,suid", "suid", WHY_SUID },
};

static char *refused_message(const RefusedCase *c) {
        return g_strdup_printf("option '%s' is not allowed: %s", c->shown, c->reason);
}

static void test_refused_syntax(const void *data) {
        const RefusedCase *c = data;
        char *message = refused_message(c);
        UmError e = {};

        assert_error(policy_check_options_syntax(c->options, &e), &e, -EPERM, NOT_ALLOWED,
                     message);
        g_free(message);
}

static void test_refused_typed(const void *data) {
        const TypedCase *t = data;
        const RefusedCase *c = t->row;
        char *message = refused_message(c);
        const unsigned flag_sets[] = { 0, IN_RO, IN_SOURCE_RO, IN_EXEC, IN_RO | IN_EXEC };

        for (size_t i = 0; i < G_N_ELEMENTS(flag_sets); i++) {
                PolicyInput in = input(t->fstype, c->options, flag_sets[i]);

                expect_refused(&in, -EPERM, NOT_ALLOWED, message);
        }
        g_free(message);
}

/* "rw" on a read-only source, on every type (docs/security.md, class 5). */
static void test_rw_on_read_only_source(const void *data) {
        const char *fstype = data;
        const char *const strings[] = { "rw", "noatime,rw", "rw,ro", "ro,rw" };

        for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) {
                PolicyInput in = input(fstype, strings[i], IN_SOURCE_RO);

                expect_refused(&in, -EPERM, NOT_ALLOWED,
                               "option 'rw' is not allowed: the source is read-only");
                /* Even if the edge forgot to pass the read-only request along. */
                in.read_only = false;
                expect_refused(&in, -EPERM, NOT_ALLOWED, "the source is read-only");
        }
}

/* A read-only source gives a read-only mount even if the edge forgot to ask for one. */
static void test_read_only_source_wins(const void *data) {
        const char *fstype = data;
        PolicyInput in = input(fstype, "noatime", IN_SOURCE_RO);

        in.read_only = false;
        expect_built(&in, forced_items(fstype),
                     ATTR_BASE | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME, true);
}

/* ---- Forced options (docs/security.md, class 9) -------------------------------------------- */

static void test_forced_items(const void *data) {
        const char *fstype = data;
        const struct {
                uid_t uid;
                gid_t gid;
                const char *owner_items;
        } ids[] = {
                { UID, GID, "uid=1000,gid=1001" },
                { 0, 0, "uid=0,gid=0" },
                { 4294967294u, 65534, "uid=4294967294,gid=65534" },
        };

        /* The caller's own ids, whatever they are, on types without Unix owners. */
        for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
                PolicyInput in = input(fstype, "", 0);

                in.uid = ids[i].uid;
                in.gid = ids[i].gid;
                char *items = join_items((const char *const[]){ forced_first(fstype),
                        is_owner_type(fstype) ? ids[i].owner_items : forced_last(fstype), NULL });

                expect_built(&in, items, ATTR_BASE, false);
                g_free(items);
        }
}

static const char *const forced_owner_attempts[] = {
        "uid=1000", "uid=0", "gid=1001", "gid=0", "uid=1000,uid=0", "uid=1000,uid=1000",
        "gid=0,gid=0", "noatime,uid=0", "ro,gid=1001", "uid=1000,gid=1001",
};

static const char *const forced_errors_attempts[] = {
        "errors=remount-ro", "errors=remount-ro,errors=remount-ro", "noatime,errors=remount-ro",
        "errors=ro", "errors",
};

/* Giving a forced key is refused with the reason, also with the forced value, also twice. */
static void test_forced_override(const void *data) {
        const char *fstype = data;
        const char *forced = forced_items(fstype);

        for (size_t i = 0; i < G_N_ELEMENTS(forced_owner_attempts); i++) {
                PolicyInput in = input(fstype, forced_owner_attempts[i], 0);

                if (is_owner_type(fstype))
                        expect_refused(&in, -EPERM, NOT_ALLOWED,
                                       "is set by usermount and cannot be given: the filesystem "
                                       "has no Unix owners");
                else
                        expect_refused(&in, -EPERM, NOT_ALLOWED, "is not supported by usermount");
        }
        for (size_t i = 0; i < G_N_ELEMENTS(forced_errors_attempts); i++) {
                PolicyInput in = input(fstype, forced_errors_attempts[i], 0);

                if (g_str_has_prefix(forced, "errors="))
                        expect_refused(&in, -EPERM, NOT_ALLOWED,
                                       "option 'errors' is set by usermount and cannot be given: "
                                       "ext2, ext3 and ext4 are always mounted with "
                                       "errors=remount-ro");
                else
                        expect_refused(&in, -EPERM, NOT_ALLOWED, "is not supported by usermount");
        }
}

/* The message names the type. */
static void test_forced_message(void) {
        PolicyInput in = input("vfat", "uid=0", 0);

        expect_refused(&in, -EPERM, NOT_ALLOWED, "vfat option 'uid' is set by usermount");
        in = input("ext3", "errors=remount-ro", 0);
        expect_refused(&in, -EPERM, NOT_ALLOWED, "ext3 option 'errors' is set by usermount");
        in = input("udf", "gid=5", 0);
        expect_refused(&in, -EPERM, NOT_ALLOWED, "udf option 'gid' is set by usermount");
}

/* ---- Generic options, read-only and exec, on every type ------------------------------------- */

typedef struct GenericCase {
        const char *name;
        const char *options;
        unsigned flags;
        UmErrorKind kind;   /* OK, INVALID or NOT_ALLOWED */
        const char *items;  /* the caller's items; forced ones are added per type */
        uint64_t attr;      /* on top of nodev and nosuid */
        bool read_only;
        const char *message;
} GenericCase;

#define NOEXEC MOUNT_ATTR_NOEXEC
#define RDONLY MOUNT_ATTR_RDONLY

static const GenericCase generic_cases[] = {
        { "nothing", "", 0, OK, "", NOEXEC, false, NULL },
        { "null", NULL, 0, OK, "", NOEXEC, false, NULL },
        { "ro", "ro", 0, OK, "", NOEXEC | RDONLY, true, NULL },
        { "ro-requested", "", IN_RO, OK, "", NOEXEC | RDONLY, true, NULL },
        { "ro-requested-and-given", "ro", IN_RO, OK, "", NOEXEC | RDONLY, true, NULL },
        { "ro-source", "", IN_SOURCE_RO, OK, "", NOEXEC | RDONLY, true, NULL },
        { "ro-source-and-given", "ro", IN_SOURCE_RO, OK, "", NOEXEC | RDONLY, true, NULL },
        { "rw", "rw", 0, OK, "", NOEXEC, false, NULL },
        { "rw-requested-ro", "rw", IN_RO, INVALID, NULL, 0, false,
          "option 'rw' contradicts the read-only mount that was requested" },
        { "rw-source-ro", "rw", IN_SOURCE_RO, NOT_ALLOWED, NULL, 0, false,
          "option 'rw' is not allowed: the source is read-only" },
        { "ro-rw", "ro,rw", 0, INVALID, NULL, 0, false, "'ro' and 'rw' contradict each other" },
        { "rw-ro", "rw,ro", 0, INVALID, NULL, 0, false, "'ro' and 'rw' contradict each other" },
        { "ro-value", "ro=1", 0, INVALID, NULL, 0, false, "option 'ro' takes no value" },
        { "rw-value", "rw=0", 0, INVALID, NULL, 0, false, "option 'rw' takes no value" },
        { "ro-twice", "ro,ro", 0, NOT_ALLOWED, NULL, 0, false, "given more than once" },
        { "ro-uppercase", "RO", 0, NOT_ALLOWED, NULL, 0, false, "option 'RO' is not supported" },

        { "exec", "", IN_EXEC, OK, "", 0, false, NULL },
        { "exec-ro", "ro", IN_EXEC, OK, "", RDONLY, true, NULL },
        { "noexec", "noexec", 0, OK, "", NOEXEC, false, NULL },
        { "noexec-with-exec", "noexec", IN_EXEC, INVALID, NULL, 0, false,
          "option 'noexec' contradicts the exec parameter" },
        { "nosuid-nodev", "nosuid,nodev", 0, OK, "", NOEXEC, false, NULL },
        { "nosuid-nodev-exec", "nosuid,nodev", IN_EXEC, OK, "", 0, false, NULL },
        { "nosuid-nodev-noexec", "nosuid,nodev,noexec", 0, OK, "", NOEXEC, false, NULL },
        { "nosuid-value", "nosuid=0", 0, INVALID, NULL, 0, false, "takes no value" },

        { "noatime", "noatime", 0, OK, "", NOEXEC | MOUNT_ATTR_NOATIME, false, NULL },
        { "relatime", "relatime", 0, OK, "", NOEXEC | MOUNT_ATTR_RELATIME, false, NULL },
        { "strictatime", "strictatime", 0, OK, "", NOEXEC | MOUNT_ATTR_STRICTATIME, false, NULL },
        { "nodiratime", "nodiratime", 0, OK, "", NOEXEC | MOUNT_ATTR_NODIRATIME, false, NULL },
        { "noatime-nodiratime", "noatime,nodiratime", 0, OK, "",
          NOEXEC | MOUNT_ATTR_NOATIME | MOUNT_ATTR_NODIRATIME, false, NULL },
        { "strictatime-nodiratime", "nodiratime,strictatime", 0, OK, "",
          NOEXEC | MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NODIRATIME, false, NULL },
        { "noatime-relatime", "noatime,relatime", 0, INVALID, NULL, 0, false,
          "options 'noatime' and 'relatime' contradict each other" },
        { "relatime-strictatime", "relatime,strictatime", 0, INVALID, NULL, 0, false,
          "at most one of noatime, relatime and strictatime" },
        { "strictatime-noatime", "strictatime,noatime", 0, INVALID, NULL, 0, false,
          "contradict each other" },
        { "noatime-twice", "noatime,noatime", 0, NOT_ALLOWED, NULL, 0, false,
          "option 'noatime' is given more than once" },
        { "atime", "atime", 0, NOT_ALLOWED, NULL, 0, false, "option 'atime' is not supported" },
        { "noatime-value", "noatime=1", 0, INVALID, NULL, 0, false, "takes no value" },

        { "sync", "sync", 0, OK, "sync", NOEXEC, false, NULL },
        { "dirsync", "dirsync", 0, OK, "dirsync", NOEXEC, false, NULL },
        { "lazytime", "lazytime", 0, OK, "lazytime", NOEXEC, false, NULL },
        { "sb-flags-in-order", "lazytime,noatime,sync,ro,dirsync", 0, OK,
          "lazytime,sync,dirsync", NOEXEC | RDONLY | MOUNT_ATTR_NOATIME, true, NULL },
        { "everything", "nodev,nosuid,noexec,ro,strictatime,nodiratime,sync,dirsync,lazytime",
          IN_SOURCE_RO, OK, "sync,dirsync,lazytime",
          NOEXEC | RDONLY | MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NODIRATIME, true, NULL },
        { "sync-value", "sync=1", 0, INVALID, NULL, 0, false, "takes no value" },
        { "async", "async", 0, NOT_ALLOWED, NULL, 0, false, "option 'async' is not supported" },
        { "nosymfollow", "nosymfollow", 0, NOT_ALLOWED, NULL, 0, false, "is not supported" },
};

static void test_generic(const void *data) {
        const TypedCase *t = data;
        const GenericCase *c = t->row;
        PolicyInput in = input(t->fstype, c->options, c->flags);
        char *items;

        if (c->kind != OK) {
                expect_refused(&in, c->kind == INVALID ? -EINVAL : -EPERM, c->kind, c->message);
                return;
        }
        items = with_forced(t->fstype, c->items);
        expect_built(&in, items, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | c->attr, c->read_only);
        g_free(items);
}

/* ---- Per-type values ------------------------------------------------------------------------ */

typedef struct ValueCase {
        const char *fstype;
        const char *options;
        unsigned flags;
        UmErrorKind kind;   /* OK, INVALID or NOT_ALLOWED */
        const char *items;  /* the caller's items; forced ones are added */
        const char *message;
} ValueCase;

static const ValueCase value_cases[] = {
        /* Numbers. */
        { "ext4", "commit=0", 0, OK, "commit=0", NULL },
        { "ext4", "commit=86400", 0, OK, "commit=86400", NULL },
        { "ext4", "commit=86401", 0, INVALID, NULL,
          "ext4 option 'commit' needs a whole number from 0 to 86400, not '86401'" },
        { "ext4", "commit=-1", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=-0", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=+5", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=0x10", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=1.5", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=5s", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit= 5", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit=99999999999999999999999", 0, INVALID, NULL, "needs a whole number" },
        { "ext4", "commit", 0, INVALID, NULL, "ext4 option 'commit' needs a value" },
        { "ext3", "commit=5", 0, OK, "commit=5", NULL },
        { "btrfs", "commit=300", 0, OK, "commit=300", NULL },
        { "btrfs", "commit=86401", 0, INVALID, NULL, "needs a whole number" },
        { "xfs", "logbufs=2", 0, OK, "logbufs=2", NULL },
        { "xfs", "logbufs=8", 0, OK, "logbufs=8", NULL },
        { "xfs", "logbufs=1", 0, INVALID, NULL, "from 2 to 8" },
        { "xfs", "logbufs=9", 0, INVALID, NULL, "from 2 to 8" },
        { "btrfs", "subvolid=0", 0, OK, "subvolid=0", NULL },
        { "btrfs", "subvolid=256", 0, OK, "subvolid=256", NULL },
        { "btrfs", "subvolid=-1", 0, INVALID, NULL, "needs a whole number" },
        { "btrfs", "subvolid=abc", 0, INVALID, NULL, "needs a whole number" },
        { "vfat", "codepage=437", 0, OK, "codepage=437", NULL },
        { "vfat", "codepage=0", 0, INVALID, NULL, "from 1 to 9999" },
        { "vfat", "codepage=10000", 0, INVALID, NULL, "from 1 to 9999" },
        { "vfat", "time_offset=-1440", 0, OK, "time_offset=-1440", NULL },
        { "vfat", "time_offset=1440", 0, OK, "time_offset=1440", NULL },
        { "vfat", "time_offset=-1441", 0, INVALID, NULL, "from -1440 to 1440" },
        { "vfat", "time_offset=-", 0, INVALID, NULL, "from -1440 to 1440" },
        { "exfat", "time_offset=-60", 0, OK, "time_offset=-60", NULL },
        { "exfat", "time_offset=1441", 0, INVALID, NULL, "from -1440 to 1440" },
        { "iso9660", "session=0", 0, OK, "session=0", NULL },
        { "iso9660", "session=99", 0, OK, "session=99", NULL },
        { "iso9660", "session=100", 0, INVALID, NULL, "from 0 to 99" },
        { "iso9660", "sbsector=4294967295", 0, OK, "sbsector=4294967295", NULL },
        { "iso9660", "sbsector=4294967296", 0, INVALID, NULL, "from 0 to 4294967295" },
        { "udf", "session=100", 0, OK, "session=100", NULL },
        { "udf", "anchor=4294967296", 0, INVALID, NULL, "from 0 to 4294967295" },
        { "udf", "lastblock=-5", 0, INVALID, NULL, "needs a whole number" },

        /* Octal modes. */
        { "vfat", "dmask=0", 0, OK, "dmask=0", NULL },
        { "vfat", "dmask=022", 0, OK, "dmask=022", NULL },
        { "vfat", "dmask=0777", 0, OK, "dmask=0777", NULL },
        { "vfat", "dmask=1000", 0, INVALID, NULL,
          "vfat option 'dmask' needs an octal mode from 0 to 777, not '1000'" },
        { "vfat", "dmask=8", 0, INVALID, NULL, "needs an octal mode" },
        { "vfat", "dmask=-22", 0, INVALID, NULL, "needs an octal mode" },
        { "vfat", "dmask=0x1ff", 0, INVALID, NULL, "needs an octal mode" },
        { "exfat", "fmask=0133", 0, OK, "fmask=0133", NULL },
        { "ntfs3", "dmask=7777", 0, INVALID, NULL, "needs an octal mode" },
        { "iso9660", "mode=0444,dmode=0555", 0, OK, "mode=0444,dmode=0555", NULL },
        { "iso9660", "mode=4755", 0, INVALID, NULL, "needs an octal mode" },
        { "udf", "mode=06755", 0, INVALID, NULL, "needs an octal mode" },

        /* Sizes. */
        { "xfs", "logbsize=16k", 0, OK, "logbsize=16k", NULL },
        { "xfs", "logbsize=256K", 0, OK, "logbsize=256K", NULL },
        { "xfs", "logbsize=32768", 0, OK, "logbsize=32768", NULL },
        { "xfs", "logbsize=15k", 0, INVALID, NULL,
          "xfs option 'logbsize' needs a size from 16384 to 262144 bytes" },
        { "xfs", "logbsize=512k", 0, INVALID, NULL, "needs a size" },
        { "xfs", "logbsize=1m", 0, INVALID, NULL, "needs a size" },
        { "xfs", "logbsize=k", 0, INVALID, NULL, "needs a size" },
        { "xfs", "logbsize=32kk", 0, INVALID, NULL, "needs a size" },
        { "xfs", "logbsize=32t", 0, INVALID, NULL, "needs a size" },
        { "xfs", "logbsize=-32k", 0, INVALID, NULL, "needs a size" },
        { "xfs", "allocsize=4k", 0, OK, "allocsize=4k", NULL },
        { "xfs", "allocsize=1g", 0, OK, "allocsize=1g", NULL },
        { "xfs", "allocsize=1024M", 0, OK, "allocsize=1024M", NULL },
        { "xfs", "allocsize=2g", 0, INVALID, NULL, "needs a size" },
        { "xfs", "allocsize=99999999999999g", 0, INVALID, NULL, "needs a size" },
        { "xfs", "allocsize=1", 0, INVALID, NULL, "needs a size" },

        /* Enumerations. */
        { "ext4", "data=ordered", 0, OK, "data=ordered", NULL },
        { "ext4", "data=journal", 0, OK, "data=journal", NULL },
        { "ext4", "data=writeback", 0, OK, "data=writeback", NULL },
        { "ext4", "data=Ordered", 0, INVALID, NULL,
          "ext4 option 'data' must be one of ordered, journal, writeback, not 'Ordered'" },
        { "ext4", "data=%s%n", 0, INVALID, NULL, "not '%s%n'" },
        { "ext4", "data", 0, INVALID, NULL, "needs a value" },
        { "btrfs", "space_cache=v2", 0, OK, "space_cache=v2", NULL },
        { "btrfs", "space_cache=v1", 0, INVALID, NULL, "must be one of v2" },
        { "btrfs", "space_cache", 0, INVALID, NULL, "needs a value" },
        { "btrfs", "discard", 0, OK, "discard", NULL },
        { "btrfs", "discard=sync", 0, OK, "discard=sync", NULL },
        { "btrfs", "discard=async", 0, OK, "discard=async", NULL },
        { "btrfs", "discard=on", 0, INVALID, NULL, "must be one of sync, async" },
        { "erofs", "cache_strategy=disabled", 0, OK, "cache_strategy=disabled", NULL },
        { "erofs", "cache_strategy=readahead", 0, OK, "cache_strategy=readahead", NULL },
        { "erofs", "cache_strategy=readaround", 0, OK, "cache_strategy=readaround", NULL },
        { "erofs", "cache_strategy=all", 0, INVALID, NULL, "must be one of" },
        { "vfat", "shortname=lower", 0, OK, "shortname=lower", NULL },
        { "vfat", "shortname=win95", 0, OK, "shortname=win95", NULL },
        { "vfat", "shortname=winnt", 0, OK, "shortname=winnt", NULL },
        { "vfat", "shortname=mixed", 0, OK, "shortname=mixed", NULL },
        { "vfat", "shortname=upper", 0, INVALID, NULL, "must be one of" },
        { "vfat", "tz=UTC", 0, OK, "tz=UTC", NULL },
        { "vfat", "tz=utc", 0, INVALID, NULL, "must be one of UTC" },
        { "vfat", "tz=Europe:Paris", 0, INVALID, NULL, "must be one of UTC" },
        { "iso9660", "check=relaxed", 0, OK, "check=relaxed", NULL },
        { "iso9660", "check=strict", 0, OK, "check=strict", NULL },
        { "iso9660", "check=r", 0, INVALID, NULL, "must be one of relaxed, strict" },
        { "iso9660", "map=off", 0, OK, "map=off", NULL },
        { "iso9660", "map=normal", 0, OK, "map=normal", NULL },
        { "iso9660", "map=acorn", 0, OK, "map=acorn", NULL },
        { "iso9660", "map=n", 0, INVALID, NULL, "must be one of off, normal, acorn" },

        /* Character set names. */
        { "vfat", "iocharset=utf8", 0, OK, "iocharset=utf8", NULL },
        { "vfat", "iocharset=iso8859-15", 0, OK, "iocharset=iso8859-15", NULL },
        { "exfat", "iocharset=cp437", 0, OK, "iocharset=cp437", NULL },
        { "ntfs3", "iocharset=koi8_r", 0, OK, "iocharset=koi8_r", NULL },
        { "iso9660", "iocharset=utf8", 0, OK, "iocharset=utf8", NULL },
        { "udf", "iocharset=utf8", 0, OK, "iocharset=utf8", NULL },
        { "vfat", "iocharset=../../x", 0, INVALID, NULL,
          "vfat option 'iocharset' needs a character set name" },
        { "vfat", "iocharset=utf.8", 0, INVALID, NULL, "needs a character set name" },
        { "vfat", "iocharset=a b", 0, INVALID, NULL, "needs a character set name" },
        { "vfat", "iocharset=\xc3\xa9", 0, INVALID, NULL, "needs a character set name" },
        { "vfat", "iocharset=abcdefghijklmnopqrstuvwxyz012345", 0, OK,
          "iocharset=abcdefghijklmnopqrstuvwxyz012345", NULL },
        { "vfat", "iocharset=abcdefghijklmnopqrstuvwxyz0123456", 0, INVALID, NULL,
          "at most 32" },
        { "vfat", "iocharset", 0, INVALID, NULL, "needs a value" },

        /* btrfs compression. */
        { "btrfs", "compress", 0, OK, "compress", NULL },
        { "btrfs", "compress=zlib", 0, OK, "compress=zlib", NULL },
        { "btrfs", "compress=zlib:1", 0, OK, "compress=zlib:1", NULL },
        { "btrfs", "compress=zlib:9", 0, OK, "compress=zlib:9", NULL },
        { "btrfs", "compress=lzo", 0, OK, "compress=lzo", NULL },
        { "btrfs", "compress=zstd", 0, OK, "compress=zstd", NULL },
        { "btrfs", "compress=zstd:1", 0, OK, "compress=zstd:1", NULL },
        { "btrfs", "compress=zstd:15", 0, OK, "compress=zstd:15", NULL },
        { "btrfs", "compress-force", 0, OK, "compress-force", NULL },
        { "btrfs", "compress-force=zstd:3", 0, OK, "compress-force=zstd:3", NULL },
        { "btrfs", "compress=zlib:0", 0, INVALID, NULL,
          "btrfs option 'compress' must be zlib, lzo or zstd" },
        { "btrfs", "compress=zlib:10", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zstd:16", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zstd:-1", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zstd:", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zstd:3:1", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=lzo:1", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zst", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=zstdx", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress=no", 0, INVALID, NULL, "must be zlib, lzo or zstd" },
        { "btrfs", "compress-force=zlib:10", 0, INVALID, NULL,
          "btrfs option 'compress-force' must be" },

        /* btrfs subvolumes. */
        { "btrfs", "subvol=home", 0, OK, "subvol=home", NULL },
        { "btrfs", "subvol=/", 0, OK, "subvol=/", NULL },
        { "btrfs", "subvol=/@home/alice", 0, OK, "subvol=/@home/alice", NULL },
        { "btrfs", "subvol=a/./b", 0, OK, "subvol=a/./b", NULL },
        { "btrfs", "subvol=..a/b..", 0, OK, "subvol=..a/b..", NULL },
        { "btrfs", "subvol=my volume", 0, OK, "subvol=my volume", NULL },
        { "btrfs", "subvol=\xc3\xa9t\xc3\xa9", 0, OK, "subvol=\xc3\xa9t\xc3\xa9", NULL },
        { "btrfs", "subvol=..", 0, NOT_ALLOWED, NULL,
          "btrfs option 'subvol' must name a subvolume inside the filesystem" },
        { "btrfs", "subvol=/..", 0, NOT_ALLOWED, NULL, "'..' components" },
        { "btrfs", "subvol=../x", 0, NOT_ALLOWED, NULL, "'..' components" },
        { "btrfs", "subvol=a/../../b", 0, NOT_ALLOWED, NULL, "'..' components" },
        { "btrfs", "subvol=a/..", 0, NOT_ALLOWED, NULL, "'..' components" },
        { "btrfs", "subvol=a//..//b", 0, NOT_ALLOWED, NULL, "'..' components" },
        { "btrfs", "subvol", 0, INVALID, NULL, "needs a value" },

        /* Flags take no value. */
        { "ext4", "acl=1", 0, INVALID, NULL, "ext4 option 'acl' takes no value" },
        { "ext4", "barrier=1", 0, INVALID, NULL, "takes no value" },
        { "ext4", "discard=async", 0, INVALID, NULL, "takes no value" },
        { "xfs", "inode64=yes", 0, INVALID, NULL, "xfs option 'inode64' takes no value" },
        { "vfat", "utf8=1", 0, INVALID, NULL, "takes no value" },
        { "ntfs3", "acl=0", 0, INVALID, NULL, "takes no value" },

        /* Options that would reach devices the caller was never checked for. */
        { "btrfs", "device=/dev/sda", 0, NOT_ALLOWED, NULL,
          "btrfs option 'device' is not allowed: it would make the filesystem open further "
          "devices" },
        { "btrfs", "device", 0, NOT_ALLOWED, NULL, "further devices" },
        { "erofs", "device=/dev/sdb", 0, NOT_ALLOWED, NULL,
          "erofs option 'device' is not allowed" },
        { "erofs", "fsid=abc", 0, NOT_ALLOWED, NULL, "erofs option 'fsid' is not allowed" },
        { "erofs", "domain_id=abc", 0, NOT_ALLOWED, NULL,
          "erofs option 'domain_id' is not allowed" },

        /* Not supported, named with the type. */
        { "xfs", "foo", 0, NOT_ALLOWED, NULL, "xfs option 'foo' is not supported by usermount" },
        { "squashfs", "threads=multi", 0, NOT_ALLOWED, NULL,
          "squashfs option 'threads' is not supported by usermount" },
        { "squashfs", "errors=remount-ro", 0, NOT_ALLOWED, NULL,
          "squashfs option 'errors' is not supported" },
        { "ext2", "data=ordered", 0, NOT_ALLOWED, NULL, "ext2 option 'data' is not supported" },
        { "ext4", "norecovery", IN_RO, NOT_ALLOWED, NULL, "ext4 option 'norecovery' is not" },
        { "vfat", "errors=remount-ro", 0, NOT_ALLOWED, NULL,
          "vfat option 'errors' is not supported" },
        { "ext4", "ACL", 0, NOT_ALLOWED, NULL, "ext4 option 'ACL' is not supported" },

        /* Order: the caller's items as given, the forced ones last. */
        { "ext4", "user_xattr,noacl,acl", 0, OK, "user_xattr,noacl,acl", NULL },
        { "vfat", "utf8,sync,fmask=077,flush", 0, OK, "utf8,sync,fmask=077,flush", NULL },
        { "btrfs", "ssd,compress=zstd:3,noatime,subvol=@", 0, OK, "ssd,compress=zstd:3,subvol=@",
          NULL },

        /* Options allowed only on read-only mounts. */
        { "ext4", "noload", 0, NOT_ALLOWED, NULL,
          "ext4 option 'noload' is only allowed on read-only mounts" },
        { "ext3", "noload", 0, NOT_ALLOWED, NULL, "only allowed on read-only mounts" },
        { "ext4", "noload", IN_EXEC, NOT_ALLOWED, NULL, "only allowed on read-only mounts" },
        { "ext4", "noload,ro", 0, OK, "noload", NULL },
        { "ext4", "ro,noload", 0, OK, "noload", NULL },
        { "ext4", "noload", IN_RO, OK, "noload", NULL },
        { "ext4", "noload", IN_SOURCE_RO, OK, "noload", NULL },
        { "ext4", "noload,rw", 0, NOT_ALLOWED, NULL, "only allowed on read-only mounts" },
        { "ext2", "noload", IN_RO, NOT_ALLOWED, NULL, "ext2 option 'noload' is not supported" },
        { "xfs", "norecovery", 0, NOT_ALLOWED, NULL,
          "xfs option 'norecovery' is only allowed on read-only mounts" },
        { "xfs", "norecovery,ro", 0, OK, "norecovery", NULL },
        { "xfs", "norecovery", IN_RO, OK, "norecovery", NULL },
        { "xfs", "norecovery=1", IN_RO, INVALID, NULL, "takes no value" },

        /* A bad value is refused even when another error would follow. */
        { "ext4", "commit=x,suid", 0, NOT_ALLOWED, NULL, "option 'suid' is not allowed" },
        { "ext4", "commit=x,commit=5", 0, INVALID, NULL, "needs a whole number" },
};

/* true if the comma-separated options contain this item. */
static bool has_item(const char *options, const char *item) {
        char **v = g_strsplit(options, ",", -1);
        bool found = g_strv_contains((const char *const *) v, item);

        g_strfreev(v);
        return found;
}

static void test_value(const void *data) {
        const TypedCase *t = data;
        const ValueCase *c = t->row;
        PolicyInput in = input(c->fstype, c->options, c->flags);
        bool read_only = (c->flags & (IN_RO | IN_SOURCE_RO)) || has_item(c->options, "ro");
        uint64_t attr = ATTR_BASE;
        char *items;

        if (c->kind != OK) {
                expect_refused(&in, c->kind == INVALID ? -EINVAL : -EPERM, c->kind, c->message);
                return;
        }
        items = with_forced(c->fstype, c->items);
        if (read_only)
                attr |= MOUNT_ATTR_RDONLY;
        if (has_item(c->options, "noatime"))
                attr |= MOUNT_ATTR_NOATIME;
        expect_built(&in, items, attr, read_only);
        g_free(items);
}

/* ---- The acceptance matrix: every known option on every type -------------------------------- */

/*
 * The options each type must accept, one sample value each. Every sample of every type is
 * tried on every type: it must produce exactly that item there, and be refused everywhere
 * else. Read-only requests, so that options allowed only read-only are in the matrix too.
 */
typedef struct TypeSamples {
        const char *fstype;
        const char *const *accepted;
} TypeSamples;

#define EXT34_SAMPLES                                                                           \
        "commit=5", "data=ordered", "data=journal", "data=writeback", "barrier", "nobarrier", \
        "discard", "nodiscard", "journal_checksum", "nodelalloc", "noauto_da_alloc",           \
        "dioread_nolock", "acl", "noacl", "user_xattr", "noload", NULL

/* umask= is forced to the caller's umask; dmask= and fmask= refine it. */
#define OWNER_MASKS "dmask=022", "fmask=133"

static const TypeSamples type_samples[] = {
        { "ext2", (const char *const[]){ "acl", "noacl", "user_xattr", NULL } },
        { "ext3", (const char *const[]){ EXT34_SAMPLES } },
        { "ext4", (const char *const[]){ EXT34_SAMPLES } },
        { "xfs", (const char *const[]){ "discard", "nodiscard", "inode32", "inode64",
                                        "norecovery", "logbufs=8", "logbsize=32k",
                                        "allocsize=64k", "largeio", "nolargeio", "wsync",
                                        NULL } },
        { "btrfs", (const char *const[]){ "compress", "compress=zstd:3", "compress=lzo",
                                          "compress-force", "compress-force=zlib:9",
                                          "subvol=/home", "subvolid=256", "space_cache=v2",
                                          "nospace_cache", "ssd", "nossd", "discard",
                                          "discard=sync", "discard=async", "nodiscard",
                                          "autodefrag", "noautodefrag", "commit=5",
                                          "flushoncommit", "noflushoncommit", NULL } },
        { "squashfs", (const char *const[]){ NULL } },
        { "erofs", (const char *const[]){ "user_xattr", "nouser_xattr", "acl", "noacl",
                                          "cache_strategy=readaround", NULL } },
        { "vfat", (const char *const[]){ OWNER_MASKS, "codepage=437", "iocharset=utf8",
                                         "shortname=mixed", "utf8", "flush", "tz=UTC",
                                         "time_offset=60", "showexec", "quiet", NULL } },
        { "exfat", (const char *const[]){ OWNER_MASKS, "iocharset=utf8", "discard",
                                          "time_offset=60", NULL } },
        { "ntfs3", (const char *const[]){ OWNER_MASKS, "iocharset=utf8", "discard",
                                          "hide_dot_files", "windows_names", "prealloc",
                                          "sparse", "showmeta", "acl", NULL } },
        { "iso9660", (const char *const[]){ "mode=0444", "dmode=0555", "norock", "nojoliet",
                                            "check=relaxed", "iocharset=utf8", "map=off",
                                            "utf8", "unhide", "hide", "session=1",
                                            "sbsector=16", NULL } },
        { "udf", (const char *const[]){ "mode=0444", "dmode=0555",
                                        "iocharset=utf8", "utf8", "novrs", "session=1",
                                        "anchor=256", "lastblock=1000", "unhide", "undelete",
                                        NULL } },
};

/* Options accepted by no type: the kernel knows them, usermount does not pass them. */
static const char *const never_accepted[] = {
        "uid=1000", "gid=1001", "umask=022", "errors=remount-ro", "errors=ro", "device=/dev/sda",
        "fsid=x", "domain_id=x", "norecovery=1", "nouser_xattr=1", "quota", "usrquota",
        "grpquota", "prjquota", "grpid", "bsdgroups", "nogrpid", "resuid=0", "resgid=0",
        "sb=8193", "journal_path=/dev/sdb", "journal_dev=8", "journal_async_commit",
        "init_itable=10", "max_batch_time=0", "dax", "dax=always", "i_version", "debug",
        "test_dummy_encryption", "inlinecrypt", "mb_optimize_scan=1", "nombcache", "noinit_itable",
        "abort", "data_err=abort", "logdev=/dev/sdb", "rtdev=/dev/sdb", "dax=inode", "pquota",
        "uquota", "gquota", "noquota", "nouuid", "sunit=8", "swidth=8", "filestreams",
        "attr2", "ikeep", "swalloc", "degraded", "recovery", "usebackuproot", "rescue=all",
        "nologreplay", "clear_cache", "skip_balance", "ref_verify", "fatal_errors=panic",
        "thread_pool=4", "max_inline=0", "metadata_ratio=1", "check_int", "enospc_debug",
        "fragment=data", "user_subvol_rm_allowed", "threads=multi", "cache_strategy",
        "allow_utime=0022", "nfs=stale_rw", "nocase", "posix", "force", "sys_immutable",
        "dos1xfloppy", "rodir", "usefree", "errors=panic", "namecase=0", "keep_last_dots",
        "nls=utf8", "noacsrules", "nohidden", "overriderockperm", "cruft", "block=2048",
        "conv=binary", "gid=ignore", "uid=forget", "volume=1", "partition=0", "fileset=1",
        "rootdir=1", "nostrict", "shortad", "longad", "strict", "novrs=1", "codepage=437x",
        "nosymfollow", "norelatime", "nostrictatime", "nolazytime", "mand", "nomand", "silent",
        "loud", "atime", "diratime", "iversion", "noiversion", "acl=1", "discard=once",
        "compress=zstd:20",
};

typedef struct MatrixCase {
        const char *option;
        bool accepted;
} MatrixCase;

static bool type_accepts(const char *fstype, const char *option) {
        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                if (streq(type_samples[i].fstype, fstype))
                        return g_strv_contains(type_samples[i].accepted, option);
        g_assert_not_reached();
}

/* ext3/4 options the driver refuses without a journal: read-only mounts load none. */
static bool needs_journal(const char *fstype, const char *option) {
        g_autofree char *key = g_strndup(option, strcspn(option, "="));

        return g_strv_contains((const char *const[]){ "ext3", "ext4", NULL }, fstype) &&
               g_strv_contains((const char *const[]){ "commit", "data", "journal_checksum",
                                                      NULL },
                               key);
}

static void test_matrix(const void *data) {
        const TypedCase *t = data;
        const char *option = t->row;
        bool journal = needs_journal(t->fstype, option);
        PolicyInput in = input(t->fstype, option, journal ? 0 : IN_RO);
        MountOptions o = sentinel();
        UmError e = {};
        char *items;
        int r;

        if (type_accepts(t->fstype, option)) {
                items = with_forced(t->fstype, option);
                expect_built(&in, items, ATTR_BASE | (journal ? 0 : MOUNT_ATTR_RDONLY),
                             !journal);
                g_free(items);
                return;
        }
        /* Refused: as not allowed, or as a bad value for a key the type knows otherwise. */
        r = policy_build_options(&in, &o, &e);
        if (r >= 0)
                g_error("%s accepted %s", t->fstype, option);
        g_assert_true(r == -EPERM || r == -EINVAL);
        g_assert_cmpint(e.kind, ==, r == -EPERM ? NOT_ALLOWED : INVALID);
        assert_clean_message(&e);
        assert_untouched(&o);
}

/* The samples are consistent: each type lists each sample at most once. */
static void test_matrix_samples_unique(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                for (const char *const *a = type_samples[i].accepted; *a; a++)
                        for (const char *const *b = a + 1; *b; b++)
                                g_assert_cmpstr(*a, !=, *b);
}

/* No option is both a sample of some type and "never accepted". */
static void test_matrix_samples_disjoint(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                for (size_t j = 0; j < G_N_ELEMENTS(never_accepted); j++)
                        g_assert_false(g_strv_contains(type_samples[i].accepted,
                                                       never_accepted[j]));
}

/* true if one of the comma-separated options has this key. */
static bool has_key(const char *options, const char *key) {
        char **v = g_strsplit(options, ",", -1);
        bool found = false;

        for (char **i = v; *i && !found; i++) {
                size_t n = strcspn(*i, "=");

                found = n == strlen(key) && strncmp(*i, key, n) == 0;
        }
        g_strfreev(v);
        return found;
}

/* A type's samples together in one request (one value per key): all items, in order. */
static void test_matrix_all_at_once(const void *data) {
        const TypeSamples *t = data;
        GString *options = g_string_new(NULL);
        PolicyInput in;
        char *items;

        for (const char *const *a = t->accepted; *a; a++) {
                char *key = g_strndup(*a, strcspn(*a, "="));

                /* All at once, read-only: the journal's options have their own test. */
                if (!has_key(options->str, key) && !needs_journal(t->fstype, *a))
                        g_string_append_printf(options, "%s%s", options->len ? "," : "", *a);
                g_free(key);
        }
        items = with_forced(t->fstype, options->str);
        g_string_append(options, options->len ? ",ro" : "ro");
        in = input(t->fstype, options->str, 0);
        expect_built(&in, items, ATTR_BASE | MOUNT_ATTR_RDONLY, true);
        g_free(items);
        g_string_free(options, TRUE);
}

/* ---- Results ------------------------------------------------------------------------------- */

static void test_to_string(void) {
        MountOption items[] = {
                { .key = (char *) "a" },
                { .key = (char *) "b", .value = (char *) "c" },
                { .key = (char *) "uid", .value = (char *) "1000" },
        };
        MountOptions o = { .items = items, .n_items = G_N_ELEMENTS(items) };
        MountOptions zero = {};
        char *s;

        s = mount_options_to_string(&o);
        g_assert_cmpstr(s, ==, "a,b=c,uid=1000");
        g_free(s);
        o.n_items = 1;
        s = mount_options_to_string(&o);
        g_assert_cmpstr(s, ==, "a");
        g_free(s);
        o.items = &items[1];
        s = mount_options_to_string(&o);
        g_assert_cmpstr(s, ==, "b=c");
        g_free(s);
        s = mount_options_to_string(&zero);
        g_assert_cmpstr(s, ==, "");
        g_free(s);
        s = mount_options_to_string(NULL);
        g_assert_cmpstr(s, ==, "");
        g_free(s);
}

static void test_done(void) {
        PolicyInput in = input("vfat", "utf8,dmask=022,sync", 0);
        MountOptions o = {};
        UmError e = {};

        mount_options_done(&o);
        mount_options_done(NULL);
        g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
        g_assert_cmpuint(o.n_items, ==, 6);
        g_assert_cmpstr(o.items[0].key, ==, "umask");
        g_assert_cmpstr(o.items[0].value, ==, "0027");
        g_assert_cmpstr(o.items[1].key, ==, "utf8");
        g_assert_null(o.items[1].value);
        g_assert_cmpstr(o.items[2].key, ==, "dmask");
        g_assert_cmpstr(o.items[2].value, ==, "022");
        g_assert_cmpstr(o.items[3].key, ==, "sync");
        g_assert_null(o.items[3].value);
        g_assert_cmpstr(o.items[4].key, ==, "uid");
        g_assert_cmpstr(o.items[4].value, ==, "1000");
        g_assert_cmpstr(o.items[5].key, ==, "gid");
        g_assert_cmpstr(o.items[5].value, ==, "1001");
        mount_options_done(&o);
        g_assert_null(o.items);
        g_assert_cmpuint(o.n_items, ==, 0);
        g_assert_cmphex(o.attr_set, ==, 0);
        g_assert_false(o.read_only);
        /* Twice is harmless. */
        mount_options_done(&o);
}

/* The result does not point into the caller's strings. */
static void test_result_owns_memory(void) {
        char *options = g_strdup("commit=5,data=journal");
        PolicyInput in = input("ext4", options, 0);
        MountOptions o = {};
        UmError e = {};
        char *s;

        g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
        memset(options, 'x', strlen(options));
        g_free(options);
        s = mount_options_to_string(&o);
        g_assert_cmpstr(s, ==, "commit=5,data=journal,errors=remount-ro");
        g_free(s);
        mount_options_done(&o);
}

/* The same input gives the same result; nothing is remembered between calls. */
static void test_repeatable(void) {
        PolicyInput in = input("btrfs", "compress=zstd:3,subvol=/a,noatime", 0);

        for (int i = 0; i < 3; i++)
                expect_built(&in, "compress=zstd:3,subvol=/a",
                             ATTR_BASE | MOUNT_ATTR_NOATIME, false);
}

/* ---- Registration ---------------------------------------------------------------------------- */

static void add_matrix_tests(void) {
        GPtrArray *options = g_ptr_array_new();

        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                for (const char *const *a = type_samples[i].accepted; *a; a++)
                        if (!g_ptr_array_find_with_equal_func(options, *a, g_str_equal, NULL))
                                g_ptr_array_add(options, (gpointer) *a);
        for (size_t i = 0; i < G_N_ELEMENTS(never_accepted); i++)
                if (!g_ptr_array_find_with_equal_func(options, never_accepted[i], g_str_equal,
                                                      NULL))
                        g_ptr_array_add(options, (gpointer) never_accepted[i]);

        for (size_t t = 0; t < G_N_ELEMENTS(allowed_fstypes); t++)
                for (guint i = 0; i < options->len; i++)
                        add_typed("/policy/matrix", allowed_fstypes[t], options->pdata[i],
                                  options->pdata[i], test_matrix);
        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                add_row("/policy/matrix-all-at-once", type_samples[i].fstype, &type_samples[i],
                        test_matrix_all_at_once);
        g_test_add_func("/policy/matrix-samples/unique", test_matrix_samples_unique);
        g_test_add_func("/policy/matrix-samples/disjoint", test_matrix_samples_disjoint);
        g_ptr_array_free(options, TRUE);
}

static void add_fstype_tests(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(allowed_fstypes); i++) {
                add_row("/policy/fstype/allowed", allowed_fstypes[i], allowed_fstypes[i],
                        test_fstype_allowed);
                add_row("/policy/forced/items", allowed_fstypes[i], allowed_fstypes[i],
                        test_forced_items);
                add_row("/policy/forced/override", allowed_fstypes[i], allowed_fstypes[i],
                        test_forced_override);
                add_row("/policy/rw-on-read-only-source", allowed_fstypes[i],
                        allowed_fstypes[i], test_rw_on_read_only_source);
                add_row("/policy/read-only-source-wins", allowed_fstypes[i],
                        allowed_fstypes[i], test_read_only_source_wins);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(refused_fstypes); i++)
                add_row("/policy/fstype/refused", refused_fstypes[i], refused_fstypes[i],
                        test_fstype_refused);
        g_test_add_func("/policy/fstype/read-only-media", test_read_only_media);
        g_test_add_func("/policy/read-only-skips-replay", test_read_only_skips_replay);
        g_test_add_func("/policy/fstype/list", test_fstype_list);
        g_test_add_func("/policy/fstype/null", test_fstype_null);
        g_test_add_func("/policy/fstype/message-escaped", test_fstype_message_escaped);
        g_test_add_func("/policy/forced/message", test_forced_message);
}

static void add_syntax_tests(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(syntax_cases); i++) {
                const SyntaxCase *c = &syntax_cases[i];

                add_row("/policy/syntax", c->name, c, test_syntax);
                if (c->kind == OK)
                        continue;
                for (size_t t = 0; t < G_N_ELEMENTS(allowed_fstypes); t++)
                        add_typed("/policy/syntax-typed", allowed_fstypes[t], c->name, c,
                                  test_syntax_typed);
        }
        g_test_add_func("/policy/syntax-limits/length", test_syntax_length_limit);
        g_test_add_func("/policy/syntax-limits/overlong", test_syntax_overlong);
        g_test_add_func("/policy/syntax-limits/value", test_syntax_value_limit);
        g_test_add_func("/policy/syntax-limits/null-error", test_syntax_null_error);
}

static void add_refused_tests(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(refused_cases); i++) {
                const RefusedCase *c = &refused_cases[i];

                add_row("/policy/refused/syntax", c->options, c, test_refused_syntax);
                for (size_t t = 0; t < G_N_ELEMENTS(allowed_fstypes); t++)
                        add_typed("/policy/refused", allowed_fstypes[t], c->options, c,
                                  test_refused_typed);
        }
}

static void add_generic_and_value_tests(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(generic_cases); i++)
                for (size_t t = 0; t < G_N_ELEMENTS(allowed_fstypes); t++)
                        add_typed("/policy/generic", allowed_fstypes[t], generic_cases[i].name,
                                  &generic_cases[i], test_generic);
        for (size_t i = 0; i < G_N_ELEMENTS(value_cases); i++) {
                /* Numbered: the same option string appears with different flags. */
                char *name = g_strdup_printf("%03zu:%s", i, value_cases[i].options);

                add_typed("/policy/value", value_cases[i].fstype, name, &value_cases[i],
                          test_value);
                g_free(name);
        }
}

/* ---- The configuration's per-type options (conf.h ConfFsType) -------------------------------- */

#define CONF_PATH "/etc/usermount/usermount.conf"
#define BY_ADMIN(fstype, key, list) \
        fstype " option '" key "' is not allowed by the administrator (" list "= for " fstype \
        " in " CONF_PATH ")"

/*
 * One request against one [type] section. For OK rows, items are the caller's, default
 * and configured forced items in order (the built-in forced ones are added around them
 * here), attr the attributes beyond ATTR_BASE; otherwise items is part of the message.
 */
typedef struct ConfCase {
        const char *fstype;
        const char *allowed;  /* AllowedOptions= keys, ','-separated; NULL: unset */
        const char *defaults; /* DefaultOptions=, NULL: unset */
        const char *forced;   /* ForcedOptions=, NULL: unset */
        const char *options;  /* the caller's */
        unsigned flags;
        UmErrorKind kind;
        const char *items;
        uint64_t attr;
} ConfCase;

static const ConfCase conf_cases[] = {
        /* AllowedOptions= narrows; ro, nosuid, nodev and noexec always pass. */
        { "ext4", "noatime,acl", NULL, NULL, "", 0, OK, "", 0 },
        { "ext4", "noatime,acl", NULL, NULL, "acl", 0, OK, "acl", 0 },
        { "ext4", "noatime,acl", NULL, NULL, "noatime,acl", 0, OK, "acl", MOUNT_ATTR_NOATIME },
        { "ext4", "noatime,acl", NULL, NULL, "ro,nosuid,nodev,noexec", 0, OK, "",
          MOUNT_ATTR_RDONLY },
        { "ext4", "noatime,acl", NULL, NULL, "noacl", 0, NOT_ALLOWED,
          BY_ADMIN("ext4", "noacl", "AllowedOptions") },
        { "ext4", "noatime,acl", NULL, NULL, "acl,relatime", 0, NOT_ALLOWED,
          BY_ADMIN("ext4", "relatime", "AllowedOptions") },
        { "ext4", "noatime,acl", NULL, NULL, "rw", 0, NOT_ALLOWED,
          BY_ADMIN("ext4", "rw", "AllowedOptions") },
        { "ext4", "noatime,acl", NULL, NULL, "commit=abc", 0, NOT_ALLOWED,
          BY_ADMIN("ext4", "commit", "AllowedOptions") },
        { "ext4", "noatime,acl", NULL, NULL, "suid", 0, NOT_ALLOWED,
          "option 'suid' is not allowed: setuid and setgid bits" },
        { "ext4", "noatime,acl", NULL, NULL, "errors=remount-ro", 0, NOT_ALLOWED,
          "is set by usermount and cannot be given" },
        { "ext4", "noatime,acl", NULL, NULL, "bogus", 0, NOT_ALLOWED,
          "ext4 option 'bogus' is not supported by usermount" },
        { "ext4", "commit", NULL, NULL, "commit=abc", 0, INVALID,
          "ext4 option 'commit' needs a whole number" },
        { "ext4", "commit", NULL, NULL, "commit=7", 0, OK, "commit=7", 0 },
        { "ext4", "", NULL, NULL, "acl", 0, NOT_ALLOWED, BY_ADMIN("ext4", "acl", "AllowedOptions") },
        { "ext4", "", NULL, NULL, "ro", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "vfat", "utf8", NULL, NULL, "utf8", 0, OK, "utf8", 0 },
        { "vfat", "utf8", NULL, NULL, "dmask=077", 0, NOT_ALLOWED,
          BY_ADMIN("vfat", "dmask", "AllowedOptions") },
        { "squashfs", "", NULL, NULL, "ro", 0, OK, "", 0 },

        /* DefaultOptions= yield to the same key, its no-twin and its group. */
        { "ext4", NULL, "noatime,acl", NULL, "", 0, OK, "acl", MOUNT_ATTR_NOATIME },
        { "ext4", NULL, "noatime,acl", NULL, "acl", 0, OK, "acl", MOUNT_ATTR_NOATIME },
        { "ext4", NULL, "noatime,acl", NULL, "noacl", 0, OK, "noacl", MOUNT_ATTR_NOATIME },
        { "ext4", NULL, "noatime,acl", NULL, "relatime", 0, OK, "acl", MOUNT_ATTR_RELATIME },
        { "ext4", NULL, "noatime,acl", NULL, "strictatime,noacl", 0, OK, "noacl",
          MOUNT_ATTR_STRICTATIME },
        { "ext4", NULL, "noatime,acl", NULL, "noatime", 0, OK, "acl", MOUNT_ATTR_NOATIME },
        { "ext4", NULL, "commit=30,data=journal", NULL, "commit=5", 0, OK,
          "commit=5,data=journal", 0 },
        { "ext4", NULL, "commit=30,data=journal", NULL, "data=writeback,dioread_nolock", 0, OK,
          "data=writeback,dioread_nolock,commit=30", 0 },
        { "ext4", NULL, "ro", NULL, "", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "ro", NULL, "rw", 0, OK, "", 0 },
        { "ext4", NULL, "ro", NULL, "", IN_RO, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "rw", NULL, "", 0, OK, "", 0 },
        { "ext4", NULL, "rw", NULL, "", IN_RO, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "rw", NULL, "", IN_SOURCE_RO, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "rw", NULL, "ro", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "erofs", NULL, "rw", NULL, "", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "noexec", NULL, "", IN_EXEC, OK, "", 0 },
        { "ext4", NULL, "noexec", NULL, "", 0, OK, "", 0 },
        { "ext4", NULL, "sync,nodiratime", NULL, "", 0, OK, "sync", MOUNT_ATTR_NODIRATIME },
        { "xfs", NULL, "discard,inode64", NULL, "", 0, OK, "discard,inode64", 0 },
        { "xfs", NULL, "discard,inode64", NULL, "nodiscard,inode32", 0, OK, "nodiscard,inode32",
          0 },
        { "btrfs", NULL, "compress=zstd:3", NULL, "", 0, OK, "compress=zstd:3", 0 },
        { "btrfs", NULL, "compress=zstd:3", NULL, "compress-force=lzo", 0, OK,
          "compress-force=lzo", 0 },
        { "btrfs", NULL, "space_cache=v2", NULL, "nospace_cache", 0, OK, "nospace_cache", 0 },
        { "iso9660", NULL, "norock", NULL, "", 0, OK, "norock", 0 },
        { "iso9660", NULL, "hide", NULL, "unhide", 0, OK, "unhide", 0 },
        { "vfat", NULL, "utf8,shortname=mixed", NULL, "", 0, OK, "utf8,shortname=mixed", 0 },
        { "vfat", NULL, "utf8,shortname=mixed", NULL, "shortname=lower", 0, OK,
          "shortname=lower,utf8", 0 },
        /* A default is the administrator's: AllowedOptions= limits callers only. */
        { "ext4", "acl", "noatime,commit=60", NULL, "acl", 0, OK, "acl,commit=60",
          MOUNT_ATTR_NOATIME },
        /* A caller's value is still checked when it replaces a default. */
        { "ext4", NULL, "commit=30", NULL, "commit=x", 0, INVALID, "needs a whole number" },

        /* ForcedOptions= are added, and callers cannot give or contradict them. */
        { "ext4", NULL, NULL, "data=ordered", "", 0, OK, "data=ordered", 0 },
        { "ext4", NULL, NULL, "data=ordered", "acl", 0, OK, "acl,data=ordered", 0 },
        { "ext4", NULL, NULL, "data=ordered", "data=journal", 0, NOT_ALLOWED,
          "ext4 option 'data' is forced to data=ordered by the administrator (ForcedOptions= "
          "for ext4 in " CONF_PATH ")" },
        { "ext4", NULL, NULL, "data=ordered", "data=ordered", 0, NOT_ALLOWED,
          "is forced to data=ordered by the administrator" },
        { "ext4", NULL, NULL, "ro", "", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, NULL, "ro", "ro", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, NULL, "ro", "rw", 0, NOT_ALLOWED,
          "ext4 option 'rw' contradicts 'ro', which the administrator forces (ForcedOptions= "
          "for ext4 in " CONF_PATH ")" },
        { "ext4", NULL, NULL, "ro,noload", "", 0, OK, "noload", MOUNT_ATTR_RDONLY },
        /* Forced or default options for the journal yield to read-only mounts (no journal
         * is loaded); found by tests/fuzz/fuzz-conf: they made every read-only mount fail. */
        { "ext4", NULL, NULL, "data=ordered", "", IN_RO, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, NULL, "data=ordered", "ro,acl", 0, OK, "acl", MOUNT_ATTR_RDONLY },
        { "ext3", NULL, NULL, "commit=5,data=ordered", "", IN_SOURCE_RO, OK, "",
          MOUNT_ATTR_RDONLY },
        { "ext4", NULL, NULL, "ro,data=ordered", "", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, "commit=30", "ro", "", 0, OK, "", MOUNT_ATTR_RDONLY },
        { "ext4", NULL, NULL, "data=ordered", "commit=5", IN_RO, NOT_ALLOWED,
          "ext4 option 'commit' needs the journal" },
        { "xfs", NULL, NULL, "noatime", "relatime", 0, NOT_ALLOWED,
          "xfs option 'relatime' contradicts 'noatime', which the administrator forces" },
        { "xfs", NULL, NULL, "noatime", "noatime", 0, NOT_ALLOWED, "is forced to noatime" },
        { "xfs", NULL, NULL, "noatime", "", 0, OK, "", MOUNT_ATTR_NOATIME },
        { "ext4", NULL, NULL, "acl", "noacl", 0, NOT_ALLOWED, "contradicts 'acl'" },
        { "ext4", NULL, NULL, "noexec", "", IN_EXEC, NOT_ALLOWED,
          "exec is not allowed on ext4: the administrator forces noexec (ForcedOptions= for "
          "ext4 in " CONF_PATH ")" },
        { "ext4", NULL, NULL, "noexec", "noexec", 0, OK, "", 0 },
        { "ext4", NULL, NULL, "nosuid,nodev", "nosuid,nodev", IN_EXEC, OK, "", 0 },
        { "xfs", NULL, NULL, "sync,nodiratime", "", 0, OK, "sync", MOUNT_ATTR_NODIRATIME },
        { "vfat", NULL, NULL, "flush", "utf8", 0, OK, "utf8,flush", 0 },
        { "vfat", NULL, NULL, "dmask=077", "dmask=022", 0, NOT_ALLOWED,
          "is forced to dmask=077" },
        { "udf", NULL, NULL, "ro", "", 0, OK, "", MOUNT_ATTR_RDONLY },
        /* All three lists at once: caller, defaults, forced, in that order. */
        { "ext4", "noatime,user_xattr", "acl,nodelalloc", "commit=5", "noatime,user_xattr", 0,
          OK, "user_xattr,acl,nodelalloc,commit=5", MOUNT_ATTR_NOATIME },
        { "ext4", "noatime,user_xattr", "acl,nodelalloc", "commit=5", "commit=5", 0,
          NOT_ALLOWED, "is forced to commit=5" },
};

/* Splits both lists of t, as conf_load() does once; they must be option lists. */
static void conf_fstype_split_all(ConfFsType *t) {
        UmError e = {};

        g_assert_cmpint(conf_fstype_split(t, false, &e), ==, 0);
        g_assert_cmpint(conf_fstype_split(t, true, &e), ==, 0);
}

static void conf_fstype_split_done(ConfFsType *t) {
        option_list_done(&t->defaults);
        option_list_done(&t->forced);
}

static void conf_fstype_done(ConfFsType *t) {
        g_strfreev(t->allowed_options);
        g_free(t->default_options);
        g_free(t->forced_options);
        conf_fstype_split_done(t);
}

static ConfFsType conf_fstype_of(const ConfCase *c) {
        ConfFsType t = {
                .name = c->fstype,
                .path = CONF_PATH,
                .allowed = true,
                .allowed_options = c->allowed ? g_strsplit(c->allowed, ",", -1) : NULL,
                .default_options = g_strdup(c->defaults),
                .forced_options = g_strdup(c->forced),
        };

        conf_fstype_split_all(&t);
        return t;
}

/* An empty AllowedOptions= is an empty list, not a list of one "". */
static void conf_fstype_fix_empty(ConfFsType *t) {
        if (t->allowed_options && t->allowed_options[0] && !*t->allowed_options[0]) {
                g_strfreev(t->allowed_options);
                t->allowed_options = g_new0(char *, 1);
        }
}

static void report_fail(void *userdata, PolicyConfList list, const char *message) {
        g_error("%s: %s", policy_conf_list_name(list), message);
}

static void test_conf_case(const void *data) {
        const ConfCase *c = ((const TypedCase *) data)->row;
        ConfFsType t = conf_fstype_of(c);
        PolicyInput in = input(c->fstype, c->options, c->flags);

        conf_fstype_fix_empty(&t);
        /* Every section used here is one the configuration accepts. */
        g_assert_cmpint(policy_check_conf_fstype(&t, report_fail, NULL), ==, 0);
        in.fs_conf = &t;
        if (c->kind == OK) {
                uint64_t attr = ATTR_BASE | c->attr;
                bool read_only = (c->attr & MOUNT_ATTR_RDONLY) != 0;
                char *items = with_forced(c->fstype, c->items);

                if (c->flags & IN_EXEC)
                        attr &= ~(uint64_t) MOUNT_ATTR_NOEXEC;
                expect_built(&in, items, attr, read_only);
                g_free(items);
        } else
                expect_refused(&in, c->kind == INVALID ? -EINVAL : -EPERM, c->kind, c->items);
        conf_fstype_done(&t);
}

/* A section that sets nothing changes nothing, on every type and for every sample option. */
static void test_conf_empty_section(const void *data) {
        const TypeSamples *s = ((const TypedCase *) data)->row;
        ConfFsType t = { .name = s->fstype, .allowed = true };

        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                for (const char *const *o = type_samples[i].accepted; *o; o++) {
                        PolicyInput in = input(s->fstype, *o,
                                               needs_journal(s->fstype, *o) ? 0 : IN_RO),
                                    with = in;
                        MountOptions a = {}, b = {};
                        UmError ea = {}, eb = {};
                        int ra, rb;

                        with.fs_conf = &t;
                        ra = policy_build_options(&in, &a, &ea);
                        rb = policy_build_options(&with, &b, &eb);
                        g_assert_cmpint(ra, ==, rb);
                        g_assert_cmpstr(ea.message, ==, eb.message);
                        if (ra == 0) {
                                char *x = mount_options_to_string(&a);
                                char *y = mount_options_to_string(&b);

                                g_assert_cmpstr(x, ==, y);
                                g_assert_cmphex(a.attr_set, ==, b.attr_set);
                                g_free(x);
                                g_free(y);
                        }
                        mount_options_done(&a);
                        mount_options_done(&b);
                }
}

static void test_conf_type_not_allowed(void) {
        ConfFsType t = { .name = "xfs", .path = CONF_PATH, .allowed = false };
        PolicyInput in = input("xfs", "", 0);

        in.fs_conf = &t;
        expect_refused(&in, -EPERM, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED,
                       "filesystem type 'xfs' is not allowed by the administrator "
                       "(AllowedFilesystems= in " CONF_PATH ")");
        /* Without a path (the built-in defaults), the message still says where. */
        t.path = NULL;
        t.allowed_options = (char *[]){ NULL };
        t.allowed = true;
        in.options = "discard";
        expect_refused(&in, -EPERM, NOT_ALLOWED, "(AllowedOptions= for xfs in the "
                       "configuration)");
}

/* The section of another type is a programming error, never a silent mix-up. */
static void test_conf_wrong_type(void) {
        ConfFsType t = { .name = "ext4", .allowed = true, .forced_options = (char *) "ro" };
        PolicyInput in = input("xfs", "", 0);

        in.fs_conf = &t;
        expect_refused(&in, -EINVAL, UM_ERROR_KIND_FAILED, "internal error");
}

/* A configured list that the load-time check would refuse still never reaches the kernel. */
static void test_conf_unchecked_list(void) {
        ConfFsType t = { .name = "ext4", .allowed = true, .default_options = (char *) "suid" };
        PolicyInput in = input("ext4", "", 0);

        conf_fstype_split_all(&t);
        in.fs_conf = &t;
        expect_refused(&in, -EPERM, UM_ERROR_KIND_FAILED,
                       "the configured DefaultOptions= for ext4 are not valid: option 'suid'");
        conf_fstype_split_done(&t);
}

typedef struct CheckReport {
        GPtrArray *messages;
} CheckReport;

static void report_collect(void *userdata, PolicyConfList list, const char *message) {
        CheckReport *r = userdata;

        g_ptr_array_add(r->messages, g_strdup_printf("%s: %s", policy_conf_list_name(list),
                                                     message));
}

static void test_conf_check_reports(void) {
        ConfFsType t = {
                .name = "ext4",
                .allowed_options = (char *[]){ "acl", "suid", NULL },
                .default_options = (char *) "noatime,bogus",
                .forced_options = (char *) "relatime,commit=x",
        };
        CheckReport r = { g_ptr_array_new_with_free_func(g_free) };
        ConfFsType unknown = { .name = "fuse" };

        conf_fstype_split_all(&t);
        g_assert_cmpint(policy_check_conf_fstype(&t, report_collect, &r), ==, -EINVAL);
        g_assert_cmpuint(r.messages->len, ==, 4);
        g_assert_true(g_str_has_prefix(r.messages->pdata[0], "AllowedOptions: 'suid' can "
                                                             "never be allowed"));
        g_assert_true(g_str_has_prefix(r.messages->pdata[1], "DefaultOptions: 'bogus' is not "
                                                             "an option usermount knows"));
        g_assert_true(g_str_has_prefix(r.messages->pdata[2], "ForcedOptions: ext4 option "
                                                             "'commit' needs"));
        g_assert_true(g_str_has_prefix(r.messages->pdata[3], "DefaultOptions: 'noatime' "
                                                             "contradicts 'relatime'"));
        /* Without a report function the answer is the same. */
        g_assert_cmpint(policy_check_conf_fstype(&t, NULL, NULL), ==, -EINVAL);
        g_assert_cmpint(policy_check_conf_fstype(&unknown, NULL, NULL), ==, -EINVAL);
        g_assert_cmpint(policy_check_conf_fstype(NULL, NULL, NULL), ==, -EINVAL);
        conf_fstype_split_done(&t);
        t = (ConfFsType){ .name = "ext4" };
        g_assert_cmpint(policy_check_conf_fstype(&t, report_fail, NULL), ==, 0);
        g_ptr_array_free(r.messages, true);
        g_assert_cmpstr(policy_conf_list_name(POLICY_CONF_ALLOWED_OPTIONS), ==,
                        "AllowedOptions");
        g_assert_null(policy_conf_list_name(_POLICY_CONF_LIST_MAX));
}

/* ---- umask= on filesystems without Unix permissions ------------------------------------------ */

static void test_umask_forced(const void *data) {
        const char *fstype = ((const TypedCase *) data)->fstype;
        static const struct {
                mode_t umask;
                const char *item;
        } masks[] = {
                { 0, "umask=0000" }, { 022, "umask=0022" }, { 077, "umask=0077" },
                { 0777, "umask=0777" }, { 01777, "umask=0777" }, { 07022, "umask=0022" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(masks); i++) {
                PolicyInput in = input(fstype, "", 0);
                char *items;

                in.umask = masks[i].umask;
                items = is_umask_type(fstype) ?
                        g_strdup_printf("%s,%s", masks[i].item, forced_last(fstype)) :
                        g_strdup(forced_last(fstype));
                expect_built(&in, items, ATTR_BASE, false);
                g_free(items);
        }
}

static void test_umask_refused(const void *data) {
        const char *fstype = ((const TypedCase *) data)->fstype;

        for (const char *const *o = (const char *const[]){ "umask=022", "umask=0",
                                                            "umask=0027", "noatime,umask=077",
                                                            NULL }; *o; o++) {
                PolicyInput in = input(fstype, *o, 0);

                expect_refused(&in, -EPERM, NOT_ALLOWED, is_umask_type(fstype) ?
                               "option 'umask' is set by usermount and cannot be given: the "
                               "filesystem has no Unix permissions, so the user's umask "
                               "decides them" : "is not supported by usermount");
        }
}

static void add_conf_tests(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(conf_cases); i++) {
                const ConfCase *c = &conf_cases[i];
                char *name = g_strdup_printf("%03zu:%s|%s|%s|%s", i, strempty(c->allowed),
                                             strempty(c->defaults), strempty(c->forced),
                                             c->options);

                add_typed("/policy/conf", c->fstype, name, c, test_conf_case);
                g_free(name);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(type_samples); i++)
                add_typed("/policy/conf-empty-section", type_samples[i].fstype, "samples",
                          &type_samples[i], test_conf_empty_section);
        for (size_t t = 0; t < G_N_ELEMENTS(allowed_fstypes); t++) {
                add_typed("/policy/umask/forced", allowed_fstypes[t], "masks", allowed_fstypes[t],
                          test_umask_forced);
                add_typed("/policy/umask/refused", allowed_fstypes[t], "given",
                          allowed_fstypes[t], test_umask_refused);
        }
        g_test_add_func("/policy/conf-misc/type-not-allowed", test_conf_type_not_allowed);
        g_test_add_func("/policy/conf-misc/wrong-type", test_conf_wrong_type);
        g_test_add_func("/policy/conf-misc/unchecked-list", test_conf_unchecked_list);
        g_test_add_func("/policy/conf-misc/check-reports", test_conf_check_reports);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);

        add_fstype_tests();
        add_syntax_tests();
        add_refused_tests();
        add_generic_and_value_tests();
        add_matrix_tests();
        add_conf_tests();
        g_test_add_func("/policy/result/to-string", test_to_string);
        g_test_add_func("/policy/result/done", test_done);
        g_test_add_func("/policy/result/owns-memory", test_result_owns_memory);
        g_test_add_func("/policy/result/repeatable", test_repeatable);

        return g_test_run();
}
