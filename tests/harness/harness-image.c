/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem images and loop devices: populating a directory from a spec (files, device
 * nodes, setuid copies, file capabilities), building ext4/squashfs/erofs images from a
 * staging directory and xfs/btrfs images by loop-mounting them, and auto-clearing loop
 * devices for the harness and for tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/loop.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <glib.h>
#include <sys/capability.h>

#include "macro.h"

#include "harness-private.h"

#define MIB (UINT64_C(1024) * 1024)

typedef enum ImageBuild {
        BUILD_FROM_DIRECTORY, /* mkfs reads a staging directory */
        BUILD_BY_MOUNTING,    /* mkfs an empty image, mount it, populate it */
} ImageBuild;

typedef struct FilesystemInfo {
        const char *name;
        ImageBuild build;
        uint64_t default_size; /* 0: sized to content */
        bool has_label;
        bool read_only;        /* the kernel only mounts it read-only */
} FilesystemInfo;

static const FilesystemInfo filesystems[] = {
        { "ext4", BUILD_FROM_DIRECTORY, 32 * MIB, true, false },
        /* xfsprogs 6.1 refuses filesystems smaller than 300 MiB. */
        { "xfs", BUILD_BY_MOUNTING, 320 * MIB, true, false },
        { "btrfs", BUILD_BY_MOUNTING, 128 * MIB, true, false },
        { "squashfs", BUILD_FROM_DIRECTORY, 0, false, true },
        { "erofs", BUILD_FROM_DIRECTORY, 0, true, true },
};

typedef struct HeldLoop {
        char *device;
        int fd;
} HeldLoop;

static GPtrArray *held_loops; /* of HeldLoop*, devices from harness_loop_attach() */
static unsigned image_counter, mount_counter;

static const FilesystemInfo *filesystem_info(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(filesystems); i++)
                if (streq(filesystems[i].name, name))
                        return &filesystems[i];
        return NULL;
}

/* ---------------------------------------------------------------------------------- */
/* Loop devices                                                                        */

/* A new auto-clearing loop device for path: it goes away as soon as nobody has it open
 * or mounted, so no crash can leak it. */
static int loop_configure(const char *path, bool read_only, int *ret_fd, char **ret_device) {
        _cleanup_close_ int file = -EBADF, control = -EBADF;
        int mode = (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;

        file = open(path, mode);
        if (file < 0)
                return -errno;
        control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (control < 0)
                return -errno;

        for (int attempt = 0; attempt < 64; attempt++) {
                struct loop_config config = {
                        .fd = (uint32_t) file,
                        .info.lo_flags = LO_FLAGS_AUTOCLEAR | (read_only ? LO_FLAGS_READ_ONLY : 0),
                };
                g_autofree char *device = NULL;
                _cleanup_close_ int loop = -EBADF;
                int n = ioctl(control, LOOP_CTL_GET_FREE);

                if (n < 0)
                        return -errno;
                device = g_strdup_printf("/dev/loop%d", n);
                loop = open(device, mode);
                if (loop < 0)
                        return -errno;
                g_strlcpy((char *) config.info.lo_file_name, path, LO_NAME_SIZE);
                if (ioctl(loop, LOOP_CONFIGURE, &config) == 0) {
                        *ret_fd = TAKE_FD(loop);
                        *ret_device = g_steal_pointer(&device);
                        return 0;
                }
                if (errno != EBUSY)
                        return -errno;
                /* Somebody else took that device between GET_FREE and CONFIGURE. */
        }
        return -EBUSY;
}

int harness_loop_attach(const char *path, bool read_only, char **ret_device) {
        HeldLoop *l = g_new0(HeldLoop, 1);
        int r;

        r = loop_configure(path, read_only, &l->fd, &l->device);
        if (r < 0) {
                harness_log("cannot attach %s to a loop device: %s", path, g_strerror(-r));
                g_free(l);
                return r;
        }
        if (!held_loops)
                held_loops = g_ptr_array_new();
        g_ptr_array_add(held_loops, l);
        *ret_device = g_strdup(l->device);
        return 0;
}

static void held_loop_free(HeldLoop *l) {
        /* Auto-clearing: closing the last reference detaches it; LOOP_CLR_FD first so a
         * device that is still mounted goes as soon as it is unmounted. */
        ioctl(l->fd, LOOP_CLR_FD);
        safe_close(l->fd);
        g_free(l->device);
        g_free(l);
}

int harness_loop_detach(const char *device) {
        for (guint i = 0; held_loops && i < held_loops->len; i++) {
                HeldLoop *l = held_loops->pdata[i];

                if (streq(l->device, device)) {
                        g_ptr_array_remove_index(held_loops, i);
                        held_loop_free(l);
                        return 0;
                }
        }
        return -ENOENT;
}

void harness_loops_release(void) {
        while (held_loops && held_loops->len > 0) {
                HeldLoop *l = held_loops->pdata[held_loops->len - 1];

                g_ptr_array_remove_index(held_loops, held_loops->len - 1);
                held_loop_free(l);
        }
}

/* Indexes of the loop devices sysfs lists; *ret_free (may be NULL) counts those with no
 * backing file. */
static GArray *loop_indexes(unsigned *ret_free) {
        g_autoptr(GDir) dir = g_dir_open("/sys/block", 0, NULL);
        GArray *indexes = g_array_new(FALSE, FALSE, sizeof(int));
        const char *name;
        unsigned free_count = 0;

        while (dir && (name = g_dir_read_name(dir))) {
                g_autofree char *backing = NULL;
                int n;

                if (sscanf(name, "loop%d", &n) != 1)
                        continue;
                g_array_append_val(indexes, n);
                backing = g_strdup_printf("/sys/block/%s/loop/backing_file", name);
                if (access(backing, F_OK) < 0)
                        free_count++;
        }
        if (ret_free)
                *ret_free = free_count;
        return indexes;
}

int harness_loops_note_existing(void) {
        g_autoptr(GArray) indexes = loop_indexes(NULL);
        g_autoptr(GString) list = g_string_new(NULL);

        for (guint i = 0; i < indexes->len; i++)
                g_string_append_printf(list, "%d\n", g_array_index(indexes, int, i));
        return harness_list_write(HARNESS_LIST_LOOPS_BEFORE, list->str);
}

int harness_loop_reserve(unsigned count, char ***ret_nodes) {
        g_autoptr(GArray) indexes = NULL;
        g_autoptr(GPtrArray) nodes = g_ptr_array_new_with_free_func(g_free);
        _cleanup_close_ int control = -EBADF;
        unsigned free_count;
        int next = 0;

        indexes = loop_indexes(&free_count);
        for (guint i = 0; i < indexes->len; i++)
                next = MAX(next, g_array_index(indexes, int, i) + 1);
        if (free_count < count) {
                control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
                if (control < 0)
                        return -errno;
        }
        /* New ones are not in the list of those from before: teardown removes them. */
        for (; free_count < count; next++) {
                if (ioctl(control, LOOP_CTL_ADD, next) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return -errno;
                }
                free_count++;
        }

        g_clear_pointer(&indexes, g_array_unref);
        indexes = loop_indexes(NULL);
        for (guint i = 0; i < indexes->len; i++) {
                char *node = g_strdup_printf("/dev/loop%d", g_array_index(indexes, int, i));

                if (access(node, F_OK) == 0)
                        g_ptr_array_add(nodes, node);
                else
                        g_free(node);
        }
        g_ptr_array_add(nodes, NULL);
        *ret_nodes = (char **) g_ptr_array_steal(nodes, NULL);
        return 0;
}

int harness_release_new_loops(int timeout_ms) {
        g_autofree char *before = harness_list_read(HARNESS_LIST_LOOPS_BEFORE);
        g_autoptr(GHashTable) known = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_autoptr(GArray) indexes = NULL;
        g_auto(GStrv) lines = NULL;
        _cleanup_close_ int control = -EBADF;
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;
        int removed = 0;

        if (!before)
                return 0;
        lines = g_strsplit(before, "\n", -1);
        for (size_t i = 0; lines[i]; i++)
                if (*lines[i])
                        g_hash_table_add(known, GINT_TO_POINTER(atoi(lines[i])));
        control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        if (control < 0)
                return 0;
        indexes = loop_indexes(NULL);
        for (guint i = 0; i < indexes->len; i++) {
                int n = g_array_index(indexes, int, i), r;

                if (g_hash_table_contains(known, GINT_TO_POINTER(n)))
                        continue;
                /* An auto-clearing device whose last mount just went is released a moment
                 * later; one bound to a file is somebody's. */
                for (;;) {
                        g_autofree char *backing = g_strdup_printf(
                                "/sys/block/loop%d/loop/backing_file", n);

                        r = access(backing, F_OK) == 0 ? -EBUSY
                            : ioctl(control, LOOP_CTL_REMOVE, n) < 0 ? -errno : 0;
                        if (r != -EBUSY || g_get_monotonic_time() >= deadline)
                                break;
                        g_usleep(20 * 1000);
                }
                if (r == 0)
                        removed++;
        }
        /* The list stays: the supervisor and the janitor come later, and find what was
         * still bound now released then. */
        return removed;
}

/* ---------------------------------------------------------------------------------- */
/* Mounting images                                                                     */

static int mount_image_at(const char *image, const char *fstype, unsigned long flags,
        const char *mountpoint) {
        const FilesystemInfo *info = filesystem_info(fstype);
        bool read_only = (flags & MS_RDONLY) || (info && info->read_only);
        g_autofree char *device = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = loop_configure(image, read_only, &fd, &device);
        if (r < 0)
                return r;
        if (mount(device, mountpoint, fstype, flags | (read_only ? MS_RDONLY : 0), NULL) < 0) {
                r = -errno;
                harness_log("cannot mount %s (%s on %s) on %s: %s", image, fstype, device,
                        mountpoint, g_strerror(-r));
                return r;
        }
        /* The mount keeps the device; closing fd makes it auto-clear on unmount. */
        return 0;
}

int harness_mount_image(const char *image, const char *fstype, unsigned long flags,
        char **ret_mountpoint) {
        g_autofree char *mountpoint = g_strdup_printf("%s/mnt/%u", harness.tmpdir,
                ++mount_counter);
        int r;

        if (mkdir(mountpoint, 0755) < 0)
                return -errno;
        r = mount_image_at(image, fstype, flags, mountpoint);
        if (r < 0) {
                rmdir(mountpoint);
                return r;
        }
        *ret_mountpoint = g_steal_pointer(&mountpoint);
        return 0;
}

int harness_umount(const char *mountpoint) {
        if (umount2(mountpoint, UMOUNT_NOFOLLOW) < 0)
                return -errno;
        if (rmdir(mountpoint) < 0)
                return -errno;
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Populating                                                                          */

static bool relative_path_ok(const char *path) {
        g_auto(GStrv) parts = NULL;

        if (isempty(path) || path[0] == '/')
                return false;
        parts = g_strsplit(path, "/", -1);
        for (size_t i = 0; parts[i]; i++)
                if (streq(parts[i], "..") || streq(parts[i], ".") || isempty(parts[i]))
                        return false;
        return true;
}

static int write_all(int fd, const char *data, size_t size) {
        while (size > 0) {
                ssize_t n = write(fd, data, size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                data += n;
                size -= (size_t) n;
        }
        return 0;
}

static int create_file(const char *path, const char *data, size_t size) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);

        if (fd < 0)
                return -errno;
        return write_all(fd, data, size);
}

static mode_t entry_mode(const HarnessEntry *e, mode_t fallback) {
        if (e->mode == HARNESS_MODE_ZERO)
                return 0;
        return e->mode ? (e->mode & 07777) : fallback;
}

static int populate_entry(const char *root, const HarnessEntry *e) {
        g_autofree char *path = NULL, *contents = NULL;
        mode_t mode = 0644;
        struct stat st;
        gsize size = 0;
        int r = 0;

        if (!relative_path_ok(e->path))
                return -EINVAL;
        path = g_build_filename(root, e->path, NULL);
        switch (e->type) {
        case HARNESS_ENTRY_DIR:
                mode = 0755;
                r = mkdir(path, 0700) < 0 ? -errno : 0;
                break;
        case HARNESS_ENTRY_FILE:
                r = create_file(path, strempty(e->data), strlen(strempty(e->data)));
                break;
        case HARNESS_ENTRY_COPY:
                if (!e->data || stat(e->data, &st) < 0 ||
                        !g_file_get_contents(e->data, &contents, &size, NULL))
                        return -ENOENT;
                mode = st.st_mode & 07777;
                r = create_file(path, contents, size);
                break;
        case HARNESS_ENTRY_SYMLINK:
                if (!e->data)
                        return -EINVAL;
                r = symlink(e->data, path) < 0 ? -errno : 0;
                if (r == 0 && lchown(path, e->uid, e->gid) < 0)
                        r = -errno;
                return r; /* symlinks have no mode of their own */
        case HARNESS_ENTRY_CHAR_DEVICE:
        case HARNESS_ENTRY_BLOCK_DEVICE:
        case HARNESS_ENTRY_FIFO:
                mode = 0600;
                r = mknod(path,
                            (e->type == HARNESS_ENTRY_CHAR_DEVICE    ? S_IFCHR
                                    : e->type == HARNESS_ENTRY_BLOCK_DEVICE ? S_IFBLK
                                                                            : S_IFIFO) |
                                    0600,
                            makedev(e->major, e->minor)) < 0
                            ? -errno
                            : 0;
                break;
        default:
                return -EINVAL;
        }
        if (r < 0)
                return r;

        /* chown() clears setuid bits and capabilities: owner, then mode, then caps. */
        if (lchown(path, e->uid, e->gid) < 0 || chmod(path, entry_mode(e, mode)) < 0)
                return -errno;
        if (e->caps) {
                cap_t caps = cap_from_text(e->caps);

                if (!caps)
                        return -EINVAL;
                r = cap_set_file(path, caps) < 0 ? -errno : 0;
                cap_free(caps);
        }
        return r;
}

static int populate(const char *root, const HarnessImageSpec *spec) {
        int r;

        for (const HarnessEntry *e = spec->entries; e && e->path; e++) {
                r = populate_entry(root, e);
                if (r < 0) {
                        harness_log("cannot create %s in the image: %s", e->path,
                                g_strerror(-r));
                        return r;
                }
        }
        if (chown(root, spec->root_uid, spec->root_gid) < 0 ||
                chmod(root, spec->root_mode ? spec->root_mode & 07777 : 0755) < 0)
                return -errno;
        return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

static int remove_tree(const char *path) {
        return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 ? -errno : 0;
}

/* ---------------------------------------------------------------------------------- */
/* erofs labels                                                                        */

/* crc32c as the kernel's erofs superblock check computes it: seed ~0, no final xor. */
static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t len) {
        while (len--) {
                crc ^= *p++;
                for (int k = 0; k < 8; k++)
                        crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
        }
        return crc;
}

#define EROFS_SUPER_OFFSET 1024
#define EROFS_MAGIC 0xE0F5E1E2u
#define EROFS_FEATURE_COMPAT_SB_CHKSUM 0x1u
#define EROFS_SB_CHECKSUM 4
#define EROFS_SB_FEATURE_COMPAT 8
#define EROFS_SB_BLKSZBITS 12
#define EROFS_SB_VOLUME_NAME 64

static uint32_t get_le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
               (uint32_t) p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

static uint32_t erofs_checksum(uint8_t *sb, size_t len) {
        uint8_t saved[4];
        uint32_t crc;

        memcpy(saved, sb + EROFS_SB_CHECKSUM, 4);
        put_le32(sb + EROFS_SB_CHECKSUM, 0);
        crc = crc32c(~0u, sb, len);
        memcpy(sb + EROFS_SB_CHECKSUM, saved, 4);
        return crc;
}

/* erofs-utils 1.5 cannot set a label: write the superblock's volume name (any bytes, up
 * to 16) and fix its checksum. The old checksum is verified first, so a wrong algorithm
 * cannot go unnoticed. */
static int erofs_set_label(const char *image, const char *label) {
        _cleanup_close_ int fd = open(image, O_RDWR | O_CLOEXEC);
        g_autofree uint8_t *sb = NULL;
        uint8_t head[16];
        size_t len;
        bool checked;

        if (fd < 0)
                return -errno;
        if (pread(fd, head, sizeof(head), EROFS_SUPER_OFFSET) != (ssize_t) sizeof(head))
                return -EIO;
        if (get_le32(head) != EROFS_MAGIC || head[EROFS_SB_BLKSZBITS] < 10 ||
                head[EROFS_SB_BLKSZBITS] > 16)
                return -EINVAL;
        len = ((size_t) 1 << head[EROFS_SB_BLKSZBITS]) - EROFS_SUPER_OFFSET;
        sb = g_malloc(len);
        if (pread(fd, sb, len, EROFS_SUPER_OFFSET) != (ssize_t) len)
                return -EIO;

        checked = get_le32(sb + EROFS_SB_FEATURE_COMPAT) & EROFS_FEATURE_COMPAT_SB_CHKSUM;
        if (checked && erofs_checksum(sb, len) != get_le32(sb + EROFS_SB_CHECKSUM))
                return -EBADMSG;
        memset(sb + EROFS_SB_VOLUME_NAME, 0, 16);
        memcpy(sb + EROFS_SB_VOLUME_NAME, label, MIN(strlen(label), (size_t) 16));
        if (checked)
                put_le32(sb + EROFS_SB_CHECKSUM, erofs_checksum(sb, len));
        if (pwrite(fd, sb, len, EROFS_SUPER_OFFSET) != (ssize_t) len)
                return -EIO;
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Images                                                                              */

static int create_sparse(const char *path, uint64_t size) {
        _cleanup_close_ int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0)
                return -errno;
        return 0;
}

/* mkfs options... [-L label] image */
static int run_mkfs(const char *mkfs, const char *const *options, const char *label,
        const char *image) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();

        g_ptr_array_add(argv, (char *) mkfs);
        for (size_t i = 0; options[i]; i++)
                g_ptr_array_add(argv, (char *) options[i]);
        if (label) {
                g_ptr_array_add(argv, (char *) "-L");
                g_ptr_array_add(argv, (char *) label);
        }
        g_ptr_array_add(argv, (char *) image);
        g_ptr_array_add(argv, NULL);
        return harness_run_command((const char *const *) argv->pdata);
}

static int build_from_directory(const FilesystemInfo *fs, const HarnessImageSpec *spec,
        const char *image, unsigned n) {
        g_autofree char *staging = g_strdup_printf("%s/images/staging-%u", harness.tmpdir, n);
        g_autofree char *owner = g_strdup_printf("root_owner=%u:%u", (unsigned) spec->root_uid,
                (unsigned) spec->root_gid);
        g_autofree char *root_mode = g_strdup_printf("set_inode_field / mode 0%o",
                (unsigned) (S_IFDIR | (spec->root_mode ? spec->root_mode & 07777 : 0755)));
        int r;

        if (mkdir(staging, 0755) < 0)
                return -errno;
        r = populate(staging, spec);
        if (r < 0)
                goto out;

        if (streq(fs->name, "ext4")) {
                r = create_sparse(image, spec->size ? spec->size : fs->default_size);
                if (r < 0)
                        goto out;
                r = run_mkfs("mkfs.ext4", (const char *const[]){ "-q", "-F", "-E", owner, "-d",
                                                  staging, NULL },
                        spec->label, image);
                /* mkfs.ext4 -d copies everything but the root directory's mode. */
                if (r >= 0)
                        r = harness_run_command((const char *const[]){ "debugfs", "-w", "-R",
                                root_mode, image, NULL });
        } else if (streq(fs->name, "squashfs")) {
                const char *argv[] = { "mksquashfs", staging, image, "-noappend", "-quiet",
                        "-no-progress", NULL };
                r = harness_run_command(argv);
        } else {
                const char *argv[] = { "mkfs.erofs", "--quiet", image, staging, NULL };
                r = harness_run_command(argv);
                if (r >= 0 && spec->label) {
                        r = erofs_set_label(image, spec->label);
                        if (r < 0)
                                harness_log("cannot label erofs image %s: %s", image,
                                        g_strerror(-r));
                }
        }
out:
        remove_tree(staging);
        return r;
}

static int build_by_mounting(const FilesystemInfo *fs, const HarnessImageSpec *spec,
        const char *image, unsigned n) {
        g_autofree char *mkfs = g_strdup_printf("mkfs.%s", fs->name);
        g_autofree char *mountpoint = g_strdup_printf("%s/images/mount-%u", harness.tmpdir, n);
        int r;

        r = create_sparse(image, spec->size ? spec->size : fs->default_size);
        if (r < 0)
                return r;
        r = run_mkfs(mkfs, (const char *const[]){ "-q", "-f", NULL }, spec->label, image);
        if (r < 0)
                return r;

        if (mkdir(mountpoint, 0755) < 0)
                return -errno;
        r = mount_image_at(image, fs->name, MS_NOSUID | MS_NODEV | MS_NOEXEC, mountpoint);
        if (r < 0) {
                rmdir(mountpoint);
                return r;
        }
        r = populate(mountpoint, spec);
        if (umount2(mountpoint, UMOUNT_NOFOLLOW) < 0 && r >= 0)
                r = -errno;
        rmdir(mountpoint);
        return r;
}

int harness_make_image(const char *fstype, const HarnessImageSpec *spec, char **ret_path) {
        static const HarnessImageSpec empty = {};
        const FilesystemInfo *fs = filesystem_info(fstype);
        unsigned n = ++image_counter;
        g_autofree char *image = NULL;
        int r;

        if (!spec)
                spec = &empty;
        if (!fs) {
                harness_log("no image factory for filesystem type %s", strempty(fstype));
                return -EPROTONOSUPPORT;
        }
        if (spec->label && !fs->has_label) {
                harness_log("%s has no label", fstype);
                return -EOPNOTSUPP;
        }
        image = g_strdup_printf("%s/images/%s-%u.img", harness.tmpdir, fstype, n);
        r = fs->build == BUILD_FROM_DIRECTORY ? build_from_directory(fs, spec, image, n)
                                              : build_by_mounting(fs, spec, image, n);
        if (r < 0) {
                harness_log("cannot make %s image %s: %s", fstype, image, g_strerror(-r));
                unlink(image);
                return r;
        }
        if (chmod(image, 0644) < 0)
                return -errno;
        *ret_path = g_steal_pointer(&image);
        return 0;
}
