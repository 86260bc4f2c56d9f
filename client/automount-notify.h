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
 * summary and body (plain text, made safe here by notifier_format()) as a notification.
 * urgent: a failure. Problems are logged, never returned.
 */
void notifier_notify(Notifier *n, bool urgent, const char *summary, const char *body);

/*
 * Escapes &, <, > and quotes as the Desktop Notifications specification's body markup
 * wants them. Returns a new string, NULL when out of memory.
 */
char *notifier_escape_markup(const char *s);

/*
 * The summary and body of a notification as notifier_notify() sends them, from plain
 * text that may hold a device's label (body NULL: none): both escaped as on a terminal
 * (output_escape(): controls, bidi overrides and other invisible characters as \xNN);
 * the body then escaped for markup (notifier_escape_markup()); the summary, which the
 * specification makes plain text but which some servers (older dunst, mako, LXQt) read
 * as markup too, with &, < and > replaced by their fullwidth forms, so that it shows the
 * same whichever way a server reads it (entities would show as "&amp;" on the servers
 * that follow the specification). 0, or -ENOMEM with *ret_summary and *ret_body
 * untouched; the caller frees both.
 */
int notifier_format(const char *summary, const char *body, char **ret_summary, char **ret_body);
