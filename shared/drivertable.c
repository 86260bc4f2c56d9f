/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table of userspace filesystem drivers and the lookup of the installed one
 * (drivertable.h).
 */
#include <unistd.h>

#include "drivertable.h"
#include "macro.h"

#define STRV(...) ((const char *const[]) { __VA_ARGS__, NULL })

/*
 * Verified on Debian 12 (fuse2fs 1.47.0, exfat-fuse 1.3.0, fusefat 0.1a, lowntfs-3g 2022.10.3,
 * squashfuse 0.1.105; libfuse 2.9.9, libfuse 3.14.0), each run by fusedriver_mount() as an
 * unprivileged uid in the sandbox (tests/kernel/test-kernel-fusedriver.c). Every driver opens the
 * source through the shim and gets the connection as the shim's or libfuse 3's answer;
 * none mounts anything. With "ro" every one refuses writes (EROFS):
 *
 *  - fuse2fs (libfuse 2, -f): ext2/3/4 read-write; files show their on-disk ids; a created
 *    file belongs to the creating process's uid and gid (fuse2fs takes them from the
 *    request), where the modes let it create; fuse2fs checks the modes too. offset=<bytes>
 *    takes a partition. It stays in the foreground with -f.
 *  - mount.exfat-fuse (libfuse 2): read-write; no ids on disk: uid=/gid= make every file
 *    the caller's, created files too. It has no foreground option (only -d, which logs
 *    every request), so the shim's fuse_daemonize() keeps it in the foreground; it needs a
 *    user name for its own uid (the shim's getpwuid()). No offset option.
 *  - fusefat (libfuse 2, -f): writes only with "rw+" (without "ro" or "rw+" it exits with
 *    "This is experimental code, opening rw a real file system could be dangerous");
 *    uid=/gid= as for exfat. No offset option.
 *  - lowntfs-3g (the low-level-API build of ntfs-3g, same package; integrated fuse-lite):
 *    read-write; no_detach keeps it in the foreground (it has no -f); uid=/gid= as for
 *    exfat. Its mount point must be a directory it owns (/tmp/mnt), and it canonicalizes
 *    the source path (the shim's realpath()). No offset option. Chosen over ntfs-3g,
 *    whose read-write mounts cache no attributes (attr_timeout=0, see CACHING):
 *    lowntfs-3g keeps them 10 s and looks names up by inode, not by path.
 *  - squashfuse (libfuse 3, -f): read-only; the mount point "/dev/fd/4" makes libfuse 3
 *    use the connection fd; files show their stored ids; offset=<bytes> takes a partition.
 *
 * A read-write mount of a read-only source fd is refused before any driver starts
 * (-EROFS), rather than relying on each driver's fallback (only exfat has one).
 *
 * CACHING. Every change to the filesystem goes through this one mount while it exists (one
 * writer per source: worker/claim.h), so the kernel may keep what the driver told it:
 * attributes, names and missing names for FUSE_CACHE_TIMEOUT, and file pages across opens
 * (kernel_cache). Without that, fuse2fs (attr_timeout=0 by default) and ntfs-3g answer a
 * GETATTR for every directory of every path the kernel checks (default_permissions), and
 * the kernel asks for each stat() again. big_writes lets fusefat take 128 KiB writes
 * instead of 4 KiB ones (lowntfs-3g has its own option of that name, honoured on volumes
 * of 4 GiB or more). The timeouts are the ones lowntfs-3g ships with (it takes no libfuse
 * options: its fuse-lite is built in). tests/kernel/test-kernel-fusedriver.c counts the requests
 * each driver gets for repeated stat()s and for a 1 MiB write, so a driver that loses
 * these settings fails there.
 */
#define FUSE_CACHE_TIMEOUT "10"
#define FUSE_CACHE_OPTIONS                                                              \
        "attr_timeout=" FUSE_CACHE_TIMEOUT ",entry_timeout=" FUSE_CACHE_TIMEOUT          \
        ",negative_timeout=" FUSE_CACHE_TIMEOUT ",kernel_cache"

static FuseDriver drivers[] = {
        {
                .name = "fuse2fs",
                .fstypes = STRV("ext2", "ext3", "ext4"),
                .paths = STRV("/usr/bin/fuse2fs", "/usr/sbin/fuse2fs", "/sbin/fuse2fs"),
                .generation = FUSE_GENERATION_LIBFUSE2,
                .argv = STRV("fuse2fs", "{source}", "{mountpoint}", "-f", "-o", "{options}"),
                .writable = true,
                .rw_option = "rw",
                .has_offset = true,
                /* fuse2fs compares the caller with the owners on disk, unless it pretends
                 * that every caller is root. */
                .as_caller_options = "fakeroot",
                .fuse_options = FUSE_CACHE_OPTIONS,
                .quiet_prefixes = STRV("fuse2fs: Warning:", "FUSE2FS (", "Mounting read-only."),
        },
        {
                .name = "exfat",
                .fstypes = STRV("exfat"),
                .paths = STRV("/usr/sbin/mount.exfat-fuse", "/sbin/mount.exfat-fuse"),
                .generation = FUSE_GENERATION_LIBFUSE2,
                .argv = STRV("mount.exfat-fuse", "-o", "{options}", "{source}",
                             "{mountpoint}"),
                .ownerless = true,
                .writable = true,
                .rw_option = "rw",
                .fuse_options = FUSE_CACHE_OPTIONS,
                .quiet_prefixes = STRV("FUSE exfat "),
        },
        {
                .name = "fusefat",
                .fstypes = STRV("vfat"),
                .paths = STRV("/usr/bin/fusefat", "/usr/sbin/fusefat"),
                .generation = FUSE_GENERATION_LIBFUSE2,
                .argv = STRV("fusefat", "-f", "-o", "{options}", "{source}", "{mountpoint}"),
                .ownerless = true,
                .writable = true,
                .rw_option = "rw+",
                .fuse_options = FUSE_CACHE_OPTIONS ",big_writes",
        },
        {
                .name = "lowntfs-3g",
                .fstypes = STRV("ntfs", "ntfs3"),
                .paths = STRV("/usr/bin/lowntfs-3g", "/bin/lowntfs-3g"),
                .generation = FUSE_GENERATION_FUSELITE,
                .argv = STRV("lowntfs-3g", "-o", "{options}", "{source}", "{mountpoint}"),
                .ownerless = true,
                .writable = true,
                .rw_option = "rw",
                .extra_options = "no_detach,big_writes",
                .quiet_prefixes = STRV("lowntfs-3g 2", "Configuration type", "Copyright",
                                       "Version ", "Mounted ", "Cmdline options:",
                                       "Mount options:", "Ownership and permissions",
                                       "Global ownership"),
        },
        {
                .name = "squashfuse",
                .fstypes = STRV("squashfs"),
                .paths = STRV("/usr/bin/squashfuse", "/usr/sbin/squashfuse"),
                .generation = FUSE_GENERATION_LIBFUSE3,
                .argv = STRV("squashfuse", "-f", "-o", "{options}", "{source}",
                             "{mountpoint}"),
                .has_offset = true,
                .fuse_options = FUSE_CACHE_OPTIONS,
        },
};

const FuseDriver *fusedriver_find(const char *fstype) {
        if (!fstype)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(drivers); i++) {
                FuseDriver *d = &drivers[i];

                if (!strv_contains(d->fstypes, fstype))
                        continue;
                for (const char *const *p = d->paths; *p; p++)
                        if (access(*p, X_OK) == 0) {
                                /* Static table: the last lookup's path is as good as any. */
                                d->path = *p;
                                return d;
                        }
                return NULL;
        }
        return NULL;
}

bool fusedriver_fuse_present(void) {
        return access("/dev/fuse", F_OK) == 0;
}
