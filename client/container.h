/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mount --container=PID and unmount --container=PID: a running container of the user's own
 * (podman, toolbox, LXC, 'unshare --user --mount'), named by one of its processes, as the
 * namespaces usermount joins, in a child process, to attach or detach a mount at a path
 * resolved inside the container's root.
 *
 * Stages, each refusing with one sentence a person can act on:
 *   1. container_open(): a pidfd for PID (so a reused PID cannot stand in for it), its user
 *      and mount namespaces, and its root directory; the user namespace must be owned by
 *      the caller and not be the caller's own (a process of the host is not in a
 *      container), and it must own the mount namespace (else no one there may mount).
 *   2. The caller asks usermountd for a locked mount (OpenMount) with idmap "namespace" for
 *      that user namespace (cmd-mount.c).
 *   3. container_attach() / container_unmount(): a child joins the user namespace, then the
 *      mount namespace, opens TARGET below the container's root without following any
 *      symbolic link, checks it, and attaches the mount there with move_mount(), or
 *      unmounts it. The parent is never in the container's namespaces.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"

typedef struct Container {
        pid_t pid;
        int pidfd;
        int userns_fd; /* the container's user namespace (nsfs), for params["userns"] */
        int mntns_fd;
        int root_fd;   /* O_PATH: /proc/PID/root, opened from the host */
} Container;

#define CONTAINER_NULL                                                                     \
        ((Container) { .pidfd = -EBADF, .userns_fd = -EBADF, .mntns_fd = -EBADF,          \
                       .root_fd = -EBADF })

void container_done(Container *c);

/* Parses --container's PID (a decimal number > 0): 0, or -EINVAL after saying what is
 * wrong. */
int container_parse_pid(const char *s, pid_t *ret);

/* Stage 1 for process pid into *ret (initialized with CONTAINER_NULL). Prints what went
 * wrong: EXIT_STATUS_REFUSED for a process that does not exist, is not the caller's, or is
 * not in a container of the caller's. */
ExitStatus container_open(pid_t pid, Container *ret);

/* Checks, before anything is asked of usermountd, that target is as container_attach()
 * wants it (which checks again). Prints what is wrong. */
ExitStatus container_check_target_dir(const Container *c, const char *target);

/* Stage 3 for a mount: attaches mount_fd (an OpenMount fd) at target, an absolute path in
 * the container, which must be an existing, empty directory reached without symbolic
 * links. Prints what went wrong (EXIT_STATUS_TARGET for the target). On failure nothing is
 * attached: the mount goes away when the caller closes mount_fd. */
ExitStatus container_attach(const Container *c, int mount_fd, const char *target);

/* Stage 3 for unmount: target must be the root of a mount with nosuid and nodev set, as
 * every mount of usermountd has, of a device or usermountd's FUSE driver
 * (container_mountinfo_is_usermount(); EXIT_STATUS_NOT_MOUNTED otherwise); force detaches it even
 * when busy (MNT_DETACH). Prints "Unmounted TARGET in process PID's container." */
ExitStatus container_unmount(const Container *c, const char *target, bool force);

/* Whether line, one line of /proc/PID/mountinfo, is the mount mount_id and one of
 * usermountd's: of a device under /dev (a loop device for images), or a FUSE mount whose
 * source is "usermount" (its userspace drivers). Pure; exposed for the unit tests. */
bool container_mountinfo_is_usermount(const char *line, uint64_t mount_id);

/* Checks --container's TARGET: absolute, valid. Prints a usage error: -EINVAL. */
int container_check_target(const char *target);
