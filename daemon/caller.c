/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who sends a call: the bus's record of the connection, remembered per unique name, and
 * the process behind it, checked through a pidfd (caller.h).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>

#include "caller.h"
#include "procfs.h"

typedef struct CallerEntry {
        char *name; /* unique bus name; NULL: slot unused */
        CallerCreds creds;
        uint64_t used; /* CallerCache.tick at the last use */
} CallerEntry;

/* One GetConnectionCredentials in flight, and the calls of that connection waiting for it. */
typedef struct CallerLookup CallerLookup;
struct CallerLookup {
        CallerCache *cache;
        CallerLookup *next;
        char *name;
        sd_bus_slot *slot;
        MountCall *calls[CALLER_WAITERS_MAX];
        CallerDone dones[CALLER_WAITERS_MAX];
        void *userdatas[CALLER_WAITERS_MAX];
        size_t n_requests;
};

struct CallerCache {
        sd_bus *bus;       /* borrowed */
        sd_event *event;   /* borrowed */
        UserCache *users;  /* borrowed */
        CallerEntry entries[CALLER_CACHE_MAX];
        size_t n;
        uint64_t tick;
        CallerLookup *lookups;
        size_t n_lookups;
        size_t n_waiting;  /* calls in all lookups */
};

static void creds_done(CallerCreds *c) {
        c->label = mfree(c->label);
}

int caller_cache_new(sd_bus *bus, sd_event *event, UserCache *users, CallerCache **ret) {
        CallerCache *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->bus = bus;
        c->event = event;
        c->users = users;
        *ret = c;
        return 0;
}

static CallerLookup *lookup_free(CallerLookup *l) {
        if (!l)
                return NULL;
        sd_bus_slot_unref(l->slot);
        for (size_t i = 0; i < l->n_requests; i++)
                l->dones[i](l->userdatas[i], -ECANCELED, NULL);
        free(l->name);
        free(l);
        return NULL;
}

static void lookup_unlink(CallerCache *c, CallerLookup *l) {
        for (CallerLookup **p = &c->lookups; *p; p = &(*p)->next)
                if (*p == l) {
                        *p = l->next;
                        l->next = NULL;
                        c->n_lookups--;
                        c->n_waiting -= l->n_requests;
                        return;
                }
}

CallerCache *caller_cache_free(CallerCache *c) {
        if (!c)
                return NULL;
        while (c->lookups) {
                CallerLookup *l = c->lookups;

                lookup_unlink(c, l);
                lookup_free(l);
        }
        for (size_t i = 0; i < c->n; i++) {
                free(c->entries[i].name);
                creds_done(&c->entries[i].creds);
        }
        free(c);
        return NULL;
}

static CallerEntry *entry_find(CallerCache *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->entries[i].name, name))
                        return &c->entries[i];
        return NULL;
}

const CallerCreds *caller_cache_get(CallerCache *c, const char *name) {
        CallerEntry *e = entry_find(c, name);

        if (!e)
                return NULL;
        e->used = ++c->tick;
        return &e->creds;
}

/* The entry for name: its own, an unused one, or the least recently used one, emptied. */
static CallerEntry *entry_slot(CallerCache *c, const char *name) {
        CallerEntry *e = entry_find(c, name);
        size_t lru = 0;

        if (!e && c->n < CALLER_CACHE_MAX)
                return &c->entries[c->n++];
        if (!e) {
                for (size_t i = 1; i < c->n; i++)
                        if (c->entries[i].used < c->entries[lru].used)
                                lru = i;
                e = &c->entries[lru];
        }
        e->name = mfree(e->name);
        creds_done(&e->creds);
        return e;
}

int caller_cache_put(CallerCache *c, const char *name, const CallerCreds *creds) {
        _cleanup_free_ char *n = strdup(name);
        _cleanup_free_ char *label = NULL;
        CallerEntry *e;

        if (!n)
                return -ENOMEM;
        if (creds->label) {
                label = strdup(creds->label);
                if (!label)
                        return -ENOMEM;
        }
        e = entry_slot(c, name);
        e->name = TAKE_PTR(n);
        e->creds = (CallerCreds) { .uid = creds->uid, .pid = creds->pid, .label = TAKE_PTR(label),
                                   .start_time = creds->start_time };
        e->used = ++c->tick;
        return 0;
}

void caller_cache_note_start_time(CallerCache *c, const char *name, uint64_t start_time) {
        CallerEntry *e = c && name ? entry_find(c, name) : NULL;

        if (e && e->creds.start_time == 0)
                e->creds.start_time = start_time;
}

bool caller_cache_forget(CallerCache *c, const char *name) {
        CallerEntry *e = c ? entry_find(c, name) : NULL;

        if (!e)
                return false;
        free(e->name);
        creds_done(&e->creds);
        /* The last entry takes its place: entries stay packed. */
        *e = c->entries[--c->n];
        c->entries[c->n] = (CallerEntry) {};
        return true;
}

size_t caller_cache_size(const CallerCache *c) {
        return c ? c->n : 0;
}

size_t caller_cache_pending(const CallerCache *c) {
        return c ? c->n_lookups : 0;
}

/* ---- The process ---------------------------------------------------------------------- */

/* A pidfd polls readable once its process has exited (no signal permission needed). */
static bool pidfd_exited(int pidfd) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };

        return poll(&p, 1, 0) != 0;
}

int caller_check_process(pid_t pid, uid_t uid, int pidfd, int *ret_pidfd,
                         uint64_t *ret_start_time, mode_t *ret_umask) {
        _cleanup_close_ int fd = -EBADF;
        ProcStatus st;
        uint64_t start_time;
        int r;

        if (pid <= 0)
                return -ESRCH;
        fd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 3) : pidfd_open(pid, 0);
        if (fd < 0)
                return -errno;
        /* By pid, while the pidfd keeps the question honest: if the process is still alive
         * after both reads, the pid could not have been reused in between. */
        r = proc_status_read(pid, &st);
        if (r >= 0)
                r = proc_start_time(pid, &start_time);
        if (r == -ENOENT || pidfd_exited(fd))
                return -ESRCH;
        if (r < 0)
                return r;
        if (!proc_status_has_only_uid(&st, uid))
                return -EPERM;

        *ret_pidfd = TAKE_FD(fd);
        *ret_start_time = start_time;
        *ret_umask = st.has_umask ? st.umask : 0077;
        return 0;
}

/* ---- The stage ------------------------------------------------------------------------ */

/* The Caller of call from creds and the process behind them. */
static int caller_fill(CallerCache *cache, MountCall *call, const CallerCreds *creds, int pidfd,
                       UmError *error) {
        Caller *c = &call->caller;
        const UserCacheEntry *u;
        uint64_t now = 0;
        int r;

        c->uid = creds->uid;
        c->pid = creds->pid;
        if (creds->label) {
                c->label = strdup(creds->label);
                if (!c->label)
                        return -ENOMEM;
        }
        r = caller_check_process(creds->pid, creds->uid, pidfd, &c->pidfd, &c->start_time,
                                 &c->umask);
        /* The pid the bus recorded names another process than at the connection's first
         * call: the one that connected is gone, its pid reused. */
        if (r >= 0 && creds->start_time != 0 && creds->start_time != c->start_time)
                r = -EPERM;
        if (r >= 0 && creds->start_time == 0)
                caller_cache_note_start_time(cache, sd_bus_message_get_sender(call->message),
                                             c->start_time);
        if (r == -ESRCH)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ESRCH,
                                    "The calling process exited before its request was "
                                    "handled.");
        if (r == -EPERM)
                /* The bus records the pid of whoever opened the connection, which may have
                 * exited while a child kept the connection: the pid could then name another
                 * user's process, or a process of the caller that is no longer only theirs. */
                return um_error_set(error, UM_ERROR_KIND_FAILED, ESRCH,
                                    "The process that opened this bus connection is gone or "
                                    "runs as another user; call from the process that "
                                    "connected.");
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not look at the calling process: %s.", strerror(-r));

        /* The primary group is only used for uid=/gid= on filesystems without owners and the
         * group of the user's media directory; the name for that directory's name. NSS may
         * block (userdbd, LDAP): remembered for a minute (usercache.h). */
        if (cache->event)
                (void) sd_event_now(cache->event, CLOCK_MONOTONIC, &now);
        u = usercache_get(cache->users, creds->uid, now, usercache_getpwuid);
        c->gid = u->gid;
        c->gid_known = u->found;
        if (u->found && u->name[0])
                c->user_name = strdup(u->name);
        else if (asprintf(&c->user_name, "%u", (unsigned) creds->uid) < 0)
                c->user_name = NULL;
        return c->user_name ? 0 : -ENOMEM;
}

static void caller_continue(CallerCache *cache, MountCall *call, const CallerCreds *creds,
                            int pidfd, CallerDone done, void *userdata) {
        UmError error = {};
        int r;

        r = caller_fill(cache, call, creds, pidfd, &error);
        if (r < 0 && error.kind == UM_ERROR_KIND_NONE)
                um_error_set(&error, UM_ERROR_KIND_FAILED, -r,
                             "Could not learn who is calling: %s.", strerror(-r));
        done(userdata, r < 0 ? r : 0, r < 0 ? &error : NULL);
}

/* Reads the a{sv} of GetConnectionCredentials: UnixUserID and ProcessID are required. */
static int read_credentials(sd_bus_message *reply, CallerCreds *ret, int *ret_pidfd) {
        bool have_uid = false, have_pid = false;
        uint32_t uid = 0, pid = 0;
        int pidfd = -EBADF, r;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key;
                const void *p;
                size_t size;

                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "UnixUserID")) {
                        r = sd_bus_message_read(reply, "v", "u", &uid);
                        have_uid = r >= 0;
                } else if (streq(key, "ProcessID")) {
                        r = sd_bus_message_read(reply, "v", "u", &pid);
                        have_pid = r >= 0;
                } else if (streq(key, "ProcessFD")) {
                        r = sd_bus_message_read(reply, "v", "h", &pidfd);
                } else if (streq(key, "LinuxSecurityLabel")) {
                        /* The label's bytes and a NUL (D-Bus specification). */
                        r = sd_bus_message_enter_container(reply, 'v', "ay");
                        if (r >= 0)
                                r = sd_bus_message_read_array(reply, 'y', &p, &size);
                        if (r >= 0 && size > 0 && ((const char *) p)[0]) {
                                free(ret->label);
                                ret->label = strndup(p, size);
                                if (!ret->label)
                                        r = -ENOMEM;
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                } else
                        r = sd_bus_message_skip(reply, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (!have_uid || !have_pid || pid == 0)
                return -ENODATA;
        ret->uid = (uid_t) uid;
        ret->pid = (pid_t) pid;
        *ret_pidfd = pidfd; /* owned by reply */
        return 0;
}

static int on_credentials(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        CallerLookup *l = userdata;
        CallerCache *c = l->cache;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        CallerCreds creds = {};
        UmError error = {};
        int pidfd = -EBADF, r;

        lookup_unlink(c, l);
        if (e && sd_bus_error_has_name(e, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                r = um_error_set(&error, UM_ERROR_KIND_FAILED, ESRCH,
                                 "The calling connection closed before its request was "
                                 "handled.");
        else if (e)
                r = um_error_set(&error, UM_ERROR_KIND_FAILED, sd_bus_error_get_errno(e),
                                 "Could not learn who is calling from the bus: %s.",
                                 e->message ?: e->name);
        else {
                r = read_credentials(reply, &creds, &pidfd);
                if (r >= 0)
                        r = caller_cache_put(c, l->name, &creds);
                if (r < 0)
                        um_error_set(&error, UM_ERROR_KIND_FAILED, -r,
                                     "Could not learn who is calling from the bus: %s.",
                                     strerror(-r));
        }

        for (size_t i = 0; i < l->n_requests; i++) {
                MountCall *call = TAKE_PTR(l->calls[i]);

                if (r < 0)
                        l->dones[i](l->userdatas[i], r, &error);
                else
                        caller_continue(c, call, &creds, pidfd, l->dones[i], l->userdatas[i]);
        }
        l->n_requests = 0;
        creds_done(&creds);
        lookup_free(l);
        return 0;
}

/* Asks the bus about name, for call; or adds call to the question already asked. */
static int caller_ask(CallerCache *c, const char *name, MountCall *call, CallerDone done,
                      void *userdata, UmError *error) {
        CallerLookup *l;
        int r;

        for (l = c->lookups; l; l = l->next)
                if (streq(l->name, name))
                        break;
        if (l && l->n_requests >= CALLER_WAITERS_MAX)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "This connection sent %u calls before the bus said who "
                                    "it is, the most that may wait; wait for the answers.",
                                    CALLER_WAITERS_MAX);
        if (c->n_waiting >= CALLER_WAITING_MAX)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "usermountd has %u calls waiting for the bus to say who "
                                    "sent them, the most it may; try again.",
                                    CALLER_WAITING_MAX);
        if (!l && c->n_lookups >= CALLER_LOOKUPS_MAX)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "usermountd is asking the bus about %u connections already, "
                                    "the most it may; try again.", CALLER_LOOKUPS_MAX);
        if (!l) {
                l = calloc(1, sizeof(*l));
                if (!l)
                        return -ENOMEM;
                l->cache = c;
                l->name = strdup(name);
                if (!c->bus)
                        r = -ENOTCONN;
                else if (l->name)
                        r = sd_bus_call_method_async(c->bus, &l->slot,
                                                     "org.freedesktop.DBus",
                                                     "/org/freedesktop/DBus",
                                                     "org.freedesktop.DBus",
                                                     "GetConnectionCredentials", on_credentials,
                                                     l, "s", name);
                else
                        r = -ENOMEM;
                if (r < 0) {
                        lookup_free(l);
                        return r;
                }
                l->next = c->lookups;
                c->lookups = l;
                c->n_lookups++;
        }
        l->calls[l->n_requests] = call;
        l->dones[l->n_requests] = done;
        l->userdatas[l->n_requests] = userdata;
        l->n_requests++;
        c->n_waiting++;
        return 0;
}

void caller_identify(CallerCache *c, MountCall *call, CallerDone done, void *userdata) {
        const char *name = sd_bus_message_get_sender(call->message);
        const CallerCreds *cached;
        UmError error = {};
        int r;

        if (!name || name[0] != ':') {
                um_error_set(&error, UM_ERROR_KIND_FAILED, EPROTO,
                             "The call came without a sender; call through the system bus.");
                return done(userdata, -EPROTO, &error);
        }
        cached = caller_cache_get(c, name);
        if (cached) {
                /* Copied: done may change the cache (a connection's calls can re-enter). */
                CallerCreds creds = { .uid = cached->uid, .pid = cached->pid,
                                      .start_time = cached->start_time };

                if (cached->label && !(creds.label = strdup(cached->label))) {
                        um_error_set(&error, UM_ERROR_KIND_FAILED, ENOMEM,
                                     "Could not learn who is calling: %s.", strerror(ENOMEM));
                        return done(userdata, -ENOMEM, &error);
                }
                caller_continue(c, call, &creds, -EBADF, done, userdata);
                creds_done(&creds);
                return;
        }
        r = caller_ask(c, name, call, done, userdata, &error);
        if (r < 0) {
                if (error.kind == UM_ERROR_KIND_NONE)
                        um_error_set(&error, UM_ERROR_KIND_FAILED, -r,
                                     "Could not ask the bus who is calling: %s.", strerror(-r));
                done(userdata, r, &error);
        }
}
