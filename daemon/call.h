/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A MountCall is one method call as the bus edge (request-dbus.c) parsed and validated it and the
 * caller stage (caller.c) identified its sender: who asks and what, never changed after
 * that. What the daemon finds out and decides on the way is a Request's (request.h).
 *
 * Ownership: a MountCall owns its strings, the caller's pidfd and a reference on the
 * message; call_done() releases them. The fds the caller passed (source_fd, and
 * params.userns_fd when userns_given) are the message's, borrowed: never closed here, but
 * let go with the message off the main loop (busfds.h). A userns_fd the daemon opened
 * itself (the caller's own namespace) is owned. The one thing that leaves the call is
 * params.userns_fd, which the bus edge hands to the Request when the request starts
 * (Request.userns_fd).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "idmap.h"

typedef enum CallMethod {
        METHOD_OPEN_MOUNT,  /* detached locked mount fd for the caller */
        METHOD_MOUNT_FD,    /* caller's fd, attached for it and registered */
        METHOD_MOUNT,       /* device path opened by the daemon, attached and registered */
        METHOD_UNMOUNT,
        METHOD_LIST_MOUNTS,
        METHOD_SUBSCRIBE,   /* ListMounts' authorization, then a subscription */
        METHOD_LOOP_SETUP,  /* the UDisks2 front's LoopSetup: a loop device of the caller's
                             * image, kept by the front */
        METHOD_DRIVE_EJECT, /* the UDisks2 front's Drive.Eject and PowerOff */
} CallMethod;

/* Who sent the call, from the bus and the sender's process (caller.h), never from the
 * message's arguments. */
typedef struct Caller {
        uid_t uid;
        gid_t gid;
        bool gid_known;      /* gid is the primary group from the passwd entry, not a stand-in */
        pid_t pid;
        int pidfd;           /* the process that sent the call (caller.h), owned */
        uint64_t start_time; /* its start time, clock ticks after boot (caller.h) */
        mode_t umask;        /* for umask= on filesystems without Unix owners */
        char *user_name;     /* for the default mount point */
        char *label;         /* the peer's LSM label from the bus (SELinux context or Smack
                              * label); NULL when it has none (label.h) */
} Caller;

/* The a{sv} params of a mount call, validated (org.freedesktop.UserMount1(5), "params keys"). */
typedef struct MountParams {
        char *target;     /* NULL if not given */
        bool read_only;   /* as asked; a read-only source adds to it (Request.read_only) */
        bool exec;
        bool interactive; /* also Unmount's params["interactive"] */
        IdmapMode idmap;
        bool idmap_given; /* idmap was in params (not the default) */
        int driver;       /* params["driver"]: a DriverKind (driverpolicy.h), -1 when absent */
        int userns_fd;    /* idmap namespace: the caller's (or given) user namespace, -EBADF
                           * otherwise; until the bus edge hands it to the Request, owned, or
                           * borrowed from the message when userns_given */
        bool userns_given; /* userns_fd is params["userns"]: anything the caller passed, which
                            * only a worker may look at (idmap_check_userns_fd()) */
        uint32_t partition; /* MountFd, OpenMount: the number in the image's partition table;
                             * 0: the whole image, or its only mountable partition */
        bool partition_given; /* partition was in params (Mount refuses it, even 0) */
} MountParams;

typedef struct MountCall {
        CallMethod method;
        sd_bus_message *message; /* the method call; the reply goes to it (a reference) */
        Caller caller;           /* set by the caller stage (caller_identify()) */

        /* OpenMount, MountFd, Mount. */
        char *device_path;    /* Mount: the device path as given; NULL otherwise */
        int source_fd;        /* OpenMount, MountFd: the caller's fd, borrowed from the message;
                               * -EBADF otherwise */
        bool source_read_only; /* the caller's fd was opened O_RDONLY (source_check_access()) */
        char *source_path;    /* what the caller's fd referred to at the edge, for logs and
                               * polkit details only; NULL for Mount */
        char *fstype;         /* requested type, "" if none */
        char *options;        /* caller's option string */
        MountParams params;

        /* Unmount. */
        char *unmount_point;
        bool force;
        /* LoopSetup (source_fd, params.read_only): the byte range of the image. */
        uint64_t loop_offset;
        uint64_t loop_size;
} MountCall;

/* An empty call of method to message (a reference is taken): fds -EBADF, no strings. */
void call_init(MountCall *call, CallMethod method, sd_bus_message *message);

/* Releases what call owns and leaves it empty (as call_init() with no message). */
void call_done(MountCall *call);

/* Releases what c owns (pidfd, strings) and leaves it empty. */
void caller_done(Caller *c);
