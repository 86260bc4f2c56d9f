/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One mount request to usermountd (Mount, MountFd or OpenMount, DBUS-API.md): the call's
 * arguments as a struct, and the function that builds and sends it. Shared by usermount
 * mount and usermount automount, so that the protocol is written once.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

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
 * An AuthCallFunc (auth-call.h): sends the MountCall userdata with params["interactive"]
 * = interactive; error and reply as sd_bus_call() returns them.
 */
int mount_call(sd_bus *bus, bool interactive, void *userdata, sd_bus_error *error,
               sd_bus_message **ret_reply);
