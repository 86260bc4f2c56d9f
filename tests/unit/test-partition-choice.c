/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table-driven tests of the partition choice (worker/partition.c) and the Discoverable
 * Partitions Specification names (shared/parttable.c), on tables made in memory: which
 * partition a request gets, every refusal with its message, and the bounds of the list
 * a message carries whatever a hostile table holds. The GUIDs below are written out from
 * the specification (uapi-group.org, "Discoverable Partitions Specification"), not taken
 * from sd-gpt.h as the table is, so that a wrong row fails here.
 */
#include <glib.h>
#include <string.h>

#include "partition.h"
#include "parttable.h"

typedef struct NameCase {
        const char *type;
        const char *name; /* NULL: none */
} NameCase;

static const NameCase name_cases[] = {
        { "4f68bce3-e8cd-4db1-96e7-fbcaf984b709", "root-x86-64" },
        { "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709", "root-x86-64" },
        { "b921b045-1df0-41c3-af44-4c6f280d3fae", "root-arm64" },
        { "44479540-f297-41b2-9af7-d131d5f0458a", "root-x86" },
        { "69dad710-2ce4-4e3c-b16c-21a1d49abed3", "root-arm" },
        { "72ec70a6-cf74-40e6-bd49-4bda08e8f224", "root-riscv64" },
        { "8484680c-9521-48c6-9c11-b0720656f69e", "usr-x86-64" },
        { "b0e01050-ee5f-4390-949a-9101b17104e9", "usr-arm64" },
        { "2c7357ed-ebd2-46d9-aec1-23d437ec2bf5", "root-x86-64-verity" },
        { "41092b05-9fc8-4523-994f-2def0408b176", "root-x86-64-verity-sig" },
        { "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "esp" },
        { "bc13c2ff-59e6-4262-a352-b275fd6f7172", "xbootldr" },
        { "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "swap" },
        { "933ac7e1-2eb4-4f13-b844-0e14e2aef915", "home" },
        { "3b8f8425-20e0-4f3b-907f-1a25a76f98e8", "srv" },
        { "4d21b016-b534-45c2-a9fb-5c16e091fd2d", "var" },
        { "7ec6f557-3bc5-4aca-b293-16ef5df639d1", "tmp" },
        { "773f91ef-66d4-49b5-bd83-d683bf40ad16", "user-home" },
        { "0fc63daf-8483-4772-8e79-3d69d8477de4", "linux-generic" },
        /* Not the specification's: Microsoft basic data, LVM; MBR types; junk. */
        { "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7", NULL },
        { "e6d6d379-f507-44c2-a23c-238f2a3df928", NULL },
        { "0x83", NULL },
        { "0x82", NULL },
        { "4f68bce3e8cd4db196e7fbcaf984b709", NULL }, /* unformatted: not as a table says */
        { "4f68bce3-e8cd-4db1-96e7-fbcaf984b70", NULL },
        { "4f68bce3-e8cd-4db1-96e7-fbcaf984b7099", NULL },
        { "", NULL },
        { NULL, NULL },
};

static void test_type_names(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(name_cases); i++)
                g_assert_cmpstr(parttable_type_name(name_cases[i].type), ==, name_cases[i].name);
}

/* An entry of a table in memory. */
static PartEntry entry(uint32_t number, const char *type_name, const char *fstype,
                       const char *label) {
        PartEntry e = { .number = number, .start = number * 1048576ULL, .size = 1048576 };

        g_strlcpy(e.type, "0fc63daf-8483-4772-8e79-3d69d8477de4", sizeof(e.type));
        g_strlcpy(e.type_name, type_name, sizeof(e.type_name));
        g_strlcpy(e.fstype, fstype, sizeof(e.fstype));
        g_strlcpy(e.usage, streq(fstype, "swap") || streq(fstype, "crypto_LUKS") ?
                                   (streq(fstype, "swap") ? "other" : "crypto") :
                                   (*fstype ? "filesystem" : ""),
                  sizeof(e.usage));
        g_strlcpy(e.label, label, sizeof(e.label));
        return e;
}

static PartTable *table(const char *type, size_t n, const PartEntry *entries) {
        PartTable *t = g_new0(PartTable, 1);

        g_strlcpy(t->type, type, sizeof(t->type));
        t->n_entries = n;
        memcpy(t->entries, entries, n * sizeof(PartEntry));
        return t;
}

typedef struct MountableCase {
        PartEntry e;
        bool mountable;
        const char *why;
} MountableCase;

static void test_mountable(void) {
        PartEntry extended = entry(2, "", "", ""), beyond = entry(3, "", "ext4", "x"),
                  empty = entry(4, "", "ext4", "x"), ambiguous = entry(5, "", "", "");

        extended.extended = true;
        beyond.beyond_end = true;
        empty.size = 0;
        ambiguous.ambiguous = true;
        const MountableCase cases[] = {
                { entry(1, "linux-generic", "ext4", "data"), true, NULL },
                { entry(1, "esp", "vfat", "EFI"), true, NULL },
                { entry(1, "", "xfs", ""), true, NULL },
                { entry(1, "", "squashfs", ""), true, NULL },
                { entry(1, "swap", "swap", ""), false, "holds no filesystem but something else" },
                { entry(1, "", "crypto_LUKS", ""), false,
                  "holds no filesystem but something else" },
                { entry(1, "", "", ""), false, "holds no filesystem that usermount recognises" },
                { entry(1, "", "minix", ""), false, "of a type that usermount does not mount" },
                { extended, false, "is an extended partition" },
                { beyond, false, "reaches past the end of the disk" },
                { empty, false, "is empty" },
                { ambiguous, false, "holds more than one filesystem signature" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const char *why = "untouched";

                g_assert_cmpint(partition_mountable(&cases[i].e, &why), ==, cases[i].mountable);
                if (cases[i].mountable)
                        g_assert_null(why);
                else
                        g_assert_nonnull(strstr(why, cases[i].why));
                g_assert_cmpint(partition_mountable(&cases[i].e, NULL), ==, cases[i].mountable);
        }
}

typedef struct SelectCase {
        const char *what;
        uint32_t requested;
        int r;
        UmErrorKind kind;
        uint32_t chosen;        /* on success */
        const char *message;    /* exactly, on failure */
} SelectCase;

/* ESP (vfat), data (ext4), swap, root (ext4): two mountable, as a VM disk. */
static PartTable *vm_disk(void) {
        const PartEntry e[] = {
                entry(1, "esp", "vfat", "EFI"),
                entry(2, "linux-generic", "ext4", "data"),
                entry(3, "swap", "swap", ""),
                entry(4, "root-x86-64", "ext4", "root"),
        };

        return table("gpt", G_N_ELEMENTS(e), e);
}

static void test_select(void) {
        g_autofree PartTable *vm = vm_disk();
        const SelectCase cases[] = {
                { "vm 2", 2, 0, 0, 2, NULL },
                { "vm 4", 4, 0, 0, 4, NULL },
                { "vm 1", 1, 0, 0, 1, NULL },
                { "vm none", 0, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE, 0,
                  "The image has a GPT partition table with 3 partitions usermount can mount: "
                  "1 (esp, vfat \"EFI\"), 2 (linux-generic, ext4 \"data\"), 4 (root-x86-64, "
                  "ext4 \"root\"); choose one with the 'partition' parameter (usermount mount "
                  "--partition=N)." },
                { "vm swap", 3, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE, 0,
                  "Partition 3 of the image holds no filesystem but something else (swap, an "
                  "encrypted volume, a RAID member); nothing was mounted." },
                { "vm 5", 5, -ENOENT, UM_ERROR_KIND_INVALID_ARGUMENT, 0,
                  "The image's GPT partition table has no partition 5; its partitions: 1 (esp, "
                  "vfat \"EFI\"), 2 (linux-generic, ext4 \"data\"), 3 (swap, swap), 4 "
                  "(root-x86-64, ext4 \"root\")." },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const SelectCase *c = &cases[i];
                const PartEntry *e = NULL;
                UmError err = {};

                g_test_message("%s", c->what);
                g_assert_cmpint(partition_select(vm, c->requested, "image", &e, &err), ==, c->r);
                if (c->r == 0) {
                        g_assert_nonnull(e);
                        g_assert_cmpuint(e->number, ==, c->chosen);
                        continue;
                }
                g_assert_null(e);
                g_assert_cmpint(err.kind, ==, c->kind);
                g_assert_cmpstr(err.message, ==, c->message);
        }
}

/* The only mountable partition is chosen; the others need not be absent. */
static void test_select_only(void) {
        const PartEntry e[] = {
                entry(1, "swap", "swap", ""),
                entry(2, "", "", ""),
                entry(3, "linux-generic", "btrfs", "data"),
        };
        g_autofree PartTable *t = table("gpt", G_N_ELEMENTS(e), e);
        const PartEntry *chosen = NULL;
        UmError err = {};

        g_assert_cmpint(partition_select(t, 0, "image", &chosen, &err), ==, 0);
        g_assert_cmpuint(chosen->number, ==, 3);
}

static void test_select_none(void) {
        const PartEntry e[] = { entry(1, "swap", "swap", ""), entry(5, "", "", "") };
        g_autofree PartTable *t = table("dos", G_N_ELEMENTS(e), e);
        g_autofree PartTable *empty = table("gpt", 0, NULL);
        const PartEntry *chosen = NULL;
        UmError err = {};

        g_assert_cmpint(partition_select(t, 0, "image", &chosen, &err), ==, -ENOENT);
        g_assert_cmpint(err.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        g_assert_cmpstr(err.message, ==,
                        "The image has an MBR partition table, and no partition usermount can "
                        "mount; its partitions: 1 (swap, swap), 5 "
                        "(0fc63daf-8483-4772-8e79-3d69d8477de4, no filesystem).");
        err = (UmError) {};
        g_assert_cmpint(partition_select(empty, 0, "image", &chosen, &err), ==, -ENOENT);
        g_assert_nonnull(strstr(err.message, "its partitions: none."));
        g_assert_null(chosen);
}

/* Whatever the disk says, the message stays within its buffer: labels are escaped and cut,
 * and a long list ends in "and N more". */
static void test_list_bounds(void) {
        g_autofree PartTable *t = g_new0(PartTable, 1);
        g_autofree char *long_label = g_strnfill(255, 'L');
        const PartEntry *chosen = NULL;
        char small[64], list[320];
        UmError err = {};

        g_strlcpy(t->type, "gpt\x1b[2J", sizeof(t->type));
        t->n_entries = PARTTABLE_MAX;
        for (size_t i = 0; i < PARTTABLE_MAX; i++) {
                t->entries[i] = entry((uint32_t) i + 1, "linux-generic", "ext4", long_label);
                if (i == 0)
                        g_strlcpy(t->entries[i].label, "evil\n\x1b[2Jlabel", 256);
        }
        partition_list(t, false, list, sizeof(list));
        g_assert_cmpuint(strlen(list), <, sizeof(list));
        g_assert_null(strchr(list, '\n'));
        g_assert_null(strchr(list, '\x1b'));
        g_assert_nonnull(strstr(list, "evil\\x0a\\x1b[2Jlabel"));
        g_assert_true(g_str_has_suffix(list, " more"));
        partition_list(t, true, small, sizeof(small));
        g_assert_cmpuint(strlen(small), <, sizeof(small));
        g_assert_true(g_str_has_prefix(small, "and 128 more") || g_str_has_suffix(small, "more"));

        g_assert_cmpint(partition_select(t, 0, "image", &chosen, &err), ==, -EINVAL);
        g_assert_cmpuint(strlen(err.message), <, sizeof(err.message));
        g_assert_nonnull(strstr(err.message, "128 partitions usermount can mount"));
        g_assert_nonnull(strstr(err.message, "gpt\\x1b[2J"));
        g_assert_nonnull(strstr(err.message, "more; choose one"));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/parttable/type-names", test_type_names);
        g_test_add_func("/partition/mountable", test_mountable);
        g_test_add_func("/partition/select", test_select);
        g_test_add_func("/partition/select-only", test_select_only);
        g_test_add_func("/partition/select-none", test_select_none);
        g_test_add_func("/partition/list-bounds", test_list_bounds);
        return g_test_run();
}
