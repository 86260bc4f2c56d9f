/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which partition of a partitioned image a mount request means (params "partition"): the
 * one with the number the caller gave, or, without one, the only partition usermount can
 * mount; with none or several the request is refused with the list, so that the caller
 * can choose. Pure functions on a table parttable_read() filled (parttable.h): the unit
 * tests cover them on tables made in memory.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parttable.h"
#include "um-error.h"

/*
 * Whether usermount can mount what e holds: exactly one signature, a filesystem of a type
 * usermount mounts (fstype_allowed(); the administrator's AllowedFilesystems= is
 * checked later, with the request), in a partition that is no extended container and lies
 * within the disk. If not and ret_why is given, *ret_why is the reason, a phrase that
 * follows "partition N " ("holds swap, which is not a filesystem", ...).
 */
bool partition_mountable(const PartEntry *e, const char **ret_why);

/*
 * The partition of t that requested names (1-based, as in the table) or, for 0, the only
 * one that partition_mountable() accepts. 0 and *ret pointing into t, or:
 *   -ENOENT, InvalidArgument: no partition requested in the table (the message lists them);
 *   -EINVAL, InvalidSource: partition requested cannot be mounted (the message says why);
 *   -ENOENT, InvalidSource: 0, and no partition can be mounted (listed);
 *   -EINVAL, InvalidSource: 0, and several can (listed, with how to choose).
 * what names the source in messages: "image", "disk".
 */
int partition_select(const PartTable *t, uint32_t requested, const char *what,
                     const PartEntry **ret, UmError *error);

/*
 * "2 (linux-generic, ext4 \"data\"), 3 (swap, swap)" into buf (size n): every partition of
 * t, or only the mountable ones; device data escaped and cut short, and "and N more" when
 * buf is full. Always NUL-terminated; returns buf.
 */
char *partition_list(const PartTable *t, bool only_mountable, char *buf, size_t n);
