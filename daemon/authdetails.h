/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The details polkit rules see (ARCHITECTURE.md, "Authorization"), as
 * CheckAuthorization's key/value list: for a mount, the source as the daemon resolved it
 * (the image path, or the device node a /dev/disk link led to, never the caller's own
 * string), the probed facts, the decided flags and where it will be attached; for
 * unmount-others, the registered mount's own facts; and facts no path can change
 * (device-number, image-owner-uid, image-inode).
 */
#pragma once

#include <stdbool.h>

#include "request.h"

typedef struct AuthDetails {
        char device[4096];
        const char *fstype, *label, *uuid, *idmap, *options, *driver;
        bool read_only, exec;
        char target[4096];
        char device_number[32], image_owner_uid[16], image_inode[64];
        char partition[16];   /* the partition's number, "" for the whole source */
        const char *facts[7]; /* those of the three that apply: key, value, ..., NULL */
} AuthDetails;

/* The details of req (a mount call after the probe, or an Unmount of another's mount). */
void auth_details_of_request(Request *req, AuthDetails *d);

/* The NULL-terminated key, value, ... list of d for authorize_check_async(); it points
 * into d. */
#define AUTH_DETAILS_LIST_MAX 29
void auth_details_list(const AuthDetails *d, const char *ret[AUTH_DETAILS_LIST_MAX]);
