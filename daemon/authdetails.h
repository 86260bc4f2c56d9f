/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The details polkit rules see (docs/architecture.md, "Authorization"), as
 * CheckAuthorization's key/value list: for a mount, the source as the daemon resolved it
 * (the image path, or the device node a /dev/disk link led to, never the caller's own
 * string), the probed facts, the decided flags and where it will be attached; for
 * unmount-others, the registered mount's own facts; and facts no path can change
 * (device-number, image-owner-uid, image-inode).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "call.h"
#include "driverpolicy.h"
#include "jobproto.h"
#include "registry.h"

typedef struct AuthDetails {
        char device[4096];
        const char *fstype, *label, *uuid, *idmap, *options, *driver;
        bool read_only, exec;
        char target[4096];
        char device_number[32], device_seat[64], image_owner_uid[16], image_inode[64];
        char partition[16];   /* the partition's number, "" for the whole source */
        const char *facts[9]; /* those of the four that apply: key, value, ..., NULL */
} AuthDetails;

/* What a mount request found and decided, for the details of its call (borrowed). */
typedef struct AuthFacts {
        const char *device;       /* the source as the daemon resolved it */
        dev_t devnum;             /* a block device's number; 0 for an image */
        int image_fd;             /* an image's fd (statx() only); -EBADF for a device */
        const SourceProbe *probe; /* fstype, label, uuid */
        unsigned partition;       /* the chosen partition's number, 0 for the whole source */
        DriverKind driver;
        bool read_only;           /* the mount will be read-only */
        const char *media_root;   /* where a mount without a target goes (conf.h) */
} AuthFacts;

/* The details of a mount call, after the probe. */
void auth_details_of_call(const MountCall *call, const AuthFacts *f, AuthDetails *d);

/* The details of an Unmount of another user's mount: the registered mount's own. */
void auth_details_of_mount(const MountRecord *rec, AuthDetails *d);

/* The NULL-terminated key, value, ... list of d for authorize_check_async(); it points
 * into d. */
#define AUTH_DETAILS_LIST_MAX 31
void auth_details_list(const AuthDetails *d, const char *ret[AUTH_DETAILS_LIST_MAX]);
