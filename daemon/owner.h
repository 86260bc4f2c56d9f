/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who a caller is charged to for the limits of usermount.conf [Limits]: the uid's
 * accountable owner, and whether polkit has said yes to that owner before.
 *
 * To the bus and to polkit every uid is a user of its own, so the 65,536 subordinate uids
 * /etc/subuid delegates to one rootless-container user would get 65,536 times that
 * user's limits. The owner of a uid is therefore the user whose /etc/subuid range holds
 * it (the line names the user, or its uid in decimal), else the uid itself:
 *   - uid 0 is never remapped, even if a range holds it;
 *   - a uid that several users' ranges hold counts as the lowest of those owners' uids,
 *     so that the answer depends on nothing but the file;
 *   - one level only: an owner's own uid is not looked up again (the file delegates
 *     ranges to login users, whose uids lie in no range);
 *   - lines the daemon cannot use (malformed, as idmap_parse_subid() skips them, or
 *     naming a user who does not exist) delegate nothing.
 * Requests keep the owner they started with; the registry keeps the real caller uid and
 * its records are mapped when they are counted.
 *
 * OwnerKnown remembers the owners polkit has authorized (a bounded set, the oldest
 * forgotten first): their requests, before polkit says yes again, are not charged to the
 * small budget of requests nobody has authorized yet (MaxUnauthorizedRequests=), only to
 * their per-user limits.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The largest part of the file that is read; the rest is ignored (owner_map_refresh()). */
#define OWNER_FILE_MAX (4u * 1024u * 1024u)

/* Owners polkit authorized that are remembered at most. */
#define OWNER_KNOWN_MAX 256u

typedef struct OwnerRange {
        uint32_t first;
        uint32_t count;
        uid_t owner;
} OwnerRange;

typedef struct OwnerMap {
        OwnerRange *ranges; /* sorted by first, then owner */
        uint64_t *reach;    /* reach[i]: the largest first + count of ranges[0..i] */
        size_t n_ranges;
        /* The file the ranges came from, to notice that it changed: */
        bool read;          /* the file was looked at (it may have been missing) */
        bool present;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
} OwnerMap;

/* The uid of a user named in the file. 0, or -ENOENT when there is none. */
typedef int (*OwnerResolveFunc)(const char *name, uid_t *ret);

/* The default resolver: a decimal uid as is, else the passwd entry (NSS). */
int owner_resolve_nss(const char *name, uid_t *ret);

/*
 * Parses /etc/subuid text (size bytes, need not be NUL-terminated) into m, replacing what
 * it held. resolve NULL: owner_resolve_nss(). -ENOMEM (m unchanged).
 */
int owner_map_parse(OwnerMap *m, const char *text, size_t size, OwnerResolveFunc resolve);

/*
 * Reads path again if it is not the file last read (device, inode, size, modification or
 * change time differ; one stat() when it is the same). A missing file delegates nothing.
 * Returns 0 when nothing changed, 1 when the map was rebuilt, -EFBIG when it was rebuilt
 * from the first OWNER_FILE_MAX bytes of a larger file (up to its last full line), and
 * other -errno when the file could not be read: the previous ranges stay then, until the
 * file changes again (so a broken file is reported once, not once per request).
 */
int owner_map_refresh(OwnerMap *m, const char *path, OwnerResolveFunc resolve);

/* The accountable owner of uid (see above); uid itself when no range holds it. */
uid_t owner_map_lookup(const OwnerMap *m, uid_t uid);

/* Frees the ranges; m is empty (and will be read again) afterwards. */
void owner_map_done(OwnerMap *m);

typedef struct OwnerKnown {
        uid_t owners[OWNER_KNOWN_MAX];
        size_t n;
        size_t next; /* where the next one goes once it is full: the oldest */
} OwnerKnown;

/* Remembers owner (once), forgetting the oldest when OWNER_KNOWN_MAX are known. */
void owner_known_add(OwnerKnown *k, uid_t owner);
bool owner_known_has(const OwnerKnown *k, uid_t owner);
