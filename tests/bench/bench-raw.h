/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The in-process paths the broker is compared with, as root and without the bus: the bare
 * mount of a device, the mount of an image through a fresh loop device (what the daemon
 * does for each image fd), and the daemon's build worker reproduced with the daemon's own
 * code (fork, loop device, locked-mount recipe, fd back over a socket). Also the pieces a
 * request is made of, timed one by one: fork of a worker, the libblkid probe. And the raw
 * unmount that Unmount is compared with.
 *
 * Each function does one iteration, leaves nothing mounted or attached, and returns 0 or
 * -errno (the failing step is in *ret_what, a static string, when given).
 */
#pragma once

#include <stdint.h>

typedef struct RawTimes {
        uint64_t loop_ns;  /* LOOP_CTL_GET_FREE + open + LOOP_CONFIGURE; 0 without a loop */
        uint64_t mount_ns; /* fsopen() .. fsmount() and the close of both fds */
} RawTimes;

/* fsopen(fstype), fsconfig "source" = device and "ro", FSCONFIG_CMD_CREATE_EXCL,
 * fsmount() read-only, nodev, nosuid, noexec; then closes the mount and context fds,
 * which destroys the superblock (nothing else holds the detached mount). */
int raw_mount_device(const char *fstype, const char *device, const char **ret_what);

/* A fresh read-only, auto-clearing loop device for image_fd (the daemon's loop_attach()),
 * raw_mount_device() on it, then the loop fd closed (autoclear detaches it). */
int raw_mount_image(const char *fstype, int image_fd, RawTimes *ret, const char **ret_what);

/* A fresh read-only, auto-clearing loop device for image_fd, fsmount() on it as in
 * raw_mount_device(), and the mount moved onto dir; the loop fd is closed (the mount keeps
 * the device until it is unmounted). */
int raw_mount_image_on(const char *fstype, int image_fd, const char *dir, const char **ret_what);

/* umount2(dir, UMOUNT_NOFOLLOW), timed: the unmount of the last reference to the
 * superblock, which tears it down and lets the loop device clear itself. */
int raw_umount(const char *dir, uint64_t *ret_ns);

/* What the daemon's build worker does for a read-only image, with the daemon's code: fork;
 * in the child loop_attach() and mountbuild_locked() (private namespace, staging over
 * stage_dir, user namespace to lock the flags, clone), the mount fd sent back with
 * SCM_RIGHTS; the parent receives it, closes it and reaps the child. */
int raw_build_worker(const char *fstype, int image_fd, const char *stage_dir,
                     const char **ret_what);

/* What the daemon's probe worker does for an image fd, with the daemon's code: fork; in
 * the child source_inspect_fd(), loop_find_backing() (is the image attached already?)
 * and source_probe(), a reply sent back over a socket; the parent waits for it and reaps
 * the child. */
int raw_probe_worker(const char *fstype, int image_fd, const char **ret_what);

/* loop_find_backing() alone: the scan of every loop device for one backed by the image. */
int raw_find_backing(int image_fd);

/* fork() of a child that exits at once, and its reaping: the fixed cost of a worker. */
int raw_fork_exit(void);

/* The daemon's libblkid probe of the image (source_probe()); fails unless it finds
 * fstype. */
int raw_probe(int image_fd, const char *fstype);
