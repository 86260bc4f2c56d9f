/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The automounter of usermount automount (automount.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <systemd/sd-event.h>

#include "automount.h"
#include "bus-client.h"
#include "mount-info.h"
#include "output.h"
#include "usermount-names.h"
#include "cli.h"

/* How long to wait for usermountd or the bus, doubling from the first to the last. */
#define RETRY_FIRST_USEC (1ULL * 1000000ULL)
#define RETRY_MAX_USEC (30ULL * 1000000ULL)
/* After MountRemoved, how long a udev "remove" may take to say the device was pulled. */
#define UNMOUNT_GRACE_USEC (1ULL * 1000000ULL)

typedef enum EntryState {
        ENTRY_MOUNTED,   /* we mounted it, and it is mounted */
        ENTRY_UNMOUNTED, /* we mounted it; it was unmounted since: not mounted again */
        ENTRY_LEFT,      /* ignored, already mounted, or refused: left alone */
} EntryState;

/* A device automount has dealt with, for as long as it has the same filesystem. */
struct Entry {
        dev_t devnum;
        char *uuid;        /* the filesystem's, to notice a new one; NULL: none */
        char *name;        /* label, else UUID, else device: what the user is told */
        char *devname;
        char *mount_point; /* ENTRY_MOUNTED, ENTRY_UNMOUNTED */
        EntryState state;
        sd_event_source *unmount_timer;
        Automount *owner;
        Entry *next;
};

/* ---- Devices ------------------------------------------------------------------------- */

static Entry *entry_free(Entry *e) {
        if (!e)
                return NULL;
        sd_event_source_disable_unref(e->unmount_timer);
        free(e->uuid);
        free(e->name);
        free(e->devname);
        free(e->mount_point);
        return mfree(e);
}

static Entry *automount_find(Automount *a, dev_t devnum) {
        for (Entry *e = a->entries; e; e = e->next)
                if (e->devnum == devnum)
                        return e;
        return NULL;
}

static void automount_forget(Automount *a, Entry *gone) {
        for (Entry **p = &a->entries; *p; p = &(*p)->next)
                if (*p == gone) {
                        *p = gone->next;
                        entry_free(gone);
                        return;
                }
}

/* Adds an entry for d in state; NULL when out of memory (then the device is tried again). */
static Entry *automount_add(Automount *a, const AutomountDevice *d, EntryState state) {
        Entry *e = calloc(1, sizeof(Entry));
        const char *name = d->label ?: d->uuid ?: d->devname;

        if (!e)
                return NULL;
        *e = (Entry) { .devnum = d->devnum, .state = state, .owner = a };
        e->name = strdup(name);
        e->devname = strdup(d->devname);
        e->uuid = d->uuid ? strdup(d->uuid) : NULL;
        if (!e->name || !e->devname || (d->uuid && !e->uuid))
                return entry_free(e);
        e->next = a->entries;
        a->entries = e;
        return e;
}

/*
 * Tells the user: a log line on stderr, or in --once mode what went well on standard
 * output; and a desktop notification.
 */
static void automount_tell(Automount *a, bool failure, const char *summary, const char *body) {
        if (a->once && !failure) {
                _cleanup_free_ char *s = output_escape(summary), *b = output_escape(body);

                printf("%s%s%s\n", strempty(s), body ? ": " : "", body ? strempty(b) : "");
                fflush(stdout);
        } else
                notifier_log(summary, body);
        notifier_notify(&a->notifier, failure, summary, body);
}

static void automount_schedule_retry(Automount *a);

/*
 * The system bus or usermountd is not there (error and r as the failed call returned
 * them): said once, until it is back; then tried again in the background.
 */
static void automount_unavailable(Automount *a, const char *name, const char *message, int r) {
        if (!a->unavailable_logged) {
                if (name)
                        client_log_error_name(name, message, false, r);
                else
                        log_error_errno(r, "Cannot reach usermountd: no system bus (%m).");
                if (!a->once)
                        log_error("Trying again in the background.");
        }
        a->unavailable_logged = true;
        a->unavailable = true;
        a->subscribed = false;
        automount_schedule_retry(a);
}

/* The system bus and usermountd are there (again). */
static void automount_available(Automount *a) {
        a->subscribed = true;
        a->retry_usec = 0;
        a->unavailable = false;
        if (a->unavailable_logged)
                log_error("usermountd is there now.");
        a->unavailable_logged = false;
}

/* Why a failed Mount failed, in words for a notification. */
static char *mount_failure_reason(const char *name, const char *message, int r) {
        char *s = NULL;

        if (streq_ptr(name, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN))
                s = strdup("polkit allows it only after authentication, which automount does "
                           "not ask for; use 'usermount mount' on a terminal");
        else if (name)
                s = strdup(message ?: name);
        else if (asprintf(&s, "%s", strerror(-r)) < 0)
                s = NULL;
        return s;
}

static void automount_mount(Automount *a, const AutomountDevice *d) {
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_free_ char *summary = NULL, *body = NULL, *reason = NULL, *mount_point = NULL;
        const char *name = NULL, *message = NULL;
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        Entry *e;
        int r;

        r = usermount_options_new(&o);
        if (r >= 0)
                r = usermount_options_set_read_only(o, a->config.read_only > 0);
        if (r >= 0)
                r = usermount_options_set_idmap(o, a->config.idmap_user > 0 ? "user" : NULL);
        /* Never interactive (the client's mode): nobody is there to be asked. */
        if (r >= 0)
                r = usermount_mount(a->client, d->devname, o, &mount_point, &info);
        if (r < 0)
                (void) usermount_client_get_error(a->client, &name, &message);
        if (r < 0 && (client_error_status(name, r) == EXIT_STATUS_UNAVAILABLE ||
                      usermount_client_is_connected(a->client) <= 0)) {
                /* Not the device's fault: tried again once usermountd is back. */
                automount_unavailable(a, name, message, r);
                return;
        }
        if (r < 0) {
                reason = mount_failure_reason(name, message, r);
                if (asprintf(&summary, "Could not mount %s (%s)", d->label ?: d->uuid ?: d->devname,
                             d->devname) < 0)
                        summary = NULL;
                /*
                 * What polkit refuses among the devices there at start is mostly the
                 * machine's own (an EFI or a Windows partition): said in the log, not in a
                 * notification at every login. A device plugged in gets one.
                 */
                else if (a->enumerating && !a->once &&
                         client_error_status(name, r) == EXIT_STATUS_NOT_AUTHORIZED)
                        notifier_log(summary, reason);
                else
                        automount_tell(a, true, summary, reason);
                a->n_failed++;
                (void) automount_add(a, d, ENTRY_LEFT);
                return;
        }

        e = automount_add(a, d, ENTRY_MOUNTED);
        if (e) {
                e->mount_point = strdup(mount_point);
                /* Without its mount point no MountRemoved would find it: as if never seen,
                 * so the next event of the device finds it mounted and leaves it. */
                if (!e->mount_point)
                        automount_forget(a, e);
        }
        if (asprintf(&summary, "Mounted %s at %s", d->label ?: d->uuid ?: d->devname,
                     mount_point) < 0 ||
            asprintf(&body, "%s, %s%s%s", d->devname, strempty(usermount_info_get_fstype(info)),
                     usermount_info_has_attribute(info, "ro") ? ", read-only" : "",
                     usermount_info_has_attribute(info, "idmap") ? ", id-mapped" : "") < 0)
                return;
        automount_tell(a, false, summary, body);
}

/* A device is there, new or changed: mounts it unless there is a reason not to. */
static void automount_on_present(Automount *a, const AutomountDevice *d) {
        Entry *e = automount_find(a, d->devnum);
        _cleanup_free_ char *summary = NULL;
        const char *why;

        /*
         * Nothing to mount (now: blkid may also have failed to read the device for once).
         * An entry stays: a new filesystem on the device has a new UUID, which is what
         * makes it new, not an event without one.
         */
        if (automount_device_verdict(d) != AUTOMOUNT_MOUNT)
                return;
        if (e && streq_ptr(e->uuid, d->uuid))
                return; /* dealt with already: this is udev saying it changed */
        if (e)
                automount_forget(a, e); /* a new filesystem on it */
        if (!a->subscribed)
                return; /* mounted once usermountd is there: we enumerate then */

        why = automount_config_ignores(&a->config, d->label, d->uuid, d->fs_type);
        if (why) {
                if (asprintf(&summary, "Ignoring %s (%s): its %s is in the ignore list",
                             d->label ?: d->uuid ?: d->devname, d->devname, why) >= 0) {
                        if (a->once)
                                automount_tell(a, false, summary, NULL);
                        else
                                notifier_log(summary, NULL);
                }
                (void) automount_add(a, d, ENTRY_LEFT);
                return;
        }
        if (automount_device_is_mounted(d->devnum) > 0) {
                (void) automount_add(a, d, ENTRY_LEFT);
                return;
        }
        automount_mount(a, d);
}

/* A device was pulled. usermountd detaches its mount itself; we tell the user. */
static void automount_on_removed(Automount *a, const AutomountDevice *d) {
        Entry *e = automount_find(a, d->devnum);
        _cleanup_free_ char *summary = NULL;

        if (!e)
                return;
        if ((e->state == ENTRY_MOUNTED || e->state == ENTRY_UNMOUNTED) &&
            asprintf(&summary, "%s was removed", e->name) >= 0)
                automount_tell(a, false, summary, e->mount_point);
        automount_forget(a, e);
}

void automount_on_device(const AutomountDevice *d, bool removed, void *userdata) {
        Automount *a = userdata;

        if (!d->devname || d->devnum == 0)
                return;
        if (removed)
                automount_on_removed(a, d);
        else
                automount_on_present(a, d);
}

/* ---- usermountd ---------------------------------------------------------------------- */

static int on_unmount_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Entry *e = userdata;
        _cleanup_free_ char *summary = NULL;

        e->unmount_timer = sd_event_source_disable_unref(e->unmount_timer);
        if (asprintf(&summary, "%s was unmounted", e->name) >= 0)
                automount_tell(e->owner, false, summary, e->mount_point);
        return 0;
}

/* usermountd took a mount down: said after a moment, unless the device was pulled. */
static void automount_on_mount_removed(Automount *a, const char *mount_point) {
        for (Entry *e = a->entries; e; e = e->next)
                if (e->state == ENTRY_MOUNTED && streq_ptr(e->mount_point, mount_point)) {
                        /* Not mounted again; said after a moment, unless it was pulled. */
                        e->state = ENTRY_UNMOUNTED;
                        (void) sd_event_add_time_relative(a->event, &e->unmount_timer,
                                                          CLOCK_MONOTONIC, UNMOUNT_GRACE_USEC,
                                                          0, on_unmount_timer, e);
                }
}

static void automount_enumerate(Automount *a) {
        int r;

        a->enumerating = true;
        r = automount_udev_enumerate(automount_on_device, a);
        a->enumerating = false;

        if (r < 0)
                log_error_errno(r, "Cannot list the block devices udev knows: %m");
}

/* Drops the connections (they failed, or are replaced). */
static void automount_disconnect(Automount *a) {
        a->watcher_source = sd_event_source_disable_unref(a->watcher_source);
        a->watcher = usermount_monitor_free(a->watcher);
        a->watcher_client = usermount_client_unref(a->watcher_client);
        a->client = usermount_client_unref(a->client);
}

/* A usermount_monitor_func: usermountd's signals, and its restarts. */
static int on_watcher_event(usermount_monitor *m, usermount_event event, const char *mount_point,
                            const usermount_info *info, void *userdata) {
        Automount *a = userdata;

        if (event == USERMOUNT_EVENT_REMOVED && mount_point)
                automount_on_mount_removed(a, mount_point);
        else if (event == USERMOUNT_EVENT_RESUBSCRIBED) {
                /* usermountd restarted. A retry may have come first; not needed any more. */
                a->retry_timer = sd_event_source_disable_unref(a->retry_timer);
                automount_available(a);
                automount_enumerate(a);
        }
        return 0;
}

/* Processes what the watcher's connection has, and waits for what it wants next. */
static void automount_watcher_process(Automount *a) {
        const char *name = NULL, *message = NULL;
        int r, events;

        r = usermount_monitor_process(a->watcher);
        if (r == -ECONNRESET) {
                log_error("The system bus connection was closed; connecting again.");
                automount_disconnect(a);
                a->unavailable_logged = true;
                a->subscribed = false;
                automount_schedule_retry(a);
                return;
        }
        if (r < 0) {
                /* usermountd restarted, and refused or failed the new subscription. */
                (void) usermount_client_get_error(a->watcher_client, &name, &message);
                automount_unavailable(a, name, message, r);
                automount_disconnect(a);
                return;
        }
        events = usermount_monitor_get_events(a->watcher);
        (void) sd_event_source_set_io_events(a->watcher_source,
                                             events > 0 ? (uint32_t) events : EPOLLIN);
}

static int on_watcher_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        automount_watcher_process(userdata);
        return 0;
}

/*
 * Connects to the system bus (one connection for the mount requests, one watching
 * usermountd's signals in our event loop) and subscribes, synchronously. On failure
 * *ret_name and *ret_message (may be NULL) are the D-Bus error, valid until the next
 * connect.
 */
static int automount_connect(Automount *a, const char **ret_name, const char **ret_message) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL, *watch = NULL;
        usermount_monitor *watcher = NULL;
        int r;

        automount_disconnect(a);
        /* Never interactive (the default mode): nobody is there to be asked. */
        r = usermount_client_new(&client);
        if (r >= 0)
                r = usermount_client_new(&watch);
        if (r < 0)
                return r;
        /* Subscribes (after its matches: no signal is missed); starts usermountd if need be. */
        r = usermount_monitor_new(watch, on_watcher_event, a, &watcher);
        if (r < 0) {
                if (usermount_client_get_error(watch, ret_name, ret_message) >= 0)
                        a->watcher_client = TAKE_PTR(watch); /* keeps the strings */
                return r;
        }
        r = sd_event_add_io(a->event, &a->watcher_source, usermount_monitor_get_fd(watcher),
                            EPOLLIN, on_watcher_io, a);
        if (r < 0) {
                usermount_monitor_free(watcher);
                return r;
        }
        a->watcher = watcher;
        a->watcher_client = TAKE_PTR(watch);
        a->client = TAKE_PTR(client);
        return 0;
}

/* Connects (again); on failure says why, the first time, and schedules the next try. */
void automount_try_connect(Automount *a) {
        const char *name = NULL, *message = NULL;
        int r;

        r = automount_connect(a, &name, &message);
        if (r < 0) {
                automount_unavailable(a, name, message, r);
                return;
        }
        automount_available(a);
        automount_enumerate(a);
        /* Signals that came with the Subscribe reply are read already: process them. */
        if (a->watcher)
                automount_watcher_process(a);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Automount *a = userdata;

        a->retry_timer = sd_event_source_disable_unref(a->retry_timer);
        automount_try_connect(a);
        return 0;
}

static void automount_schedule_retry(Automount *a) {
        int r;

        if (a->once || a->retry_timer)
                return;
        a->retry_usec = a->retry_usec ? a->retry_usec * 2 : RETRY_FIRST_USEC;
        if (a->retry_usec > RETRY_MAX_USEC)
                a->retry_usec = RETRY_MAX_USEC;
        r = sd_event_add_time_relative(a->event, &a->retry_timer, CLOCK_MONOTONIC, a->retry_usec,
                                       0, on_retry, a);
        if (r < 0) {
                log_error_errno(r, "Cannot set up a timer: %m");
                sd_event_exit(a->event, EXIT_STATUS_FAILURE);
        }
}

void automount_done(Automount *a) {
        while (a->entries) {
                Entry *e = a->entries;

                a->entries = e->next;
                entry_free(e);
        }
        a->retry_timer = sd_event_source_disable_unref(a->retry_timer);
        a->monitor = sd_device_monitor_unref(a->monitor);
        automount_disconnect(a);
        notifier_done(&a->notifier);
        a->event = sd_event_unref(a->event);
        automount_config_done(&a->config);
}
