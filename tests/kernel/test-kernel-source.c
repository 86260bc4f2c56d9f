/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * source_inspect_fd() and source_probe() against real fds and real images: what is
 * accepted, every kind of fd that is refused (docs/security.md, classes 12, 13, 16), and
 * that probing never moves the caller's file offset.
 */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "fsrefs.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"
#include "parttable.h"
#include "source.h"

/* A SourceInfo/SourceProbe pattern that the refusals must leave untouched. */
#define SENTINEL 0x5a

static void assert_untouched(const void *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                g_assert_cmpint(((const unsigned char *) p)[i], ==, SENTINEL);
}

static void assert_inspect_refused(int fd, const char *what, const char *needle) {
        SourceInfo info;
        UmError e = {};
        int r;

        memset(&info, SENTINEL, sizeof(info));
        r = source_inspect_fd(fd, &info, &e);
        ku_note("%s: %s", what, e.message);
        g_assert_cmpint(r, ==, -EINVAL);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        g_assert_cmpint(e.error, ==, EINVAL);
        if (!strstr(e.message, needle))
                g_error("refusing %s: \"%s\" does not mention \"%s\"", what, e.message, needle);
        assert_untouched(&info, sizeof(info));
}

static void test_inspect_image(const char *arg) {
        _cleanup_close_ int rw = -EBADF, ro = -EBADF;
        const char *image = ku_image("ext4");
        SourceInfo info;
        UmError e = {};

        rw = open(image, O_RDWR | O_CLOEXEC);
        ro = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(rw, >=, 0);
        g_assert_cmpint(ro, >=, 0);

        g_assert_cmpint(source_inspect_fd(rw, &info, &e), ==, 0);
        g_assert_cmpint(info.type, ==, SOURCE_IMAGE);
        g_assert_false(info.read_only);

        g_assert_cmpint(source_inspect_fd(ro, &info, &e), ==, 0);
        g_assert_cmpint(info.type, ==, SOURCE_IMAGE);
        g_assert_true(info.read_only);
}

static void test_inspect_block_device(const char *arg) {
        _cleanup_close_ int image_fd = -EBADF, loop_fd = -EBADF, ro_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        SourceInfo info;
        struct stat st;
        UmError e = {};

        image_fd = open(ku_image("ext4"), O_RDWR | O_CLOEXEC);
        g_assert_cmpint(image_fd, >=, 0);
        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, &e), ==, 0);
        g_assert_cmpint(fstat(loop_fd, &st), ==, 0);

        g_assert_cmpint(source_inspect_fd(loop_fd, &info, &e), ==, 0);
        g_assert_cmpint(info.type, ==, SOURCE_BLOCK_DEVICE);
        g_assert_false(info.read_only);
        g_assert_cmpuint(info.rdev, ==, st.st_rdev);
        g_assert_false(info.removable); /* /sys/devices/virtual/block/loopN */

        ro_fd = open(path, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(ro_fd, >=, 0);
        g_assert_cmpint(source_inspect_fd(ro_fd, &info, &e), ==, 0);
        g_assert_cmpint(info.type, ==, SOURCE_BLOCK_DEVICE);
        g_assert_true(info.read_only);
}

static int open_tree_fd(void) {
        return open_tree(AT_FDCWD, ku_dir(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

static int fsmount_fd(void) {
        _cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);

        g_assert_cmpint(fs, >=, 0);
        g_assert_cmpint(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        return fsmount(fs, FSMOUNT_CLOEXEC, 0);
}

static void test_inspect_refusals(const char *arg) {
        const char *image = ku_image("ext4");
        const char *empty = ku_image("empty");
        int sv[2], p[2];
        sigset_t mask;
        int fd;

        fd = open(image, O_PATH | O_CLOEXEC);
        assert_inspect_refused(fd, "O_PATH fd", "O_PATH");
        close(fd);

        fd = open("/etc/shadow", O_PATH | O_CLOEXEC); /* a root-only file, docs/security.md class 12 */
        if (fd >= 0) {
                assert_inspect_refused(fd, "O_PATH fd of /etc/shadow", "O_PATH");
                close(fd);
        }

        fd = open(image, O_WRONLY | O_CLOEXEC);
        assert_inspect_refused(fd, "write-only fd", "not open for reading");
        close(fd);

        fd = open(ku_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_inspect_refused(fd, "directory", "directory");
        close(fd);

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        assert_inspect_refused(sv[0], "socket", "socket");
        close(sv[0]);
        close(sv[1]);

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        assert_inspect_refused(p[0], "pipe", "pipe");
        close(p[0]);
        close(p[1]);

        fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        assert_inspect_refused(fd, "/dev/null", "character device");
        close(fd);

        fd = eventfd(0, EFD_CLOEXEC);
        assert_inspect_refused(fd, "eventfd", "eventfd");
        close(fd);

        sigemptyset(&mask);
        fd = signalfd(-1, &mask, SFD_CLOEXEC);
        assert_inspect_refused(fd, "signalfd", "signalfd");
        close(fd);

        fd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        g_assert_cmpint(fd, >=, 0);
        assert_inspect_refused(fd, "pidfd", "pidfd");
        close(fd);

        fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        assert_inspect_refused(fd, "nsfs", "nsfs");
        close(fd);

        fd = memfd_create("usermount-test", MFD_CLOEXEC);
        assert_inspect_refused(fd, "empty memfd", "memfd is empty");
        close(fd);

        fd = open(empty, O_RDONLY | O_CLOEXEC);
        assert_inspect_refused(fd, "empty file", "file is empty");
        close(fd);

        fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        assert_inspect_refused(fd, "procfs file", "procfs");
        close(fd);

        fd = open("/sys/kernel/uevent_seqnum", O_RDONLY | O_CLOEXEC);
        assert_inspect_refused(fd, "sysfs file", "sysfs");
        close(fd);

        /* Mount fds (another mount, docs/security.md class 13) are O_PATH descriptors. */
        fd = open_tree_fd();
        g_assert_cmpint(fd, >=, 0);
        assert_inspect_refused(fd, "open_tree fd", "O_PATH");
        close(fd);

        fd = fsmount_fd();
        g_assert_cmpint(fd, >=, 0);
        assert_inspect_refused(fd, "fsmount fd", "O_PATH");
        close(fd);

        fd = open_tree(AT_FDCWD, image, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        assert_inspect_refused(fd, "open_tree fd of the image file", "O_PATH");
        close(fd);

        /* Not an fd at all. */
        {
                SourceInfo info;
                UmError e = {};

                memset(&info, SENTINEL, sizeof(info));
                g_assert_cmpint(source_inspect_fd(999, &info, &e), ==, -EBADF);
                g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
                assert_untouched(&info, sizeof(info));
        }
}

/* A memfd holding a real image is a legitimate source: the caller's own memory. */
static void test_inspect_memfd_image(const char *arg) {
        _cleanup_close_ int fd = -EBADF;
        g_autofree char *data = NULL;
        SourceInfo info;
        SourceProbe probe;
        UmError e = {};
        gsize len;

        g_assert_true(g_file_get_contents(ku_image("squashfs"), &data, &len, NULL));
        fd = memfd_create("usermount-image", MFD_CLOEXEC);
        g_assert_cmpint(write(fd, data, len), ==, (ssize_t) len);
        g_assert_cmpint(source_inspect_fd(fd, &info, &e), ==, 0);
        g_assert_cmpint(info.type, ==, SOURCE_IMAGE);
        g_assert_cmpint(source_probe(fd, &probe, &e), ==, 0);
        g_assert_cmpstr(probe.fstype, ==, "squashfs");
}

static void assert_probe(int fd, const char *fstype) {
        SourceProbe p;
        UmError e = {};
        off_t before = 4321;
        int r;

        g_assert_cmpint(lseek(fd, before, SEEK_SET), ==, before);
        r = source_probe(fd, &p, &e);
        if (r < 0)
                g_error("probing %s: %s", fstype, e.message);
        g_assert_cmpint(lseek(fd, 0, SEEK_CUR), ==, before); /* the caller's offset */
        g_assert_cmpstr(p.fstype, ==, fstype);
        if (streq(fstype, "ext4") || streq(fstype, "xfs") || streq(fstype, "btrfs")) {
                g_autofree char *label = g_strdup_printf("um-%s", fstype);

                g_assert_cmpstr(p.label, ==, label);
        } else
                g_assert_cmpstr(p.label, ==, "");
        if (!streq(fstype, "squashfs")) /* squashfs has no UUID */
                g_assert_cmpuint(strlen(p.uuid), >=, 8);
}

static void test_probe_type(const char *fstype) {
        _cleanup_close_ int fd = open(ku_image(fstype), O_RDONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        assert_probe(fd, fstype);
}

/* The same through a loop device: probing a block device fd. */
static void test_probe_block_device(const char *arg) {
        _cleanup_close_ int image_fd = -EBADF, loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};

        image_fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(loop_attach(image_fd, true, &loop_fd, &path, &e), ==, 0);
        assert_probe(loop_fd, "ext4");
}

static void assert_probe_refused(int fd, const char *what, const char *needle) {
        SourceProbe p;
        UmError e = {};
        int r;

        memset(&p, SENTINEL, sizeof(p));
        r = source_probe(fd, &p, &e);
        ku_note("%s: %s", what, e.message);
        g_assert_cmpint(r, ==, -EINVAL);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        if (!strstr(e.message, needle))
                g_error("probing %s: \"%s\" does not mention \"%s\"", what, e.message, needle);
        assert_untouched(&p, sizeof(p));
}

static void test_probe_partitions(const char *arg) {
        _cleanup_close_ int fd = -EBADF, loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};

        fd = open(ku_image("parted"), O_RDONLY | O_CLOEXEC);
        assert_probe_refused(fd, "partitioned image", "partition table (partitions 1, 2)");
        assert_probe_refused(fd, "partitioned image", "mount a partition instead");

        g_assert_cmpint(loop_attach(fd, true, &loop_fd, &path, &e), ==, 0);
        assert_probe_refused(loop_fd, "partitioned disk", "partition table (partitions 1, 2)");
}

/* source_probe_as(): the one prober of the type; it finds what source_probe() found, and
 * nothing when the type is another, however ambiguous the source. */
static void test_probe_as(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int amb = open(ku_image("ambiguous"), O_RDONLY | O_CLOEXEC);
        SourceProbe all, one;
        UmError e = {};

        g_assert_cmpint(source_probe(fd, &all, &e), ==, 0);
        g_assert_cmpint(source_probe_as(fd, "ext4", &one, &e), ==, 0);
        g_assert_cmpstr(one.fstype, ==, all.fstype);
        g_assert_cmpstr(one.uuid, ==, all.uuid);
        g_assert_cmpstr(one.label, ==, all.label);
        g_assert_cmpint(source_probe_as(fd, "xfs", &one, &e), ==, -EINVAL);
        g_assert_nonnull(strstr(e.message, "no filesystem was recognised"));
        e = (UmError) {};
        g_assert_cmpint(source_probe_as(fd, "", &one, &e), ==, -EINVAL);
        /* The ext4 + xfs image is refused as a whole, but holds a valid ext4 superblock. */
        e = (UmError) {};
        g_assert_cmpint(source_probe_as(amb, "ext4", &one, &e), ==, 0);
        g_assert_cmpstr(one.fstype, ==, "ext4");
}

static void test_probe_nothing(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("zeros"), O_RDONLY | O_CLOEXEC);

        assert_probe_refused(fd, "zeros", "no filesystem was recognised");
}

static void test_probe_ambiguous(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("ambiguous"), O_RDONLY | O_CLOEXEC);

        assert_probe_refused(fd, "ext4 + xfs signatures", "more than one filesystem");
}

static void test_probe_unreadable(const char *arg) {
        _cleanup_close_ int path_fd = open(ku_image("ext4"), O_PATH | O_CLOEXEC);
        _cleanup_close_ int wr_fd = open(ku_image("ext4"), O_WRONLY | O_CLOEXEC);

        /* Probing must not reopen an fd that never proved read access. */
        assert_probe_refused(path_fd, "O_PATH fd", "not open for reading");
        assert_probe_refused(wr_fd, "write-only fd", "not open for reading");
}

/* ---- partitioned images (tests/make-partitioned-image.sh) ---------------------------- */

static PartTable *read_table(const char *image) {
        _cleanup_close_ int fd = open(ku_image(image), O_RDONLY | O_CLOEXEC);
        PartTable *t = g_new0(PartTable, 1);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(parttable_read(fd, t), ==, 0);
        return t;
}

/* The table as sfdisk wrote it, and what mkfs put in each partition. */
static void test_table_gpt(const char *arg) {
        g_autofree PartTable *t = read_table("part-gpt");
        const PartEntry *e;

        g_assert_cmpstr(t->type, ==, "gpt");
        g_assert_cmpuint(t->disk_size, ==, 24 << 20);
        g_assert_cmpuint(t->n_entries, ==, 4);
        e = parttable_find(t, 1);
        g_assert_nonnull(e);
        g_assert_cmpuint(e->start, ==, 2048 * 512);
        g_assert_cmpuint(e->size, ==, 8192 * 512);
        g_assert_cmpstr(e->type, ==, "c12a7328-f81f-11d2-ba4b-00a0c93ec93b");
        g_assert_cmpstr(e->type_name, ==, "esp");
        g_assert_cmpstr(e->name, ==, "EFI System");
        g_assert_cmpuint(strlen(e->uuid), ==, 36);
        g_assert_cmpstr(e->fstype, ==, "");
        e = parttable_find(t, 2);
        g_assert_cmpuint(e->start, ==, 10240 * 512);
        g_assert_cmpuint(e->size, ==, 16384 * 512);
        g_assert_cmpstr(e->type_name, ==, "linux-generic");
        g_assert_cmpstr(e->name, ==, "data");
        g_assert_cmpstr(e->fstype, ==, "ext4");
        g_assert_cmpstr(e->usage, ==, "filesystem");
        g_assert_cmpstr(e->label, ==, "um-part2");
        g_assert_cmpuint(strlen(e->fsuuid), ==, 36);
        e = parttable_find(t, 3);
        g_assert_cmpstr(e->type_name, ==, "swap");
        g_assert_cmpstr(e->fstype, ==, "swap");
        g_assert_cmpstr(e->usage, ==, "other");
        e = parttable_find(t, 4);
        g_assert_cmpstr(e->type_name, ==, "root-x86-64");
        g_assert_cmpstr(e->label, ==, "um-part4");
        g_assert_null(parttable_find(t, 5));
        g_assert_null(parttable_find(t, 0));
}

static void test_table_mbr(const char *arg) {
        g_autofree PartTable *t = read_table("part-mbr");
        const PartEntry *e;

        g_assert_cmpstr(t->type, ==, "dos");
        g_assert_cmpuint(t->n_entries, ==, 3);
        e = parttable_find(t, 1);
        g_assert_cmpstr(e->type, ==, "0x83");
        g_assert_cmpstr(e->type_name, ==, "");
        g_assert_cmpstr(e->label, ==, "um-mbr1");
        e = parttable_find(t, 2);
        g_assert_cmpstr(e->type, ==, "0x05");
        g_assert_true(e->extended);
        e = parttable_find(t, 5);
        g_assert_nonnull(e);
        g_assert_cmpuint(e->start, ==, 20480 * 512);
        g_assert_cmpstr(e->label, ==, "um-mbr5");
}

/* A partition that reaches past the end of the image is marked, not probed past the end. */
static void test_table_beyond(const char *arg) {
        g_autofree PartTable *t = read_table("part-beyond");

        g_assert_cmpuint(t->n_entries, ==, 2);
        g_assert_false(parttable_find(t, 1)->beyond_end);
        g_assert_true(parttable_find(t, 2)->beyond_end);
        g_assert_cmpstr(parttable_find(t, 2)->fstype, ==, "");
}

static void test_table_none(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        g_autofree PartTable *t = g_new0(PartTable, 1);

        g_assert_cmpint(parttable_read(fd, t), ==, 0);
        g_assert_cmpstr(t->type, ==, "");
        g_assert_cmpuint(t->n_entries, ==, 0);
}

/* The limit: a table with more partitions than usermount reads is refused as a whole. */
static void test_table_too_many(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("part-many"), O_RDONLY | O_CLOEXEC);
        g_autofree PartTable *t = g_new0(PartTable, 1);
        SourcePartition part;
        SourceProbe p;
        UmError e = {};

        g_assert_cmpint(parttable_read(fd, t), ==, -E2BIG);
        g_assert_cmpint(source_probe_image(fd, 0, &p, &part, &e), ==, -E2BIG);
        ku_note("%s", e.message);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        g_assert_nonnull(strstr(e.message, "more than 128 partitions"));
}

typedef struct ImageCase {
        const char *image;
        uint32_t partition;
        int r;                  /* 0, or the -errno */
        UmErrorKind kind;
        const char *needle;     /* in the message; on success, the label */
        uint32_t number;        /* on success: the partition chosen */
        uint64_t offset, size;
} ImageCase;

/* source_probe_image(): which partition, and every refusal a user can meet. */
static void test_probe_image_choice(const char *arg) {
        static const ImageCase cases[] = {
                { "part-gpt", 2, 0, 0, "um-part2", 2, 10240 * 512, 16384 * 512 },
                { "part-gpt", 4, 0, 0, "um-part4", 4, 34816 * 512, 8192 * 512 },
                { "part-gpt", 0, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "2 partitions usermount can mount: 2 (linux-generic, ext4 \"um-part2\"), "
                  "4 (root-x86-64, ext4 \"um-part4\"); choose one with the 'partition' "
                  "parameter" },
                { "part-gpt", 1, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "Partition 1 of the image holds no filesystem that usermount recognises" },
                { "part-gpt", 3, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "Partition 3 of the image holds no filesystem but something else" },
                { "part-gpt", 5, -ENOENT, UM_ERROR_KIND_INVALID_ARGUMENT,
                  "has no partition 5; its partitions: 1 (esp, no filesystem), 2 (linux-generic, "
                  "ext4 \"um-part2\"), 3 (swap, swap), 4 (root-x86-64, ext4 \"um-part4\")" },
                { "part-gpt", UINT32_MAX, -ENOENT, UM_ERROR_KIND_INVALID_ARGUMENT,
                  "has no partition 4294967295" },
                { "part-gpt-one", 0, 0, 0, "um-only", 1, 2048 * 512, 16384 * 512 },
                { "part-mbr", 5, 0, 0, "um-mbr5", 5, 20480 * 512, 16384 * 512 },
                { "part-mbr", 1, 0, 0, "um-mbr1", 1, 2048 * 512, 16384 * 512 },
                { "part-mbr", 2, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "Partition 2 of the image is an extended partition" },
                { "part-mbr", 0, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "has an MBR partition table with 2 partitions usermount can mount: "
                  "1 (0x83, ext4 \"um-mbr1\"), 5 (0x83, ext4 \"um-mbr5\")" },
                { "part-beyond", 0, 0, 0, "um-in", 1, 2048 * 512, 16384 * 512 },
                { "part-beyond", 2, -EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                  "Partition 2 of the image reaches past the end of the disk" },
                { "part-empty", 0, -ENOENT, UM_ERROR_KIND_INVALID_SOURCE,
                  "The image has a GPT partition table, and no partition usermount can mount; "
                  "its partitions: none" },
                { "ext4", 1, -EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                  "Parameter 'partition' was given, but the image has no partition table" },
                { "ext4", 0, 0, 0, "um-ext4", 0, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const ImageCase *c = &cases[i];
                _cleanup_close_ int fd = open(ku_image(c->image), O_RDONLY | O_CLOEXEC);
                SourcePartition part;
                SourceProbe p;
                UmError e = {};
                int r;

                g_assert_cmpint(fd, >=, 0);
                memset(&part, SENTINEL, sizeof(part));
                r = source_probe_image(fd, c->partition, &p, &part, &e);
                ku_note("%s, partition %u: %d %s", c->image, c->partition, r, e.message);
                g_assert_cmpint(r, ==, c->r);
                if (r < 0) {
                        g_assert_cmpint(e.kind, ==, c->kind);
                        if (!strstr(e.message, c->needle))
                                g_test_fail_printf("\"%s\" does not say \"%s\"", e.message,
                                                   c->needle);
                        assert_untouched(&part, sizeof(part));
                        continue;
                }
                g_assert_cmpstr(p.fstype, ==, "ext4");
                g_assert_cmpstr(p.label, ==, c->needle);
                g_assert_cmpuint(part.number, ==, c->number);
                g_assert_cmpuint(part.offset, ==, c->offset);
                g_assert_cmpuint(part.size, ==, c->size);
        }
}

/* The re-check before the mount probes the partition's range, and only that range. */
static void test_probe_as_in_partition(const char *arg) {
        _cleanup_close_ int fd = open(ku_image("part-gpt"), O_RDONLY | O_CLOEXEC);
        const SourcePartition two = { 2, 10240 * 512, 16384 * 512 };
        const SourcePartition three = { 3, 26624 * 512, 8192 * 512 };
        SourceProbe p;
        UmError e = {};

        g_assert_cmpint(source_probe_as_in(fd, &two, "ext4", &p, &e), ==, 0);
        g_assert_cmpstr(p.label, ==, "um-part2");
        g_assert_cmpint(fsrefs_check_superblock_in(fd, two.offset, two.size, "ext4", &e), ==, 0);
        g_assert_cmpint(source_probe_as_in(fd, &three, "ext4", &p, &e), ==, -EINVAL);
        /* The whole image holds no ext4 at its start. */
        e = (UmError) {};
        g_assert_cmpint(source_probe_as(fd, "ext4", &p, &e), ==, -EINVAL);
        /* A range too small for the superblock is not read past its end. */
        e = (UmError) {};
        g_assert_cmpint(fsrefs_check_superblock_in(fd, two.offset, 1024, "ext4", &e), <, 0);
}

/* Partitions of a disk are block devices of their own: a disk fd with a table is refused
 * whatever partition is asked for (the probe job refuses 'partition' for block devices). */
static void test_probe_partitioned_block_device(const char *arg) {
        _cleanup_close_ int fd = -EBADF, loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};

        fd = open(ku_image("part-gpt"), O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(loop_attach(fd, true, &loop_fd, &path, &e), ==, 0);
        assert_probe_refused(loop_fd, "partitioned disk",
                             "partition table (partitions 1, 2, 3, 4)");
}

int main(int argc, char **argv) {
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        ku_add("/source/inspect/image", test_inspect_image, NULL, "ext4");
        ku_add("/source/inspect/block-device", test_inspect_block_device, NULL, "ext4");
        ku_add("/source/inspect/refusals", test_inspect_refusals, NULL, "ext4");
        ku_add("/source/inspect/memfd-image", test_inspect_memfd_image, NULL, "squashfs");
        for (const char *const *t = ku_fstypes; *t; t++) {
                g_autofree char *path = g_strdup_printf("/source/probe/type/%s", *t);

                ku_add(path, test_probe_type, *t, *t);
        }
        ku_add("/source/probe/block-device", test_probe_block_device, NULL, "ext4");
        ku_add("/source/probe/partitions", test_probe_partitions, NULL, "parted");
        ku_add("/source/probe/nothing", test_probe_nothing, NULL, "zeros");
        ku_add("/source/probe/as-type", test_probe_as, NULL, "ambiguous");
        ku_add("/source/probe/ambiguous", test_probe_ambiguous, NULL, "ambiguous");
        ku_add("/source/probe/unreadable", test_probe_unreadable, NULL, "ext4");
        ku_add("/source/table/gpt", test_table_gpt, NULL, "part-gpt");
        ku_add("/source/table/mbr", test_table_mbr, NULL, "part-mbr");
        ku_add("/source/table/beyond-end", test_table_beyond, NULL, "part-beyond");
        ku_add("/source/table/none", test_table_none, NULL, "ext4");
        ku_add("/source/table/too-many", test_table_too_many, NULL, "part-many");
        ku_add("/source/probe/image-partition", test_probe_image_choice, NULL, "part-gpt");
        ku_add("/source/probe/as-type-in-partition", test_probe_as_in_partition, NULL,
               "part-gpt");
        ku_add("/source/probe/partitioned-block-device", test_probe_partitioned_block_device,
               NULL, "part-gpt");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
