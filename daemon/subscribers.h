/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who receives MountAdded and MountRemoved: the bus connections that called Subscribe(),
 * each with the uid it had then and whether it may see every user's mounts (root, or
 * polkit's unmount-others). Signals go to each of them unicast, and only for mounts they
 * may see; nothing is broadcast (org.freedesktop.UserMount1(5), "Signals").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "usermount-names.h"

typedef struct Subscriber {
        char *name; /* unique bus name, ":1.42" */
        uid_t uid;
        bool all;   /* sees every user's mounts */
} Subscriber;

typedef struct Subscribers {
        Subscriber *items;
        size_t n;
} Subscribers;

/* Subscriptions one uid may hold at a time (one per connection; the bus limits those). */
#define SUBSCRIBERS_MAX_PER_UID UM_SUBSCRIPTIONS_MAX_PER_UID

/* Adds name, or updates it (Subscribe is idempotent). 0, -EUSERS when uid holds
 * SUBSCRIBERS_MAX_PER_UID already, or -ENOMEM. */
int subscribers_add(Subscribers *s, const char *name, uid_t uid, bool all);

/* Lets name see every mount, if it is still subscribed (polkit answered after a while, and
 * the connection may have closed meanwhile). */
void subscribers_see_all(Subscribers *s, const char *name);

/* Whether name is subscribed. */
bool subscribers_has(const Subscribers *s, const char *name);

/* Removes name if subscribed; true if it was. */
bool subscribers_remove(Subscribers *s, const char *name);

/* Whether subscriber i may see a mount of owner_uid. */
bool subscriber_sees(const Subscriber *sub, uid_t owner_uid);

void subscribers_done(Subscribers *s);
