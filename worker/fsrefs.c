/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Superblocks that name other devices, and names that collide with the system's (see
 * fsrefs.h). The on-disk layouts read here are the kernel's own (fs/ext4/ext4.h,
 * fs/xfs/libxfs/xfs_format.h, fs/btrfs/accessors.h); only the few fields that say
 * "another device" are looked at.
 */
#include <ctype.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libmount/libmount.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/btrfs.h>

#include "fsrefs.h"
#include "macro.h"

#define EXT_SB_OFFSET 1024
#define EXT_MAGIC 0xEF53
#define EXT_COMPAT_HAS_JOURNAL 0x0004
#define EXT_INCOMPAT_JOURNAL_DEV 0x0008
#define EXT_RO_COMPAT_ORPHAN_PRESENT 0x10000

#define BTRFS_SB_OFFSET 65536
#define BTRFS_MAGIC "_BHRfS_M"
/* SEEDING, METADUMP, METADUMP_V2, CHANGING_FSID, CHANGING_FSID_V2 (fs/btrfs/fs.h). */
#define BTRFS_FLAGS_JOINING (UINT64_C(0x1f) << 32)

/* ---- reading the superblock -------------------------------------------------------- */

/* The bytes a superblock is read from: fd, or the byte range of one of its partitions. */
typedef struct SbSource {
        int fd;
        uint64_t base;  /* where the filesystem starts in fd */
        uint64_t limit; /* its size; 0: to the end of fd */
} SbSource;

/* A private read-only description of the source, so that its offset stays the caller's;
 * never beyond the partition (the next partition's bytes are not this filesystem's). */
static int read_at(const SbSource *src, off_t offset, void *buf, size_t size) {
        _cleanup_close_ int rfd = -EBADF;
        char path[64];
        ssize_t n;

        if (src->limit > 0 && ((uint64_t) offset > src->limit ||
                               size > src->limit - (uint64_t) offset))
                return -ENODATA;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", src->fd);
        rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (rfd < 0)
                return -errno;
        n = pread(rfd, buf, size, (off_t) (src->base + (uint64_t) offset));
        if (n < 0)
                return -errno;
        if ((size_t) n < size)
                return -ENODATA;
        return 0;
}

static uint32_t le32_at(const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return le32toh(v);
}

static uint64_t le64_at(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return le64toh(v);
}

static uint64_t be64_at(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return be64toh(v);
}

static int refuse(UmError *error, const char *what) {
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "the filesystem %s; usermount mounts filesystems that live on the "
                            "one device or image they came from", what);
}

/* ext3/ext4: a journal that is not an inode of the filesystem is on another device. */
static int check_ext(const SbSource *src, UmError *error) {
        uint8_t sb[1024];
        int r;

        r = read_at(src, EXT_SB_OFFSET, sb, sizeof(sb));
        if (r < 0)
                return r;
        if ((sb[0x38] | sb[0x39] << 8) != EXT_MAGIC)
                return refuse(error, "changed while it was being checked");
        if (le32_at(sb + 0x60) & EXT_INCOMPAT_JOURNAL_DEV)
                return refuse(error, "is an external journal device");
        if (!(le32_at(sb + 0x5C) & EXT_COMPAT_HAS_JOURNAL))
                return 0;
        if (le32_at(sb + 0xE0) == 0 || le32_at(sb + 0xE4) != 0)
                return refuse(error, "has its journal on another device (an external "
                                     "journal)");
        return 0;
}

/* xfs: an internal log has a start block; a realtime section needs a device of its own. */
static int check_xfs(const SbSource *src, UmError *error) {
        uint8_t sb[512];
        int r;

        r = read_at(src, 0, sb, sizeof(sb));
        if (r < 0)
                return r;
        if (memcmp(sb, "XFSB", 4) != 0)
                return refuse(error, "changed while it was being checked");
        if (be64_at(sb + 48) == 0)
                return refuse(error, "has its log on another device (an external log)");
        if (be64_at(sb + 16) != 0 || be64_at(sb + 24) != 0)
                return refuse(error, "has a realtime section on another device");
        return 0;
}

/* btrfs: one device; its FSID must not be one the kernel has mounted already. */
static int check_btrfs(const SbSource *src, UmError *error) {
        uint8_t sb[4096];
        char fsid[37], path[64];
        uint64_t n;
        int r;

        r = read_at(src, BTRFS_SB_OFFSET, sb, sizeof(sb));
        if (r < 0)
                return r;
        if (memcmp(sb + 64, BTRFS_MAGIC, 8) != 0)
                return refuse(error, "changed while it was being checked");
        /* A seed device, or one half-way through an FSID change, is looked up and joined
         * by FSID like the devices of a multi-device filesystem (no temporary FSID). */
        if (le64_at(sb + 56) & BTRFS_FLAGS_JOINING)
                return refuse(error, "is a btrfs seed device or is in the middle of an FSID "
                                     "change (superblock flags); the kernel would join it "
                                     "with devices of the same FSID");
        n = le64_at(sb + 136);
        if (n != 1) {
                char what[96];

                snprintf(what, sizeof(what), "spans %llu devices (btrfs num_devices); the "
                         "kernel would look for the others", (unsigned long long) n);
                return refuse(error, what);
        }
        snprintf(fsid, sizeof(fsid),
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 sb[32], sb[33], sb[34], sb[35], sb[36], sb[37], sb[38], sb[39], sb[40], sb[41],
                 sb[42], sb[43], sb[44], sb[45], sb[46], sb[47]);
        snprintf(path, sizeof(path), "/sys/fs/btrfs/%s", fsid);
        if (access(path, F_OK) == 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EEXIST,
                                    "a mounted btrfs filesystem already has the FSID %s; the "
                                    "kernel would take the two for one filesystem", fsid);
        return 0;
}

int fsrefs_check_superblock(int fd, const char *fstype, UmError *error) {
        return fsrefs_check_superblock_in(fd, 0, 0, fstype, error);
}

static uint32_t be32_at(const uint8_t *p) {
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return be32toh(v);
}

static uint16_t le16_at(const uint8_t *p) {
        return (uint16_t) (p[0] | p[1] << 8);
}

/*
 * The bytes the filesystem says it spans, from its superblock (0: a type this does not
 * know, or a field that makes no sense, which the filesystem's own driver refuses).
 * Products saturate: a hostile value is large, never small.
 */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
        return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static int fs_claimed_size(const SbSource *src, const char *fstype, uint64_t *ret) {
        uint8_t sb[512];
        int r;

        *ret = 0;
        if (streq(fstype, "ext2") || streq(fstype, "ext3") || streq(fstype, "ext4")) {
                uint8_t e[512];
                uint64_t blocks;
                uint32_t log;

                r = read_at(src, EXT_SB_OFFSET, e, sizeof(e));
                if (r < 0)
                        return r;
                blocks = le32_at(e + 0x04);
                if (le32_at(e + 0x60) & 0x80) /* INCOMPAT_64BIT */
                        blocks |= (uint64_t) le32_at(e + 0x150) << 32;
                log = le32_at(e + 0x18);
                *ret = log < 32 ? mul_sat(blocks, UINT64_C(1024) << log) : UINT64_MAX;
                return 0;
        }
        if (streq(fstype, "erofs")) {
                r = read_at(src, 1024, sb, 64);
                if (r < 0)
                        return r;
                *ret = sb[12] < 32 ? mul_sat(le32_at(sb + 36), UINT64_C(1) << sb[12])
                                   : UINT64_MAX;
                return 0;
        }
        r = read_at(src, 0, sb, sizeof(sb));
        if (r < 0)
                return r;
        if (streq(fstype, "vfat")) {
                uint32_t sectors = le16_at(sb + 19) ?: le32_at(sb + 32);

                *ret = mul_sat(sectors, le16_at(sb + 11));
        } else if (streq(fstype, "exfat"))
                *ret = sb[108] < 32 ? mul_sat(le64_at(sb + 72), UINT64_C(1) << sb[108])
                                    : UINT64_MAX;
        else if (streq(fstype, "ntfs") || streq(fstype, "ntfs3"))
                *ret = mul_sat(le64_at(sb + 40), le16_at(sb + 11));
        else if (streq(fstype, "squashfs"))
                *ret = le64_at(sb + 40);
        else if (streq(fstype, "xfs"))
                *ret = mul_sat(be64_at(sb + 8), be32_at(sb + 4));
        return 0;
}

/* A filesystem in a partition must end where the partition ends: one that says it is
 * larger would have its driver read and write the partitions after it (a userspace
 * driver reads a loop device of the partition's bytes, so it meets the end; the kernel's
 * drivers check, not all alike). btrfs keeps its size per device: its superblock's
 * total_bytes. */
static int check_size(const SbSource *src, const char *fstype, UmError *error) {
        uint64_t claimed = 0;
        int r;

        if (src->limit == 0)
                return 0;
        if (streq(fstype, "btrfs")) {
                uint8_t sb[256];

                r = read_at(src, BTRFS_SB_OFFSET, sb, sizeof(sb));
                if (r < 0)
                        return r;
                claimed = le64_at(sb + 0x70);
        } else {
                r = fs_claimed_size(src, fstype, &claimed);
                if (r < 0)
                        return r;
        }
        if (claimed <= src->limit)
                return 0;
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EFBIG,
                            "the %s filesystem says it is %" PRIu64 " bytes, more than the %"
                            PRIu64 " bytes of its partition: it would reach into what follows "
                            "the partition", fstype, claimed, src->limit);
}

int fsrefs_check_superblock_in(int fd, uint64_t offset, uint64_t size, const char *fstype,
                               UmError *error) {
        const SbSource src = { .fd = fd, .base = offset, .limit = size };
        int r;

        r = check_size(&src, fstype, error);
        if (r < 0 && error->kind == UM_ERROR_KIND_NONE)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -r,
                                    "the %s superblock could not be read: %s", fstype,
                                    strerror(-r));
        if (r < 0)
                return r;
        if (streq(fstype, "ext3") || streq(fstype, "ext4") || streq(fstype, "ext2"))
                r = check_ext(&src, error);
        else if (streq(fstype, "xfs"))
                r = check_xfs(&src, error);
        else if (streq(fstype, "btrfs"))
                r = check_btrfs(&src, error);
        else
                return 0;
        if (r < 0 && error->kind == UM_ERROR_KIND_NONE)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -r,
                                    "the %s superblock could not be read: %s", fstype,
                                    strerror(-r));
        return r;
}

/* ---- names ----------------------------------------------------------------------------- */

/* The name udev gave a link (\xNN escapes, as in /dev/disk/by-label), decoded into buf. */
static void udev_decode(const char *s, char *buf, size_t size) {
        size_t o = 0;

        while (*s && o + 1 < size) {
                unsigned v;

                if (s[0] == '\\' && s[1] == 'x' && isxdigit((unsigned char) s[2]) &&
                    isxdigit((unsigned char) s[3]) && sscanf(s + 2, "%2x", &v) == 1 && v) {
                        buf[o++] = (char) v;
                        s += 4;
                } else
                        buf[o++] = *s++;
        }
        buf[o] = 0;
}

typedef struct Names {
        const char *uuid, *label;
} Names;

/* "UUID=x", "LABEL=x", /dev/disk/by-uuid/x, /dev/disk/by-label/x: does spec name ours? */
static const char *spec_matches(const char *spec, const Names *n) {
        char decoded[256];

        if (!spec)
                return NULL;
        if (!isempty(n->uuid) && strncasecmp(spec, "UUID=", 5) == 0 &&
            strcasecmp(spec + 5, n->uuid) == 0)
                return "UUID";
        if (!isempty(n->label) && strncmp(spec, "LABEL=", 6) == 0 && streq(spec + 6, n->label))
                return "label";
        if (!isempty(n->uuid) && strncmp(spec, "/dev/disk/by-uuid/", 18) == 0) {
                udev_decode(spec + 18, decoded, sizeof(decoded));
                if (strcasecmp(decoded, n->uuid) == 0)
                        return "UUID";
        }
        if (!isempty(n->label) && strncmp(spec, "/dev/disk/by-label/", 19) == 0) {
                udev_decode(spec + 19, decoded, sizeof(decoded));
                if (streq(decoded, n->label))
                        return "label";
        }
        return NULL;
}

static void mnt_free_tablep(struct libmnt_table **t) {
        mnt_unref_table(*t);
}

static const char *fstab_match(const char *path, const Names *n) {
        _cleanup_(mnt_free_tablep) struct libmnt_table *tb = mnt_new_table();
        struct libmnt_iter *it;
        struct libmnt_fs *fs;
        const char *found = NULL;

        if (!tb || access(path, F_OK) < 0 || mnt_table_parse_fstab(tb, path) < 0)
                return NULL;
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!it)
                return NULL;
        while (!found && mnt_table_next_fs(tb, it, &fs) == 0) {
                const char *tag = NULL, *value = NULL;
                _cleanup_free_ char *spec = NULL;

                /* libmount keeps the quotes of UUID="..." in the source; the tag has none. */
                if (mnt_fs_get_tag(fs, &tag, &value) == 0 && asprintf(&spec, "%s=%s", tag,
                                                                       value) >= 0)
                        found = spec_matches(spec, n);
                else
                        found = spec_matches(mnt_fs_get_source(fs), n);
        }
        mnt_free_iter(it);
        return found;
}

/* crypttab: "name device [keyfile [options]]"; the device field is what is looked up. */
static const char *crypttab_match(const char *path, const Names *n) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        char line[4096], name[256], device[1024];
        const char *found = NULL;

        while (f && !found && fgets(line, sizeof(line), f)) {
                char *p = line + strspn(line, " \t");

                if (*p == '#' || sscanf(p, "%255s %1023s", name, device) != 2)
                        continue;
                /* UUID="x" as systemd-cryptsetup-generator accepts it. */
                for (char *q = device, *w = device;; q++)
                        if (*q != '"' && !(*w++ = *q))
                                break;
                found = spec_matches(device, n);
        }
        return found;
}

/* A /dev/disk/<kind>/ link naming value that is some other device than self. */
static bool link_names_other(const char *dir, const char *value, bool ignore_case, dev_t self,
                             char *buf, size_t size) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        char decoded[256];
        struct dirent *de;
        struct stat st;

        while (d && (de = readdir(d))) {
                udev_decode(de->d_name, decoded, sizeof(decoded));
                if (!(ignore_case ? strcasecmp(decoded, value) == 0 : streq(decoded, value)))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISBLK(st.st_mode) ||
                    st.st_rdev == self)
                        continue;
                snprintf(buf, size, "the device %u:%u", major(st.st_rdev), minor(st.st_rdev));
                return true;
        }
        return false;
}

static int collision(UmError *error, const char *what, const char *value, const char *where) {
        char shown[128];

        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EEXIST,
                            "the filesystem's %s '%s' is also %s; root's own mounts could "
                            "take this filesystem for that one, so it is not mounted (give it "
                            "a %s of its own, e.g. with tune2fs, xfs_admin or btrfstune)",
                            what, um_escape(value, shown, sizeof(shown)), where, what);
}

int fsrefs_check_names_in(const char *fstab, const char *crypttab, const char *disk_dir,
                          const char *fstype, const char *uuid, const char *label, dev_t self,
                          UmError *error) {
        const Names n = { uuid, label };
        const char *what;
        char where[256], dir[PATH_MAX];

        if (fstab && (what = fstab_match(fstab, &n))) {
                snprintf(where, sizeof(where), "named in %s", fstab);
                return collision(error, what, streq(what, "UUID") ? uuid : label, where);
        }
        if (crypttab && (what = crypttab_match(crypttab, &n))) {
                snprintf(where, sizeof(where), "named in %s", crypttab);
                return collision(error, what, streq(what, "UUID") ? uuid : label, where);
        }
        if (!disk_dir)
                return 0;
        if (!isempty(uuid)) {
                char other[64];

                snprintf(dir, sizeof(dir), "%s/by-uuid", disk_dir);
                if (link_names_other(dir, uuid, true, self, other, sizeof(other))) {
                        snprintf(where, sizeof(where), "the UUID of %s", other);
                        return collision(error, "UUID", uuid, where);
                }
        }
        if (!isempty(label)) {
                char other[64];

                snprintf(dir, sizeof(dir), "%s/by-label", disk_dir);
                if (link_names_other(dir, label, false, self, other, sizeof(other))) {
                        snprintf(where, sizeof(where), "the label of %s", other);
                        return collision(error, "label", label, where);
                }
        }
        return 0;
}

int fsrefs_check_names(const char *fstype, const char *uuid, const char *label, dev_t self,
                       UmError *error) {
        return fsrefs_check_names_in("/etc/fstab", "/etc/crypttab", "/dev/disk", fstype, uuid,
                                     label, self, error);
}

/* ---- after authorization ---------------------------------------------------------------- */

int fsrefs_check_read_only_device(int fd, const char *fstype, UmError *error) {
        uint8_t sb[1024];
        int r;

        if (!streq(fstype, "ext2") && !streq(fstype, "ext3") && !streq(fstype, "ext4"))
                return 0;
        r = read_at(&(const SbSource) { .fd = fd }, EXT_SB_OFFSET, sb, sizeof(sb));
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "the ext superblock could not be read: %s", strerror(-r));
        /* s_last_orphan, ro_compat ORPHAN_PRESENT: the driver deletes orphaned inodes at
         * mount time even on a read-only mount of a writable device. */
        if (le32_at(sb + 0xE8) != 0 || (le32_at(sb + 0x64) & EXT_RO_COMPAT_ORPHAN_PRESENT))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EROFS,
                                    "the filesystem has orphaned files to clean up, which the "
                                    "kernel does even on a read-only mount, writing to the "
                                    "device; mount it read-write, or check it with fsck first");
        return 0;
}

int fsrefs_check_mounted(int mount_fd, const char *fstype, UmError *error) {
        struct btrfs_ioctl_fs_info_args info = {};
        _cleanup_close_ int root_fd = -EBADF;

        if (!streq(fstype, "btrfs"))
                return 0;
        /* The mount fd is an O_PATH one: ioctls need the root directory opened. */
        root_fd = openat(mount_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0 || ioctl(root_fd, BTRFS_IOC_FS_INFO, &info) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "could not ask btrfs which devices it mounted: %s",
                                    strerror(errno));
        if (info.num_devices != 1 || info.max_id != 1)
                return refuse(error, "was assembled from more than the one device it came "
                                     "from; it is not handed out");
        return 0;
}
