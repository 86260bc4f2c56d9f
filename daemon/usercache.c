/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remembered passwd entries of callers (usercache.h).
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "usercache.h"

bool usercache_getpwuid(uid_t uid, gid_t *ret_gid, char *name, size_t size) {
        struct passwd pw, *result = NULL;
        char buf[4096];

        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &result) != 0 || !result)
                return false;
        *ret_gid = result->pw_gid;
        snprintf(name, size, "%s", result->pw_name);
        return true;
}

static UserCacheEntry *slot_for(UserCache *c, uid_t uid) {
        unsigned oldest = 0;

        for (unsigned i = 0; i < c->n; i++)
                if (c->entries[i].uid == uid)
                        return &c->entries[i];
        if (c->n < USERCACHE_MAX)
                return &c->entries[c->n++];
        for (unsigned i = 1; i < c->n; i++)
                if (c->entries[i].when_usec < c->entries[oldest].when_usec)
                        oldest = i;
        return &c->entries[oldest];
}

const UserCacheEntry *usercache_get(UserCache *c, uid_t uid, uint64_t now_usec,
                                    UserCacheLookup lookup) {
        UserCacheEntry *e = slot_for(c, uid);
        char name[256] = "";
        gid_t gid = (gid_t) uid;
        bool found;

        if (e->uid == uid && e->when_usec != 0 && now_usec - e->when_usec < USERCACHE_TTL_USEC)
                return e;
        found = lookup(uid, &gid, name, sizeof(name));
        *e = (UserCacheEntry) { .uid = uid, .found = found, .gid = found ? gid : (gid_t) uid,
                                .when_usec = now_usec ?: 1 };
        /* A name that does not fit is not cut: the uid stands in for it. */
        if (found && strlen(name) < sizeof(e->name))
                memcpy(e->name, name, strlen(name) + 1);
        return e;
}
