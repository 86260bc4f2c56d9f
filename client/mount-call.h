/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One mount request to usermountd (Mount, MountFd or OpenMount, DBUS-API.md): the call's
 * arguments as a struct, sent through libusermount. Shared by usermount mount and
 * usermount automount.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "usermount.h"

typedef struct MountCall {
        const char *method;  /* Mount, MountFd or OpenMount */
        const char *device;  /* Mount: the device path; else NULL and source_fd is sent */
        int source_fd;       /* stays open: a second attempt sends it again */
        int userns_fd;       /* params["userns"], or -EBADF */
        const char *fstype;  /* NULL: let the daemon probe */
        const char *options; /* NULL: none */
        const char *idmap;   /* NULL: no params["idmap"] */
        const char *driver;  /* NULL: no params["driver"] */
        bool read_only;
        bool exec;
        const char *target;  /* NULL: no params["target"] (the default mount point) */
        uint32_t partition;  /* 0: no params["partition"] */
} MountCall;

/*
 * Sends call on c (its authentication mode applies). On success, Mount and MountFd set
 * *ret_mount_point (a new string), OpenMount *ret_mount_fd (ours, O_CLOEXEC), and each
 * *ret_info (may be NULL). Returns 0 or -errno as libusermount does; c keeps the error.
 */
int mount_call(usermount_client *c, const MountCall *call, char **ret_mount_point,
               int *ret_mount_fd, usermount_info **ret_info);
