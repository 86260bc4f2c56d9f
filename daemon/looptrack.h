/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The loop devices usermountd attached for users and that still exist, for the loop
 * device limits. A detached mount handed out by OpenMount keeps its loop device for as
 * long as the caller keeps the mount, without the daemon hearing about it again, so the
 * registry alone cannot count them. Each device is remembered with its disk sequence
 * number (unique for every attachment since boot): a loop device that was freed and
 * attached again by someone else has another one, so it is not counted against the user.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct LoopTrackEntry {
        dev_t devnum;
        uint64_t diskseq;
        uid_t uid;
} LoopTrackEntry;

typedef struct LoopTrack {
        LoopTrackEntry *entries;
        size_t n_entries;
} LoopTrack;

/* Remembers one attachment. -ENOMEM. */
int looptrack_add(LoopTrack *t, dev_t devnum, uint64_t diskseq, uid_t uid);

/* Counts the attachments remembered for uid, or all with (uid_t) -1: in memory, with no
 * look at sysfs; some may be gone since the last looptrack_prune(). */
size_t looptrack_count(const LoopTrack *t, uid_t uid);

/* Forgets the attachments that are gone (sysfs reports another or no disk sequence number
 * for the device): one sysfs read each. Returns how many were forgotten. */
size_t looptrack_prune(LoopTrack *t);

/* The disk sequence number of a block device, from sysfs. -errno. */
int looptrack_diskseq(dev_t devnum, uint64_t *ret);

void looptrack_done(LoopTrack *t);
