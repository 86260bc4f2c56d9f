/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The list of subscribed connections (subscribers.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "subscribers.h"

static Subscriber *find(Subscribers *s, const char *name) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].name, name))
                        return &s->items[i];
        return NULL;
}

int subscribers_add(Subscribers *s, const char *name, uid_t uid, bool all) {
        Subscriber *sub = find(s, name), *items;
        char *copy;

        size_t n = 0;

        if (sub) {
                sub->uid = uid;
                sub->all = sub->all || all;
                return 0;
        }
        for (size_t i = 0; i < s->n; i++)
                n += s->items[i].uid == uid;
        if (n >= SUBSCRIBERS_MAX_PER_UID)
                return -EUSERS;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        items = reallocarray(s->items, s->n + 1, sizeof(Subscriber));
        if (!items) {
                free(copy);
                return -ENOMEM;
        }
        s->items = items;
        s->items[s->n++] = (Subscriber) { .name = copy, .uid = uid, .all = all };
        return 0;
}

void subscribers_see_all(Subscribers *s, const char *name) {
        Subscriber *sub = find(s, name);

        if (sub)
                sub->all = true;
}

bool subscribers_has(const Subscribers *s, const char *name) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].name, name))
                        return true;
        return false;
}

bool subscribers_remove(Subscribers *s, const char *name) {
        Subscriber *sub = find(s, name);

        if (!sub)
                return false;
        free(sub->name);
        *sub = s->items[--s->n];
        return true;
}

bool subscriber_sees(const Subscriber *sub, uid_t owner_uid) {
        return sub->all || sub->uid == owner_uid;
}

void subscribers_done(Subscribers *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->items[i].name);
        s->items = mfree(s->items);
        s->n = 0;
}
