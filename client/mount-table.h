/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table 'usermount list' prints: one row per registered mount, built from the info
 * dicts of ListMounts. Pure: the owner's name and the time zone come from the caller.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "mount-info.h"
#include "table.h"

/* A new table with the columns of 'usermount list'; NULL when out of memory. */
Table *mount_table_new(void);

/*
 * Adds the row of info. owner is what to show as the owner (a user name, or the uid as
 * text); NULL shows "-". Returns 0 or -ENOMEM.
 */
int mount_table_add(Table *t, const MountInfo *info, const char *owner);

/*
 * The OPTIONS cell: the locked attributes ("idmap" as "idmap=MAPPING" when known), then
 * the filesystem options, comma-separated; "" when there are none. Returns 0 or -ENOMEM;
 * the caller frees *ret.
 */
int mount_table_format_options(const MountInfo *info, char **ret);

/*
 * The CREATED cell: usec (CLOCK_REALTIME microseconds) as local time, "YYYY-MM-DD
 * HH:MM:SS", into buf of size bytes (20 suffice); "" for 0 or a time that cannot be
 * shown. Returns buf.
 */
char *mount_table_format_created(uint64_t usec, char *buf, size_t size);
