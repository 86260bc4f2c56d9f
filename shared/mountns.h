/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Questions about mount namespaces and mounts that the kernel answers without entering
 * the namespace: the id of a process's mount namespace (NS_GET_MNTNS_ID), whether a
 * mount with a given unique id still exists in a namespace and where (statmount() with
 * mnt_ns_id, Linux 6.8+/6.11+), and finding a process that lives in a namespace (for
 * cleanups that must run there after the original caller has gone).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The 64-bit id of the mount namespace of the process behind pidfd (or of pid if pidfd < 0).
 * With a pidfd the kernel answers for exactly that process (PIDFD_GET_MNT_NAMESPACE), so
 * a reused pid can never be mistaken for it; pid is then ignored. -ESRCH once the process
 * has exited (also while it is a zombie), -EBADF if pidfd is not a pidfd, -EINVAL if
 * pidfd < 0 and pid <= 0. Ids are never 0. Reading another user's namespace needs
 * CAP_SYS_PTRACE (the kernel's ptrace read check).
 */
int mountns_id_of_process(int pidfd, pid_t pid, uint64_t *ret_id);

/* Whether the mount namespace of the process (pidfd, else pid) belongs to the daemon's
 * user namespace (the host's, or one root made) rather than to a user namespace below it
 * (which a user may own): 1, 0, or -errno. */
int mountns_shared_with_host(int pidfd, pid_t pid);

/*
 * Whether the mount with unique id mount_id exists in namespace mntns_id: 1 yes, 0 no
 * (also when the namespace is gone), -errno if the kernel could not say. If ret_mount_point
 * is not NULL and it exists, gets its mount point as seen in that namespace (owned, free()).
 *
 * A namespace lives as long as anything holds it: a process in it, or an open
 * /proc/PID/ns/mnt fd, or a bind mount of one; its mounts exist as long as it does, even
 * with no process left (mountns_find_process() then says -ESRCH). Ids of 0 are -EINVAL
 * (0 would mean "the caller's namespace" to the kernel), and so is a mount id that cannot
 * be a unique one (<= 2^31, the kernel's answer). *ret_mount_point is set to NULL in the
 * rare case that the kernel has no path for it (not reachable from the namespace's root).
 */
int mountns_mount_exists(uint64_t mntns_id, uint64_t mount_id, char **ret_mount_point);

/*
 * A pidfd (O_CLOEXEC, owned by the caller) of some process whose mount namespace is
 * mntns_id (scanning /proc), for work that must be done inside it. The namespace is read
 * through the pidfd after opening it, so the pidfd is of a process that was in mntns_id
 * (it may exit at any time after; work through the pidfd then fails with ESRCH).
 * -ESRCH if none is left, -EINVAL for id 0.
 */
int mountns_find_process(uint64_t mntns_id, int *ret_pidfd);

/*
 * The strings of a statmount() reply of size bytes (struct statmount of linux/mount.h,
 * then its strings), read the way mountns_mount_exists() and mountinfo_fstype() read
 * them (mountinfo.h's too): the mount point and the filesystem type when the reply's mask has
 * them, else NULL (owned, free()). -EBADMSG for a reply shorter than the structure or a string
 * that is not NUL-terminated within it. Pure: tests/fuzz feeds it arbitrary bytes.
 */
int mountns_statmount_parse(const void *buf, size_t size, char **ret_mount_point,
                            char **ret_fstype);

/* statmount(2) of mount_id in namespace mntns_id (0: the calling process's) asking for
 * mask, into *ret (owned, free()) of *ret_size bytes, grown as the kernel asks. -ENOENT: no
 * such mount there, or no such namespace. */
struct um_statmount;
int mountns_statmount(uint64_t mntns_id, uint64_t mount_id, uint64_t mask,
                      struct um_statmount **ret, size_t *ret_size);
