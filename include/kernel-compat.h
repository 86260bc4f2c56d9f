/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel interfaces newer than the headers we build against (Debian 12: glibc 2.36, Linux
 * 6.1 uapi), defined once, each with the kernel release that brought it. Every definition
 * is the kernel's own value and yields to the system headers when they have it, so this
 * file can be dropped piece by piece as the build baseline moves.
 *
 * The system headers that own these names are included first, so that the #ifndef tests
 * below see their definitions: include this header after the system headers. <linux/fs.h>
 * and <linux/mount.h> are left out on purpose (both clash with <sys/mount.h> on glibc
 * 2.36); the definitions taken from them here are spelled exactly as there, so a file that
 * includes either one as well still compiles.
 */
#pragma once

#include <linux/ioctl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/types.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* ---- ioctls on namespace files (<linux/nsfs.h>) -------------------------------------- */

/* The CLONE_NEW* type of a namespace fd (Linux 4.11). */
#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif
/* The owner uid of a user namespace fd, in the caller's user namespace (Linux 4.11). */
#ifndef NS_GET_OWNER_UID
#define NS_GET_OWNER_UID _IO(0xb7, 0x4)
#endif
/* The 64-bit id of a mount namespace fd, the one statmount()/listmount() take (Linux 6.11). */
#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR(0xb7, 0x5, __u64)
#endif

/* ---- pidfds (<linux/pidfd.h>, <linux/wait.h>, <linux/magic.h>) ----------------------- */

/* waitid() on a pidfd (Linux 5.4). glibc 2.36 names it in enum idtype_t, not as a macro,
 * so this definition also applies there; <sys/wait.h> above is parsed before it. */
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
/* The mount namespace of the process behind a pidfd, as an nsfs fd (Linux 6.11). */
#ifndef PIDFD_GET_MNT_NAMESPACE
#define PIDFD_GET_MNT_NAMESPACE _IO(0xFF, 3)
#endif
/* The user namespace of the process behind a pidfd, as an nsfs fd (Linux 6.11). */
#ifndef PIDFD_GET_USER_NAMESPACE
#define PIDFD_GET_USER_NAMESPACE _IO(0xFF, 9)
#endif
/* pidfs, the filesystem of pidfds (Linux 6.9; before it pidfds were anonymous inodes). */
#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446
#endif

/* ---- the mount API (<sys/mount.h>, <linux/mount.h>) ---------------------------------- */

/* fsconfig(): create a new superblock, fail instead of reusing a matching one (Linux 6.6).
 * glibc declares the fsconfig commands as an enum with a macro of the same name each. */
#ifndef FSCONFIG_CMD_CREATE_EXCL
#define FSCONFIG_CMD_CREATE_EXCL 8
#endif

/* statmount(2) (Linux 6.8). The syscall number is the same on every architecture but
 * alpha, which adds 110. */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
/* open_tree_attr(2): open_tree() with mount_setattr() in one call (Linux 6.15); the same
 * number on every architecture but alpha. */
#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467
#endif

/* statmount() request masks (Linux 6.8; the mount namespace id Linux 6.11). Named with a
 * prefix because <linux/mount.h> cannot be included beside <sys/mount.h> on glibc 2.36. */
#define UM_STATMOUNT_MNT_BASIC 0x00000002U
#define UM_STATMOUNT_MNT_POINT 0x00000010U
#define UM_STATMOUNT_FS_TYPE 0x00000020U
#define UM_STATMOUNT_MNT_NS_ID 0x00000040U

/* struct mnt_id_req: 24 bytes in Linux 6.8 (VER0), 32 with mnt_ns_id in Linux 6.11 (VER1);
 * mnt_ns_fd, a mount namespace fd instead of an id, is the former "spare" (Linux 6.18). */
#define UM_MNT_ID_REQ_SIZE_VER0 24
#define UM_MNT_ID_REQ_SIZE_VER1 32
struct um_mnt_id_req {
        uint32_t size;
        uint32_t mnt_ns_fd;
        uint64_t mnt_id;
        uint64_t param;
        uint64_t mnt_ns_id;
};
_Static_assert(sizeof(struct um_mnt_id_req) == UM_MNT_ID_REQ_SIZE_VER1, "mnt_id_req layout");

/* struct statmount up to mnt_ns_id (Linux 6.11; later fields are left in the spare area):
 * 512 bytes, then the strings that mnt_root, mnt_point, fs_type and mnt_opts point into. */
struct um_statmount {
        uint32_t size;
        uint32_t mnt_opts;
        uint64_t mask;
        uint32_t sb_dev_major;
        uint32_t sb_dev_minor;
        uint64_t sb_magic;
        uint32_t sb_flags;
        uint32_t fs_type;
        uint64_t mnt_id;
        uint64_t mnt_parent_id;
        uint32_t mnt_id_old;
        uint32_t mnt_parent_id_old;
        uint64_t mnt_attr;
        uint64_t mnt_propagation;
        uint64_t mnt_peer_group;
        uint64_t mnt_master;
        uint64_t propagate_from;
        uint32_t mnt_root;
        uint32_t mnt_point;
        uint64_t mnt_ns_id;
        uint64_t __spare2[49];
        char str[];
};
_Static_assert(sizeof(struct um_statmount) == 512, "statmount layout");

/* ---- statx() (<sys/stat.h>, <linux/stat.h>) ------------------------------------------ */

/* stx_attributes: the file is the root of a mount (Linux 5.8). */
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif
/* stx_mnt_id: the 64-bit mount id that is never reused, as statmount() takes (Linux 6.8). */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* ---- block devices (<linux/fs.h>) ----------------------------------------------------- */

/* The disk sequence number, which a reused loop device never repeats (Linux 5.15).
 * Spelled as in <linux/fs.h>, which clashes with <sys/mount.h>. */
#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12,128,__u64)
#endif

/* ---- ext4 (<linux/ext4.h>) ------------------------------------------------------------ */

/* Shut the filesystem down as if the device went away (Linux 4.10; private to fs/ext4
 * before <linux/ext4.h> existed). */
#ifndef EXT4_IOC_SHUTDOWN
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, __u32)
#endif
#ifndef EXT4_GOING_FLAGS_LOGFLUSH
#define EXT4_GOING_FLAGS_LOGFLUSH 0x1
#endif

/* ---- filesystem magics (<linux/magic.h>) ---------------------------------------------- */

/* smackfs (Linux 2.6.25). */
#ifndef SMACK_MAGIC
#define SMACK_MAGIC 0x43415d53
#endif
/* These three were never exported to user space: the values of fs/configfs/mount.c,
 * fs/fuse/control.c and ipc/mqueue.c. */
#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef FUSECTL_SUPER_MAGIC
#define FUSECTL_SUPER_MAGIC 0x65735543
#endif
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
