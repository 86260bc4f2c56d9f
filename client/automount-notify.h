/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How usermount automount tells the user what it did: always a line on stderr (the
 * journal, under systemd), and a desktop notification (org.freedesktop.Notifications on
 * the session bus) when notifications are on and a notification server is there.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct Notifier {
        bool enabled;   /* Notify= / --no-notify */
        sd_bus *bus;    /* the session bus, opened when first needed; NULL: not (yet) */
        bool bus_failed_logged;
} Notifier;

/* Closes the session bus connection; accepts a zeroed Notifier. */
void notifier_done(Notifier *n);

/* Logs "usermount: SUMMARY" (and ": BODY" unless body is NULL) on stderr, escaped. */
void notifier_log(const char *summary, const char *body);

/*
 * If enabled and org.freedesktop.Notifications has an owner on the session bus, sends
 * summary and body (plain text: escaped here for the markup notification servers read in
 * the body) as a notification. urgent: a failure. Problems are logged, never returned.
 */
void notifier_notify(Notifier *n, bool urgent, const char *summary, const char *body);

/*
 * Escapes &, <, > and quotes as the Desktop Notifications specification's body markup
 * wants them. Returns a new string, NULL when out of memory.
 */
char *notifier_escape_markup(const char *s);
