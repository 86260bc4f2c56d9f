/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The automounter of usermount automount: what it knows of each block device, the
 * requests to usermountd and the connection to it, and what the user is told. The
 * command (cmd-automount.c) feeds it udev's devices and runs its event loop.
 *
 * The stages of a device (an entry) and where each happens:
 *   udev "add"/"change" with a filesystem  automount_on_device(): ignored by the settings,
 *                                          already mounted, or Mount (once per device and
 *                                          filesystem: a refusal is not retried)
 *   usermountd's MountRemoved              unmounted (told after a moment, unless the
 *                                          device was pulled); not mounted again
 *   udev "remove"                          the device was pulled: usermountd detaches its
 *                                          mount itself (reconcile.c); we tell the user
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

#include "automount-config.h"
#include "automount-notify.h"
#include "automount-udev.h"
#include "usermount.h"

typedef struct Entry Entry;

typedef struct Automount {
        AutomountConfig config;
        bool once;
        sd_event *event;
        usermount_client *client;     /* the mount requests; NULL while there is no bus */
        usermount_client *watcher_client; /* the connection of watcher, for its errors */
        usermount_monitor *watcher;   /* usermountd's signals; NULL likewise */
        sd_event_source *watcher_source; /* watcher's fd in our event loop */
        bool subscribed;  /* usermountd answered Subscribe */
        sd_device_monitor *monitor;
        AutomountWatch watch;
        Notifier notifier;
        Entry *entries;
        sd_event_source *retry_timer;
        uint64_t retry_usec;
        bool unavailable_logged;
        unsigned n_failed; /* --once: devices that could not be mounted */
        bool unavailable;  /* --once: usermountd could not be reached */
        bool enumerating;  /* the devices come from the list of those present, not events */
} Automount;

/*
 * Called for each block device udev reports (an AutomountDeviceFunc; userdata is the
 * Automount): mounts it, or notes that it went away.
 */
void automount_on_device(const AutomountDevice *d, bool removed, void *userdata);

/*
 * Connects to the system bus, subscribes to usermountd's signals and mounts what udev
 * knows now. Without the bus or usermountd it says so once and, unless a->once, tries
 * again in the background (a->unavailable tells --once).
 */
void automount_try_connect(Automount *a);

/* Frees everything a owns, a->event last. Mounts are left as they are. */
void automount_done(Automount *a);
