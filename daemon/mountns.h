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

/* The 64-bit id of the mount namespace of the process behind pidfd (or of pid if pidfd < 0). */
int mountns_id_of_process(int pidfd, pid_t pid, uint64_t *ret_id);

/* The id of the mount namespace of the calling process. */
int mountns_id_self(uint64_t *ret_id);

/*
 * Whether the mount with unique id mount_id exists in namespace mntns_id: 1 yes, 0 no
 * (also when the namespace is gone), -errno if the kernel could not say. If ret_mount_point
 * is not NULL and it exists, gets its mount point as seen in that namespace (owned, free()).
 */
int mountns_mount_exists(uint64_t mntns_id, uint64_t mount_id, char **ret_mount_point);

/*
 * A pidfd of some process whose mount namespace is mntns_id (scanning /proc), for work
 * that must be done inside it. -ESRCH if none is left.
 */
int mountns_find_process(uint64_t mntns_id, int *ret_pidfd);
