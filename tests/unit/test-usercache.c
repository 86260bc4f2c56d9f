/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usercache: each uid is looked up at most once per TTL, misses are remembered, the
 * oldest entry makes room, and a name too long to keep is not cut.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "usercache.h"

static unsigned lookups;

static bool fake_lookup(uid_t uid, gid_t *ret_gid, char *name, size_t size) {
        lookups++;
        if (uid >= 5000)
                return false;
        *ret_gid = uid + 1;
        if (uid == 4242)
                snprintf(name, size, "%0200d", 7);
        else
                snprintf(name, size, "user%u", (unsigned) uid);
        return true;
}

static void test_hit_and_expiry(void) {
        static UserCache c;
        const UserCacheEntry *e;

        lookups = 0;
        e = usercache_get(&c, 1000, 10, fake_lookup);
        g_assert_true(e->found);
        g_assert_cmpuint(e->gid, ==, 1001);
        g_assert_cmpstr(e->name, ==, "user1000");
        e = usercache_get(&c, 1000, 10 + USERCACHE_TTL_USEC - 1, fake_lookup);
        g_assert_cmpuint(lookups, ==, 1);
        e = usercache_get(&c, 1000, 10 + USERCACHE_TTL_USEC, fake_lookup);
        g_assert_cmpuint(lookups, ==, 2);
        g_assert_cmpstr(e->name, ==, "user1000");
}

static void test_miss_remembered(void) {
        static UserCache c;
        const UserCacheEntry *e;

        lookups = 0;
        e = usercache_get(&c, 6000, 1, fake_lookup);
        g_assert_false(e->found);
        g_assert_cmpuint(e->gid, ==, 6000);
        g_assert_cmpstr(e->name, ==, "");
        (void) usercache_get(&c, 6000, 2, fake_lookup);
        g_assert_cmpuint(lookups, ==, 1);
}

static void test_long_name_not_cut(void) {
        static UserCache c;
        const UserCacheEntry *e = usercache_get(&c, 4242, 1, fake_lookup);

        g_assert_true(e->found);
        g_assert_cmpstr(e->name, ==, "");
}

static void test_oldest_makes_room(void) {
        static UserCache c;

        lookups = 0;
        for (unsigned i = 0; i < USERCACHE_MAX; i++)
                (void) usercache_get(&c, i, 100 + i, fake_lookup);
        g_assert_cmpuint(c.n, ==, USERCACHE_MAX);
        /* One more: uid 0, the oldest, goes; the others stay. */
        (void) usercache_get(&c, 4000, 1000, fake_lookup);
        g_assert_cmpuint(c.n, ==, USERCACHE_MAX);
        (void) usercache_get(&c, 1, 1001, fake_lookup);
        g_assert_cmpuint(lookups, ==, USERCACHE_MAX + 1);
        (void) usercache_get(&c, 0, 1002, fake_lookup);
        g_assert_cmpuint(lookups, ==, USERCACHE_MAX + 2);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/usercache/hit-and-expiry", test_hit_and_expiry);
        g_test_add_func("/usercache/miss-remembered", test_miss_remembered);
        g_test_add_func("/usercache/long-name-not-cut", test_long_name_not_cut);
        g_test_add_func("/usercache/oldest-makes-room", test_oldest_makes_room);
        return g_test_run();
}
