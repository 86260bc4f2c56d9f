/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the registry of attached mounts (daemon/registry.c) on plain files in a
 * temporary directory: every field survives a save and a reload, saves are atomic (no
 * temporary file is left, a failed save leaves the old file and the registry in memory as
 * they were), hostile state files are refused as a whole or record by record as
 * registry.h promises, and the lookups and counts answer from memory.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "registry.h"

#define STATE "state.json"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Registry, registry_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MountRecord, mount_record_free)

typedef struct Fixture {
        char *dir;
        char *path;
} Fixture;

static void fixture_setup(Fixture *f, gconstpointer data) {
        g_autoptr(GError) err = NULL;

        f->dir = g_dir_make_tmp("usermount-registry-XXXXXX", &err);
        g_assert_no_error(err);
        f->path = g_build_filename(f->dir, STATE, NULL);
}

/* Names in dir other than the state file: temporary files a save must never leave. */
static char *stray_files(const char *dir) {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        GString *s = g_string_new(NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d)))
                if (!streq(name, STATE))
                        g_string_append_printf(s, "%s ", name);
        return g_string_free(s, FALSE);
}

static void fixture_teardown(Fixture *f, gconstpointer data) {
        g_autofree char *stray = stray_files(f->dir);

        g_assert_cmpstr(stray, ==, "");
        (void) unlink(f->path);
        g_assert_cmpint(g_rmdir(f->dir), ==, 0);
        g_free(f->path);
        g_free(f->dir);
}

#define ADD(name, fn) \
        g_test_add(name, Fixture, NULL, fixture_setup, fn, fixture_teardown)

/* ---- helpers ------------------------------------------------------------------------- */

/* A record with every field set; i makes the ids, paths and strings distinct. */
static MountRecord *make_record(unsigned i) {
        MountRecord *r = g_new0(MountRecord, 1);

        /* g_new0/g_strdup memory is malloc memory, as mount_record_free() expects. */
        r->mount_id = (UINT64_C(1) << 31) + 1000 + i;
        r->mntns_id = 4 + (i % 2);
        r->mount_point = g_strdup_printf("/run/media/user%u/disk %u", i, i);
        r->device = g_strdup_printf("/dev/loop%u", i);
        r->devnum = (UINT64_C(7) << 8) + i;
        r->backing_file = g_strdup_printf("/home/user/images/image-%u.img", i);
        r->owner_uid = 1000 + (i % 3);
        r->fstype = g_strdup("ext4");
        r->label = g_strdup_printf("Label \"%u\" \\ / \u00dcn\u00efc\u00f8d\u00e9 \U0001F4C0", i);
        r->uuid = g_strdup_printf("0c6b4c2e-0000-4000-8000-%012u", i);
        r->options = g_strdup("errors=remount-ro,commit=5");
        r->attr_set = 0xe;
        r->idmap = g_strdup(i % 2 ? "user" : "none");
        r->partition = i % 2 ? 0 : i + 1;
        r->created_dir = i % 2;
        r->private_ns = i % 3 == 1;
        r->created_usec = UINT64_C(1700000000000000) + i;
        if (i % 5 == 4) {
                /* An erofs image mounted from its file: no loop device. */
                g_free(r->device);
                r->device = g_strdup(r->backing_file);
                r->devnum = 0;
                r->file_backed = true;
        }
        return r;
}

/* The values json-c cannot hold as signed 64-bit integers, and the optional NULLs. */
static MountRecord *make_extreme_record(void) {
        MountRecord *r = g_new0(MountRecord, 1);

        r->mount_id = UINT64_MAX - 1;
        r->mntns_id = (UINT64_C(1) << 63) + 5;
        r->mount_point = g_strdup("/");
        r->device = g_strdup("/dev/sdb1");
        r->devnum = UINT64_MAX - 2;
        r->owner_uid = UINT32_MAX - 1;
        r->attr_set = UINT64_MAX - 3;
        r->created_usec = (UINT64_C(1) << 63);
        return r;
}

static void assert_record_equal(const MountRecord *a, const MountRecord *b) {
        g_assert_cmpuint(a->mount_id, ==, b->mount_id);
        g_assert_cmpuint(a->mntns_id, ==, b->mntns_id);
        g_assert_cmpstr(a->mount_point, ==, b->mount_point);
        g_assert_cmpstr(a->device, ==, b->device);
        g_assert_cmpuint(a->devnum, ==, b->devnum);
        g_assert_cmpstr(a->backing_file, ==, b->backing_file);
        g_assert_cmpuint(a->owner_uid, ==, b->owner_uid);
        g_assert_cmpstr(a->fstype, ==, b->fstype);
        g_assert_cmpstr(a->label, ==, b->label);
        g_assert_cmpstr(a->uuid, ==, b->uuid);
        g_assert_cmpstr(a->options, ==, b->options);
        g_assert_cmpuint(a->attr_set, ==, b->attr_set);
        g_assert_cmpstr(a->idmap, ==, b->idmap);
        g_assert_cmpuint(a->partition, ==, b->partition);
        g_assert_cmpint(a->created_dir, ==, b->created_dir);
        g_assert_cmpuint(a->created_usec, ==, b->created_usec);
        g_assert_cmpint(a->file_backed, ==, b->file_backed);
        g_assert_cmpint(a->private_ns, ==, b->private_ns);
}

static Registry *load_ok(const char *path, size_t expect_dropped) {
        Registry *reg = NULL;
        UmError e = {};
        size_t dropped = 12345;

        g_assert_cmpint(registry_load(path, &reg, &dropped, &e), ==, 0);
        g_assert_nonnull(reg);
        g_assert_cmpstr(reg->path, ==, path);
        g_assert_cmpuint(dropped, ==, expect_dropped);
        return reg;
}

static void write_text(const char *path, const char *text, gssize len) {
        g_autoptr(GError) err = NULL;

        g_assert_true(g_file_set_contents(path, text, len, &err));
        g_assert_no_error(err);
}

static char *read_text(const char *path, size_t *ret_len) {
        g_autoptr(GError) err = NULL;
        char *text = NULL;
        gsize len = 0;

        g_assert_true(g_file_get_contents(path, &text, &len, &err));
        g_assert_no_error(err);
        if (ret_len)
                *ret_len = len;
        return text;
}

/* A registry of n records from make_record(0..n-1), saved to f->path. */
static Registry *make_saved(Fixture *f, unsigned n) {
        Registry *reg = load_ok(f->path, 0);

        for (unsigned i = 0; i < n; i++)
                g_assert_cmpint(registry_add(reg, make_record(i)), ==, 0);
        g_assert_cmpuint(reg->n_records, ==, n);
        return reg;
}

/* ---- round trip and format ------------------------------------------------------------ */

static void test_missing_file(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = load_ok(f->path, 0);

        g_assert_cmpuint(reg->n_records, ==, 0);
        /* Loading writes nothing. */
        g_assert_cmpint(access(f->path, F_OK), <, 0);
        g_assert_cmpint(errno, ==, ENOENT);
}

static void test_round_trip(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 3);
        g_autoptr(Registry) again = NULL;
        MountRecord *sparse = make_extreme_record();

        g_assert_cmpint(registry_add(reg, sparse), ==, 0);
        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 4);
        for (size_t i = 0; i < 4; i++)
                assert_record_equal(reg->records[i], again->records[i]);
        /* Absent optional strings come back as NULL, not "". */
        g_assert_null(again->records[3]->backing_file);
        g_assert_null(again->records[3]->label);
        g_assert_null(again->records[3]->idmap);
}

/* Saving what was loaded writes the same bytes: nothing is lost or reordered. */
static void test_save_is_stable(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 5);
        g_autoptr(Registry) again = NULL;
        g_autofree char *first = NULL, *second = NULL;

        g_assert_cmpint(registry_add(reg, make_extreme_record()), ==, 0);
        first = read_text(f->path, NULL);
        again = load_ok(f->path, 0);
        g_assert_cmpint(registry_save(again), ==, 0);
        second = read_text(f->path, NULL);
        g_assert_cmpstr(first, ==, second);
}

/* The file is what registry.h documents, read with json-c on its own terms. */
static void test_format(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 2);
        g_autofree char *text = NULL;
        struct json_object *top, *mounts, *rec, *v;
        struct stat st;
        size_t len = 0;

        g_assert_cmpint(registry_add(reg, make_extreme_record()), ==, 0);
        g_assert_cmpint(lstat(f->path, &st), ==, 0);
        g_assert_true(S_ISREG(st.st_mode));
        g_assert_cmpint(st.st_mode & 07777, ==, 0600);
        text = read_text(f->path, &len);
        g_assert_cmpint(text[len - 1], ==, '\n');

        top = json_tokener_parse(text);
        g_assert_nonnull(top);
        g_assert_true(json_object_object_get_ex(top, "version", &v));
        g_assert_true(json_object_is_type(v, json_type_int));
        g_assert_cmpint(json_object_get_int(v), ==, 1);
        g_assert_true(json_object_object_get_ex(top, "mounts", &mounts));
        g_assert_cmpuint(json_object_array_length(mounts), ==, 3);

        rec = json_object_array_get_idx(mounts, 0);
        g_assert_true(json_object_object_get_ex(rec, "mount_id", &v));
        g_assert_true(json_object_is_type(v, json_type_int));
        g_assert_cmpuint(json_object_get_uint64(v), ==, reg->records[0]->mount_id);
        g_assert_true(json_object_object_get_ex(rec, "mount_point", &v));
        g_assert_cmpstr(json_object_get_string(v), ==, "/run/media/user0/disk 0");
        g_assert_true(json_object_object_get_ex(rec, "created_dir", &v));
        g_assert_true(json_object_is_type(v, json_type_boolean));
        /* file_backed only where true: other records read as before it existed. */
        g_assert_false(json_object_object_get_ex(rec, "file_backed", NULL));

        /* Unsigned values beyond INT64_MAX are plain JSON integers, not negative ones. */
        rec = json_object_array_get_idx(mounts, 2);
        g_assert_true(json_object_object_get_ex(rec, "attr_set", &v));
        g_assert_true(json_object_is_type(v, json_type_int));
        g_assert_cmpuint(json_object_get_uint64(v), ==, UINT64_MAX - 3);
        g_assert_false(json_object_object_get_ex(rec, "backing_file", NULL));
        g_assert_nonnull(strstr(text, "\"attr_set\":18446744073709551612"));
        /* Paths are written as they are ('/' is not escaped). */
        g_assert_nonnull(strstr(text, "\"device\":\"/dev/sdb1\""));
        json_object_put(top);
}

/* ---- atomic saves --------------------------------------------------------------------- */

static void test_no_temporary_files(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 4);
        g_autofree char *stray = NULL;

        g_assert_cmpint(registry_remove(reg, reg->records[1]), ==, 0);
        g_assert_cmpint(registry_save(reg), ==, 0);
        stray = stray_files(f->dir);
        g_assert_cmpstr(stray, ==, "");
}

/*
 * A save that cannot write its temporary file (RLIMIT_FSIZE: refused for root too, unlike
 * permissions) leaves the old file byte for byte, no temporary file, and registry_add()
 * leaves memory as it was and rec with the caller.
 */
static void test_failed_add_keeps_old_file(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 2);
        g_autoptr(MountRecord) rec = make_record(7);
        g_autofree char *before = NULL, *after = NULL, *stray = NULL;
        g_autoptr(Registry) again = NULL;
        struct rlimit old, small;
        size_t len = 0;

        before = read_text(f->path, &len);
        g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
        small = (struct rlimit) { .rlim_cur = len, .rlim_max = old.rlim_max };
        g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
        g_assert_cmpint(registry_add(reg, rec), ==, -EFBIG);
        g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &old), ==, 0);

        g_assert_cmpuint(reg->n_records, ==, 2);
        g_assert_null(registry_find_mount_id(reg, rec->mount_id));
        after = read_text(f->path, NULL);
        g_assert_cmpstr(before, ==, after);
        stray = stray_files(f->dir);
        g_assert_cmpstr(stray, ==, "");
        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 2);
        /* rec is still the caller's: g_autoptr frees it once, ASan would see a second free. */
        g_assert_cmpstr(rec->device, ==, "/dev/loop7");
}

/* The state file's directory does not exist: nothing is added and nothing is created. */
static void test_failed_add_missing_directory(Fixture *f, gconstpointer data) {
        g_autofree char *path = g_build_filename(f->dir, "missing", STATE, NULL);
        g_autoptr(Registry) reg = load_ok(path, 0);
        g_autoptr(MountRecord) rec = make_record(1);

        g_assert_cmpint(registry_add(reg, rec), ==, -ENOENT);
        g_assert_cmpuint(reg->n_records, ==, 0);
        g_assert_cmpint(registry_save(reg), ==, -ENOENT);
}

/* The rename fails (the path became a directory): the temporary file is removed again. */
static void test_failed_rename(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = load_ok(f->path, 0);
        g_autoptr(MountRecord) rec = make_record(1);
        g_autofree char *stray = NULL;

        g_assert_cmpint(mkdir(f->path, 0700), ==, 0);
        g_assert_cmpint(registry_add(reg, rec), ==, -EISDIR);
        g_assert_cmpuint(reg->n_records, ==, 0);
        stray = stray_files(f->dir);
        g_assert_cmpstr(stray, ==, "");
        g_assert_cmpint(rmdir(f->path), ==, 0);
}

/* Not writable for an unprivileged daemon (skipped as root, who may write anyway). */
static void test_failed_add_read_only_directory(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 1);
        g_autoptr(MountRecord) rec = make_record(5);
        g_autofree char *before = read_text(f->path, NULL), *after = NULL;

        if (geteuid() == 0) {
                g_test_skip("root may write to a read-only directory");
                return;
        }
        g_assert_cmpint(chmod(f->dir, 0500), ==, 0);
        g_assert_cmpint(registry_add(reg, rec), ==, -EACCES);
        g_assert_cmpint(chmod(f->dir, 0700), ==, 0);
        g_assert_cmpuint(reg->n_records, ==, 1);
        after = read_text(f->path, NULL);
        g_assert_cmpstr(before, ==, after);
}

/* ---- changes ---------------------------------------------------------------------------- */

static void test_remove(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 4);
        g_autoptr(Registry) again = NULL;
        g_autoptr(MountRecord) stranger = make_record(9);
        uint64_t gone = reg->records[1]->mount_id;

        g_assert_cmpint(registry_remove(reg, reg->records[1]), ==, 0);
        g_assert_cmpuint(reg->n_records, ==, 3);
        g_assert_null(registry_find_mount_id(reg, gone));
        g_assert_cmpstr(reg->records[1]->device, ==, "/dev/loop2"); /* order kept */

        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 3);
        for (size_t i = 0; i < 3; i++)
                assert_record_equal(reg->records[i], again->records[i]);

        /* A record that is not in the registry is not touched (and stays the caller's). */
        g_assert_cmpint(registry_remove(reg, stranger), ==, -ENOENT);
        g_assert_cmpint(registry_remove(reg, NULL), ==, -EINVAL);
        g_assert_cmpuint(reg->n_records, ==, 3);

        while (reg->n_records > 0)
                g_assert_cmpint(registry_remove(reg, reg->records[reg->n_records - 1]), ==, 0);
        again = registry_free(again);
        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 0);
}

/* A removal whose save fails still forgets the record in memory and says so. */
static void test_remove_save_fails(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 2);
        g_autoptr(Registry) again = NULL;
        struct rlimit old, small;

        g_assert_cmpint(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
        small = (struct rlimit) { .rlim_cur = 1, .rlim_max = old.rlim_max };
        g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &small), ==, 0);
        g_assert_cmpint(registry_remove(reg, reg->records[0]), ==, -EFBIG);
        g_assert_cmpint(setrlimit(RLIMIT_FSIZE, &old), ==, 0);
        g_assert_cmpuint(reg->n_records, ==, 1);
        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 2); /* the file as before */
        g_assert_cmpint(registry_save(reg), ==, 0);
        again = registry_free(again);
        again = load_ok(f->path, 0);
        g_assert_cmpuint(again->n_records, ==, 1);
}

typedef void (*Spoil)(MountRecord *r);

static void spoil_mount_id(MountRecord *r) { r->mount_id = 0; }
static void spoil_mntns_id(MountRecord *r) { r->mntns_id = 0; }
static void spoil_mount_point_relative(MountRecord *r) { r->mount_point[0] = 'x'; }
static void spoil_mount_point_null(MountRecord *r) { g_clear_pointer(&r->mount_point, g_free); }
static void spoil_device_null(MountRecord *r) { g_clear_pointer(&r->device, g_free); }
static void spoil_device_relative(MountRecord *r) { r->device[0] = 'd'; }
static void spoil_owner(MountRecord *r) { r->owner_uid = (uid_t) -1; }
static void spoil_label_utf8(MountRecord *r) { r->label[0] = (char) 0xff; }
static void spoil_options_utf8(MountRecord *r) { r->options[2] = (char) 0xc0; }
static void spoil_attr_set(MountRecord *r) { r->attr_set = UINT64_MAX; }

static void spoil_mount_point_long(MountRecord *r) {
        g_free(r->mount_point);
        r->mount_point = g_malloc(PATH_MAX + 1);
        memset(r->mount_point, 'a', PATH_MAX);
        r->mount_point[0] = '/';
        r->mount_point[PATH_MAX] = 0;
}

/* What a reload would drop is refused by registry_add(), which never owns it then. */
static void test_add_refusals(Fixture *f, gconstpointer data) {
        static const Spoil spoils[] = {
                spoil_mount_id, spoil_mntns_id, spoil_mount_point_relative,
                spoil_mount_point_null, spoil_device_null, spoil_device_relative, spoil_owner,
                spoil_label_utf8, spoil_options_utf8, spoil_attr_set, spoil_mount_point_long,
        };
        g_autoptr(Registry) reg = make_saved(f, 1);
        g_autofree char *before = read_text(f->path, NULL), *after = NULL;
        g_autoptr(MountRecord) dup = make_record(0);

        for (size_t i = 0; i < G_N_ELEMENTS(spoils); i++) {
                g_autoptr(MountRecord) rec = make_record(100 + (unsigned) i);

                spoils[i](rec);
                g_assert_cmpint(registry_add(reg, rec), ==, -EINVAL);
                g_assert_cmpuint(reg->n_records, ==, 1);
        }
        g_assert_cmpint(registry_add(reg, dup), ==, -EEXIST);
        g_assert_cmpint(registry_add(reg, NULL), ==, -EINVAL);
        g_assert_cmpint(registry_add(NULL, dup), ==, -EINVAL);
        g_assert_cmpuint(reg->n_records, ==, 1);
        after = read_text(f->path, NULL);
        g_assert_cmpstr(before, ==, after);
}

/* ---- lookups ---------------------------------------------------------------------------- */

static void test_lookups(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = make_saved(f, 6);
        MountRecord *r3 = reg->records[3];

        /* make_record(i): mntns_id 4 + i % 2, owner 1000 + i % 3. */
        g_assert_true(registry_find_mount_point(reg, 5, "/run/media/user3/disk 3") == r3);
        g_assert_null(registry_find_mount_point(reg, 4, "/run/media/user3/disk 3"));
        g_assert_null(registry_find_mount_point(reg, 5, "/run/media/user3/disk"));
        g_assert_null(registry_find_mount_point(reg, 5, "/run/media/user3/disk 3/"));
        g_assert_null(registry_find_mount_point(reg, 5, NULL));

        g_assert_true(registry_find_mount_id(reg, r3->mount_id) == r3);
        g_assert_null(registry_find_mount_id(reg, 1));

        g_assert_true(registry_find_device(reg, 5, "/dev/loop3") == r3);
        g_assert_null(registry_find_device(reg, 4, "/dev/loop3"));
        g_assert_null(registry_find_device(reg, 5, "/dev/loop33"));
        g_assert_null(registry_find_device(reg, 5, NULL));

        g_assert_cmpuint(registry_count_owner(reg, 1000), ==, 2);
        g_assert_cmpuint(registry_count_owner(reg, 1001), ==, 2);
        g_assert_cmpuint(registry_count_owner(reg, 1002), ==, 2);
        g_assert_cmpuint(registry_count_owner(reg, 0), ==, 0);
        g_assert_cmpint(registry_remove(reg, r3), ==, 0);
        g_assert_cmpuint(registry_count_owner(reg, 1000), ==, 1);
        g_assert_null(registry_find_device(reg, 5, "/dev/loop3"));

        g_assert_null(registry_find_mount_id(NULL, 1));
        g_assert_null(registry_find_mount_point(NULL, 1, "/"));
        g_assert_null(registry_find_device(NULL, 1, "/dev/sda"));
        g_assert_cmpuint(registry_count_owner(NULL, 0), ==, 0);
        g_assert_null(registry_free(NULL));
        g_assert_null(mount_record_free(NULL));
}

/* ---- hostile files: refused as a whole ------------------------------------------------- */

static void assert_load_refused(const char *path, int expect) {
        Registry *reg = (Registry *) 0x1; /* must stay untouched */
        UmError e = {};
        size_t dropped = 4242;

        g_assert_cmpint(registry_load(path, &reg, &dropped, &e), ==, expect);
        g_assert_true(reg == (Registry *) 0x1);
        g_assert_cmpuint(dropped, ==, 4242);
        g_assert_cmpint(e.error, ==, -expect);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_cmpstr(e.message, !=, "");
}

static const char *const not_registries[] = {
        "",
        "   \n",
        "garbage",
        "{",
        "{\"version\":1,\"mounts\":[]",
        "{\"version\":1,\"mounts\":[]} trailing",
        "{\"version\":1,\"mounts\":[]}{}",
        "[]",
        "null",
        "1",
        "\"version\"",
        "{}",
        "{\"mounts\":[]}",
        "{\"version\":2,\"mounts\":[]}",
        "{\"version\":0,\"mounts\":[]}",
        "{\"version\":\"1\",\"mounts\":[]}",
        "{\"version\":1.0,\"mounts\":[]}",
        "{\"version\":1}",
        "{\"version\":1,\"mounts\":{}}",
        "{\"version\":1,\"mounts\":null}",
        "{\"version\":1,\"mounts\":\"[]\"}",
        "{\"version\":1,\"mounts\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
        "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        "\xef\xbb\xbf{\"version\":1,\"mounts\":[]}",
};

static void test_not_a_registry(Fixture *f, gconstpointer data) {
        for (size_t i = 0; i < G_N_ELEMENTS(not_registries); i++) {
                g_autofree char *shown = g_strescape(not_registries[i], NULL);

                g_test_message("case %zu: \"%s\"", i, shown);
                write_text(f->path, not_registries[i], -1);
                assert_load_refused(f->path, -EBADMSG);
        }
}

/* A NUL byte would end json-c's view of the text early; the rest must not be ignored. */
static void test_nul_byte(Fixture *f, gconstpointer data) {
        static const char text[] = "{\"version\":1,\"mounts\":[]}\0garbage";

        write_text(f->path, text, sizeof(text) - 1);
        assert_load_refused(f->path, -EBADMSG);
}

static void test_not_a_regular_file(Fixture *f, gconstpointer data) {
        g_autofree char *target = g_build_filename(f->dir, "target", NULL);

        /* A symlink is not followed, even to a good file. */
        write_text(target, "{\"version\":1,\"mounts\":[]}", -1);
        g_assert_cmpint(symlink(target, f->path), ==, 0);
        assert_load_refused(f->path, -EBADMSG);
        g_assert_cmpint(unlink(f->path), ==, 0);
        g_assert_cmpint(unlink(target), ==, 0);

        /* A FIFO must not block the daemon's start. */
        g_assert_cmpint(mkfifo(f->path, 0600), ==, 0);
        assert_load_refused(f->path, -EBADMSG);
        g_assert_cmpint(unlink(f->path), ==, 0);

        g_assert_cmpint(mkdir(f->path, 0700), ==, 0);
        assert_load_refused(f->path, -EBADMSG);
        g_assert_cmpint(rmdir(f->path), ==, 0);
}

/* A file of exactly REGISTRY_FILE_SIZE_MAX bytes is read; one byte more is refused. */
static void test_size_limit(Fixture *f, gconstpointer data) {
        static const char head[] = "{\"version\":1,\"mounts\":[]}";
        g_autofree char *text = g_malloc(REGISTRY_FILE_SIZE_MAX + 2);
        g_autoptr(Registry) reg = NULL;

        memset(text, ' ', REGISTRY_FILE_SIZE_MAX + 1);
        memcpy(text, head, sizeof(head) - 1);
        text[REGISTRY_FILE_SIZE_MAX + 1] = 0;
        write_text(f->path, text, REGISTRY_FILE_SIZE_MAX);
        reg = load_ok(f->path, 0);
        g_assert_cmpuint(reg->n_records, ==, 0);

        write_text(f->path, text, REGISTRY_FILE_SIZE_MAX + 1);
        assert_load_refused(f->path, -EBADMSG);

        /* A sparse giant is refused without reading it. */
        g_assert_cmpint(truncate(f->path, (off_t) 1 << 30), ==, 0);
        assert_load_refused(f->path, -EBADMSG);
}

/* ---- hostile files: refused record by record ------------------------------------------ */

/* The required fields of a good record, in the order they are written. */
static const char *const good_fields[][2] = {
        { "mount_id", "2147484648" },
        { "mntns_id", "4" },
        { "mount_point", "\"/run/media/u/x\"" },
        { "device", "\"/dev/loop0\"" },
        { "owner_uid", "1000" },
};

/*
 * One element of "mounts": the good record with member key set to value (JSON text), or
 * without it if value is NULL; key NULL: value is the whole element.
 */
typedef struct RecordCase {
        const char *name;
        const char *key;
        const char *value;
        bool kept;
} RecordCase;

static const RecordCase record_cases[] = {
        { "minimal", "", NULL, true },
        { "unknown fields are ignored", "future", "{\"a\":[1,2],\"b\":null}", true },
        { "null backing_file", "backing_file", "null", true },
        { "null label", "label", "null", true },
        { "escaped UTF-8 label", "label", "\"caf\\u00e9 \\ud83d\\udcc0\"", true },
        { "raw UTF-8 label", "label", "\"caf\xc3\xa9\"", true },
        { "owner 0", "owner_uid", "0", true },
        { "largest uid", "owner_uid", "4294967294", true },
        { "largest u64 below the clamp", "attr_set", "18446744073709551614", true },
        { "-0 is 0", "devnum", "-0", true },

        { "not an object: number", NULL, "42", false },
        { "not an object: string", NULL, "\"x\"", false },
        { "not an object: array", NULL, "[]", false },
        { "not an object: null", NULL, "null", false },
        { "missing mount_id", "mount_id", NULL, false },
        { "missing mntns_id", "mntns_id", NULL, false },
        { "missing mount_point", "mount_point", NULL, false },
        { "missing device", "device", NULL, false },
        { "missing owner_uid", "owner_uid", NULL, false },
        { "null mount_point", "mount_point", "null", false },
        { "null device", "device", "null", false },
        { "mount_id 0", "mount_id", "0", false },
        { "mntns_id 0", "mntns_id", "0", false },
        { "mount_id as string", "mount_id", "\"2147484648\"", false },
        { "mount_id negative", "mount_id", "-2147484648", false },
        { "mount_id fractional", "mount_id", "2147484648.5", false },
        { "mount_id as double", "mount_id", "2.147484648e9", false },
        { "mount_id beyond 2^64 (clamped)", "mount_id", "18446744073709551616", false },
        { "mntns_id 2^64-1", "mntns_id", "18446744073709551615", false },
        { "mount_id true", "mount_id", "true", false },
        { "owner_uid -1", "owner_uid", "-1", false },
        { "owner_uid (uid_t) -1", "owner_uid", "4294967295", false },
        { "owner_uid 2^32", "owner_uid", "4294967296", false },
        { "owner_uid as string", "owner_uid", "\"1000\"", false },
        { "relative mount_point", "mount_point", "\"run/media/x\"", false },
        { "empty mount_point", "mount_point", "\"\"", false },
        { "mount_point as number", "mount_point", "1", false },
        { "mount_point as array", "mount_point", "[\"/x\"]", false },
        { "mount_point with NUL", "mount_point", "\"/run\\u0000/etc\"", false },
        { "mount_point invalid UTF-8", "mount_point", "\"/run/\xff\"", false },
        { "relative device", "device", "\"loop0\"", false },
        { "empty device", "device", "\"\"", false },
        { "label invalid UTF-8", "label", "\"\xfe\xff\"", false },
        { "label overlong UTF-8", "label", "\"\xc0\xaf\"", false },
        { "label UTF-8 surrogate", "label", "\"\xed\xa0\x80\"", false },
        { "label beyond U+10FFFF", "label", "\"\xf4\x90\x80\x80\"", false },
        { "label truncated UTF-8", "label", "\"\xe2\x82\"", false },
        { "label with NUL", "label", "\"a\\u0000b\"", false },
        { "label as number", "label", "5", false },
        { "uuid as object", "uuid", "{}", false },
        { "backing_file as bool", "backing_file", "false", false },
        { "fstype invalid UTF-8", "fstype", "\"ext\x80\"", false },
        { "options invalid UTF-8", "options", "\"a=\xc3\"", false },
        { "idmap as number", "idmap", "0", false },
        { "created_dir as string", "created_dir", "\"yes\"", false },
        { "created_dir as number", "created_dir", "1", false },
        { "file_backed as string", "file_backed", "\"yes\"", false },
        { "file_backed", "file_backed", "true", true },
        { "devnum negative", "devnum", "-1", false },
        { "attr_set as string", "attr_set", "\"14\"", false },
        { "created_usec fractional", "created_usec", "1.5", false },
        { "created_usec null", "created_usec", "null", false },
        { "partition 2^32-1", "partition", "4294967295", true },
        { "partition 2^32", "partition", "4294967296", false },
        { "partition negative", "partition", "-2", false },
        { "partition as string", "partition", "\"2\"", false },
};

static char *record_case_json(const RecordCase *c) {
        GString *s;
        bool replaced = false;

        if (!c->key)
                return g_strdup(c->value);
        s = g_string_new("{");
        for (size_t i = 0; i < G_N_ELEMENTS(good_fields); i++) {
                const char *value = good_fields[i][1];

                if (streq(c->key, good_fields[i][0])) {
                        replaced = true;
                        value = c->value;
                }
                if (value)
                        g_string_append_printf(s, "%s\"%s\":%s", s->len > 1 ? "," : "",
                                               good_fields[i][0], value);
        }
        if (!replaced && c->value)
                g_string_append_printf(s, ",\"%s\":%s", c->key, c->value);
        g_string_append(s, "}");
        return g_string_free(s, FALSE);
}

static void test_record_cases(Fixture *f, gconstpointer data) {
        for (size_t i = 0; i < G_N_ELEMENTS(record_cases); i++) {
                const RecordCase *c = &record_cases[i];
                g_autofree char *element = record_case_json(c), *text = NULL;
                g_autofree char *shown = g_strescape(element, NULL);
                g_autoptr(Registry) reg = NULL;

                g_test_message("record case: %s: %s", c->name, shown);
                /* The case between two good records: one bad record costs only itself. */
                text = g_strdup_printf("{\"version\":1,\"mounts\":[%s,%s,%s]}",
                                       "{\"mount_id\":3000000001,\"mntns_id\":7,"
                                       "\"mount_point\":\"/a\",\"device\":\"/dev/sda1\","
                                       "\"owner_uid\":1}",
                                       element,
                                       "{\"mount_id\":3000000002,\"mntns_id\":7,"
                                       "\"mount_point\":\"/b\",\"device\":\"/dev/sda2\","
                                       "\"owner_uid\":2}");
                write_text(f->path, text, -1);
                reg = load_ok(f->path, c->kept ? 0 : 1);
                g_assert_cmpuint(reg->n_records, ==, c->kept ? 3 : 2);
                g_assert_cmpstr(reg->records[0]->mount_point, ==, "/a");
                g_assert_cmpstr(reg->records[reg->n_records - 1]->mount_point, ==, "/b");
        }
}

static void test_kept_record_values(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = NULL;
        MountRecord *r;

        write_text(f->path,
                   "{\"version\":1,\"mounts\":[{\"mount_id\":2147484648,\"mntns_id\":4,"
                   "\"mount_point\":\"/run/media/u/x\",\"device\":\"/dev/loop0\","
                   "\"owner_uid\":1000,\"label\":\"caf\\u00e9 \\ud83d\\udcc0\","
                   "\"attr_set\":18446744073709551614,\"created_dir\":true,\"x\":[]}]}",
                   -1);
        reg = load_ok(f->path, 0);
        g_assert_cmpuint(reg->n_records, ==, 1);
        r = reg->records[0];
        g_assert_cmpuint(r->mount_id, ==, 2147484648);
        g_assert_cmpuint(r->mntns_id, ==, 4);
        g_assert_cmpstr(r->mount_point, ==, "/run/media/u/x");
        g_assert_cmpstr(r->device, ==, "/dev/loop0");
        g_assert_cmpuint(r->owner_uid, ==, 1000);
        g_assert_cmpstr(r->label, ==, "caf\u00e9 \U0001F4C0");
        g_assert_cmpuint(r->attr_set, ==, UINT64_MAX - 1);
        g_assert_true(r->created_dir);
        g_assert_null(r->backing_file);
        g_assert_null(r->fstype);
        g_assert_cmpuint(r->devnum, ==, 0);
        g_assert_cmpuint(r->created_usec, ==, 0);
}

/* Duplicate mount ids: the first record wins, every later one is dropped. */
static void test_duplicates(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = NULL;

        write_text(f->path,
                   "{\"version\":1,\"mounts\":["
                   "{\"mount_id\":3000000001,\"mntns_id\":7,\"mount_point\":\"/first\","
                   "\"device\":\"/dev/sda1\",\"owner_uid\":1},"
                   "{\"mount_id\":3000000002,\"mntns_id\":7,\"mount_point\":\"/other\","
                   "\"device\":\"/dev/sda2\",\"owner_uid\":1},"
                   "{\"mount_id\":3000000001,\"mntns_id\":8,\"mount_point\":\"/second\","
                   "\"device\":\"/dev/sdb1\",\"owner_uid\":0},"
                   "{\"mount_id\":3000000001,\"mntns_id\":7,\"mount_point\":\"/first\","
                   "\"device\":\"/dev/sda1\",\"owner_uid\":1}"
                   "]}",
                   -1);
        reg = load_ok(f->path, 2);
        g_assert_cmpuint(reg->n_records, ==, 2);
        g_assert_cmpstr(registry_find_mount_id(reg, 3000000001)->mount_point, ==, "/first");
        g_assert_cmpuint(registry_count_owner(reg, 0), ==, 0);
}

/* A bad duplicate does not shadow a good record that follows it. */
static void test_bad_record_does_not_claim_id(Fixture *f, gconstpointer data) {
        g_autoptr(Registry) reg = NULL;

        write_text(f->path,
                   "{\"version\":1,\"mounts\":["
                   "{\"mount_id\":3000000001,\"mntns_id\":7,\"mount_point\":\"relative\","
                   "\"device\":\"/dev/sda1\",\"owner_uid\":1},"
                   "{\"mount_id\":3000000001,\"mntns_id\":7,\"mount_point\":\"/good\","
                   "\"device\":\"/dev/sda1\",\"owner_uid\":1}"
                   "]}",
                   -1);
        reg = load_ok(f->path, 1);
        g_assert_cmpuint(reg->n_records, ==, 1);
        g_assert_cmpstr(reg->records[0]->mount_point, ==, "/good");
}

/* More than REGISTRY_RECORDS_MAX records: the first ones are kept, the rest dropped. */
static void test_record_limit(Fixture *f, gconstpointer data) {
        GString *s = g_string_new("{\"version\":1,\"mounts\":[");
        g_autoptr(Registry) reg = NULL;
        g_autoptr(MountRecord) one_more = make_record(1);
        size_t n = REGISTRY_RECORDS_MAX + 3;

        for (size_t i = 0; i < n; i++)
                g_string_append_printf(s, "%s{\"mount_id\":%zu,\"mntns_id\":1,\"mount_point\":"
                                       "\"/m\",\"device\":\"/d\",\"owner_uid\":0}",
                                       i ? "," : "", (size_t) 3000000000 + i);
        g_string_append(s, "]}");
        write_text(f->path, s->str, (gssize) s->len);
        g_string_free(s, TRUE);

        reg = load_ok(f->path, 3);
        g_assert_cmpuint(reg->n_records, ==, REGISTRY_RECORDS_MAX);
        g_assert_cmpuint(reg->records[REGISTRY_RECORDS_MAX - 1]->mount_id, ==,
                         (size_t) 3000000000 + REGISTRY_RECORDS_MAX - 1);
        g_assert_cmpint(registry_add(reg, one_more), ==, -ENOSPC);
        g_assert_cmpuint(reg->n_records, ==, REGISTRY_RECORDS_MAX);
}

/* The manager reloads after moving a damaged file aside; load never leaves a half state. */
static void test_reload_after_damage(Fixture *f, gconstpointer data) {
        g_autofree char *aside = g_strdup_printf("%s.damaged", f->path);
        g_autoptr(Registry) reg = NULL;

        write_text(f->path, "{\"version\":1,\"mounts\":[", -1);
        assert_load_refused(f->path, -EBADMSG);
        g_assert_cmpint(rename(f->path, aside), ==, 0);
        reg = load_ok(f->path, 0);
        g_assert_cmpuint(reg->n_records, ==, 0);
        g_assert_cmpint(registry_add(reg, make_record(1)), ==, 0);
        g_assert_cmpint(unlink(aside), ==, 0);
}

static void test_load_arguments(Fixture *f, gconstpointer data) {
        Registry *reg = NULL;
        UmError e = {};

        g_assert_cmpint(registry_load("", &reg, NULL, &e), ==, -EINVAL);
        g_assert_null(reg);
        /* ret_dropped and error may be NULL. */
        write_text(f->path, "{\"version\":1,\"mounts\":[1]}", -1);
        g_assert_cmpint(registry_load(f->path, &reg, NULL, NULL), ==, 0);
        g_assert_cmpuint(reg->n_records, ==, 0);
        reg = registry_free(reg);
        write_text(f->path, "nope", -1);
        g_assert_cmpint(registry_load(f->path, &reg, NULL, NULL), ==, -EBADMSG);
        g_assert_cmpint(registry_save(NULL), ==, -EINVAL);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        /* A write beyond RLIMIT_FSIZE must fail with EFBIG, not kill the test. */
        signal(SIGXFSZ, SIG_IGN);

        ADD("/registry/load/missing-file", test_missing_file);
        ADD("/registry/load/arguments", test_load_arguments);
        ADD("/registry/save/round-trip", test_round_trip);
        ADD("/registry/save/stable", test_save_is_stable);
        ADD("/registry/save/format", test_format);
        ADD("/registry/save/no-temporary-files", test_no_temporary_files);
        ADD("/registry/save/failed-add-keeps-old-file", test_failed_add_keeps_old_file);
        ADD("/registry/save/failed-add-missing-directory", test_failed_add_missing_directory);
        ADD("/registry/save/failed-rename", test_failed_rename);
        ADD("/registry/save/failed-add-read-only-directory", test_failed_add_read_only_directory);
        ADD("/registry/remove/basic", test_remove);
        ADD("/registry/remove/save-fails", test_remove_save_fails);
        ADD("/registry/add/refusals", test_add_refusals);
        ADD("/registry/lookups", test_lookups);
        ADD("/registry/hostile/not-a-registry", test_not_a_registry);
        ADD("/registry/hostile/nul-byte", test_nul_byte);
        ADD("/registry/hostile/not-a-regular-file", test_not_a_regular_file);
        ADD("/registry/hostile/size-limit", test_size_limit);
        ADD("/registry/hostile/records", test_record_cases);
        ADD("/registry/hostile/kept-values", test_kept_record_values);
        ADD("/registry/hostile/duplicates", test_duplicates);
        ADD("/registry/hostile/bad-record-does-not-claim-id", test_bad_record_does_not_claim_id);
        ADD("/registry/hostile/record-limit", test_record_limit);
        ADD("/registry/hostile/reload-after-damage", test_reload_after_damage);

        return g_test_run();
}
