/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watching the registered mounts: gone ones are forgotten, moved ones followed, and ones
 * whose device went away are detached lazily in their namespace (a DetachJob) and then
 * forgotten. Runs on events (POLLPRI on the daemon's mountinfo, udev's block device
 * removals, a userspace driver's exit) and every --watch-interval.
 */
#pragma once

#include <stdbool.h>

#include "manager.h"
#include "registry.h"

/* Updates rec's mount point to where the kernel says the mount is now (it was renamed or
 * moved); 1 mounted, 0 gone, -errno. */
int reconcile_follow(Manager *m, MountRecord *rec);

/* Checks every registered mount now: gone ones are forgotten, ones whose device vanished
 * are lazily detached in their namespace, moved ones followed. */
void reconcile_all(Manager *m);

/* Starts the watching (events and timer). */
int reconcile_watch(Manager *m);

/* An Unmount of rec, or the detach after its device went, is under way: the outcome is
 * theirs to report (a reconcile meanwhile would call their own unmount "outside"). */
bool reconcile_mount_busy(Manager *m, const MountRecord *rec);
