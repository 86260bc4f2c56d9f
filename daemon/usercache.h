/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The callers' passwd entries (primary gid, user name), remembered for a while. The main
 * loop needs them for every request; NSS can block (nss-systemd asks userdbd, LDAP asks a
 * server), so each uid is looked up at most once per USERCACHE_TTL_USEC, and a lookup
 * that found nothing is remembered too. At most USERCACHE_MAX entries: the oldest goes.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define USERCACHE_MAX 256
#define USERCACHE_TTL_USEC (60ULL * 1000000ULL)

typedef struct UserCacheEntry {
        uid_t uid;
        bool found;        /* a passwd entry exists; else gid and name are stand-ins */
        gid_t gid;
        char name[64];     /* empty when the name was too long: the uid is used */
        uint64_t when_usec;
} UserCacheEntry;

typedef struct UserCache {
        UserCacheEntry entries[USERCACHE_MAX];
        unsigned n;
} UserCache;

/* How a cache miss is answered: getpwuid_r() in the daemon, a table in the tests.
 * Returns true and fills gid and name (NUL-terminated, truncated to size) if found. */
typedef bool (*UserCacheLookup)(uid_t uid, gid_t *ret_gid, char *name, size_t size);

bool usercache_getpwuid(uid_t uid, gid_t *ret_gid, char *name, size_t size);

/* The entry for uid at now_usec (CLOCK_MONOTONIC), looked up with lookup when absent or
 * older than USERCACHE_TTL_USEC. The pointer is valid until the next call. */
const UserCacheEntry *usercache_get(UserCache *c, uid_t uid, uint64_t now_usec,
                                    UserCacheLookup lookup);
