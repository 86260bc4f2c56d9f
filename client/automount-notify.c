/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Telling the user what usermount automount did (automount-notify.h). */
#include <stdlib.h>
#include <string.h>

#include "automount-notify.h"
#include "macro.h"
#include "output.h"

#define NOTIFY_NAME "org.freedesktop.Notifications"
#define NOTIFY_PATH "/org/freedesktop/Notifications"
/* A notification server that takes longer than this is not waited for. */
#define NOTIFY_TIMEOUT_USEC (5ULL * 1000000ULL)

void notifier_done(Notifier *n) {
        n->bus = sd_bus_flush_close_unref(n->bus);
}

/* The entity that stands for c in the body's markup, or NULL for c itself. */
static const char *markup_entity(char c) {
        switch (c) {
        case '&':
                return "&amp;";
        case '<':
                return "&lt;";
        case '>':
                return "&gt;";
        case '"':
                return "&quot;";
        case '\'':
                return "&apos;";
        default:
                return NULL;
        }
}

/*
 * The stand-in for c in the summary, or NULL for c itself: the fullwidth forms of the
 * characters that would start markup or an entity (U+FF06, U+FF1C, U+FF1E), which look
 * like them and which Unicode's compatibility normalisation maps back to them.
 */
static const char *summary_stand_in(char c) {
        switch (c) {
        case '&':
                return "\xef\xbc\x86";
        case '<':
                return "\xef\xbc\x9c";
        case '>':
                return "\xef\xbc\x9e";
        default:
                return NULL;
        }
}

/* s with each character that replace() has a replacement for replaced; NULL: no memory. */
static char *notifier_replace(const char *s, const char *(*replace)(char c)) {
        size_t len = 0;
        char *out, *o;

        for (const char *p = s; *p; p++)
                len += replace(*p) ? strlen(replace(*p)) : 1;
        out = o = malloc(len + 1);
        if (!out)
                return NULL;
        for (const char *p = s; *p; p++) {
                const char *r = replace(*p);

                if (r)
                        o = stpcpy(o, r);
                else
                        *o++ = *p;
        }
        *o = 0;
        return out;
}

char *notifier_escape_markup(const char *s) {
        return notifier_replace(s, markup_entity);
}

int notifier_format(const char *summary, const char *body, char **ret_summary, char **ret_body) {
        _cleanup_free_ char *s = output_escape(summary), *b = output_escape(body);
        _cleanup_free_ char *plain = NULL, *markup = NULL;

        if (!s || !b)
                return -ENOMEM;
        plain = notifier_replace(s, summary_stand_in);
        markup = notifier_escape_markup(b);
        if (!plain || !markup)
                return -ENOMEM;
        *ret_summary = TAKE_PTR(plain);
        *ret_body = TAKE_PTR(markup);
        return 0;
}

/*
 * The session bus, opened on first use and again after it went away (the session may
 * start the bus after us). NULL when there is none; said once.
 */
static sd_bus *notifier_bus(Notifier *n) {
        int r;

        if (n->bus && sd_bus_is_open(n->bus) > 0)
                return n->bus;
        n->bus = sd_bus_flush_close_unref(n->bus);
        /* $DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus. */
        r = sd_bus_open_user(&n->bus);
        if (r >= 0)
                r = sd_bus_set_close_on_exit(n->bus, true);
        if (r < 0) {
                n->bus = sd_bus_flush_close_unref(n->bus);
                if (n->bus_failed_logged)
                        ;
                else if (r == -ENOMEDIUM)
                        /* sd-bus's way of saying that it does not know where to look. */
                        log_error("No session bus (neither $DBUS_SESSION_BUS_ADDRESS nor "
                                  "$XDG_RUNTIME_DIR is set), so no desktop notifications; "
                                  "messages go to the log only.");
                else
                        log_error_errno(r, "No session bus, so no desktop notifications (%m); "
                                        "messages go to the log only.");
                n->bus_failed_logged = true;
                return NULL;
        }
        return n->bus;
}

/* Whether a notification server is there: 1, 0 or -errno. */
static int notifier_has_server(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int has = 0, r;

        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                               "org.freedesktop.DBus", "NameHasOwner", NULL, &reply, "s",
                               NOTIFY_NAME);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "b", &has);
        return r < 0 ? r : has;
}

static int notifier_call(sd_bus *bus, bool urgent, const char *summary, const char *body) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, NOTIFY_NAME, NOTIFY_PATH, NOTIFY_NAME,
                                           "Notify");
        if (r < 0)
                return r;
        /* app_name, replaces_id, app_icon, summary, body, actions */
        r = sd_bus_message_append(m, "susssas", "usermount", 0, "drive-removable-media",
                                  summary, body, 0);
        if (r < 0)
                return r;
        /* hints: the urgency (0 low, 1 normal, 2 critical) */
        r = sd_bus_message_append(m, "a{sv}", 1, "urgency", "y", (uint8_t) (urgent ? 2 : 1));
        if (r < 0)
                return r;
        /* expire_timeout: the server's default */
        r = sd_bus_message_append(m, "i", -1);
        if (r < 0)
                return r;
        return sd_bus_call(bus, m, NOTIFY_TIMEOUT_USEC, &error, NULL);
}

void notifier_log(const char *summary, const char *body) {
        _cleanup_free_ char *s = output_escape(summary), *b = body ? output_escape(body) : NULL;

        if (body)
                log_error("%s: %s", strempty(s), strempty(b));
        else
                log_error("%s", strempty(s));
}

void notifier_notify(Notifier *n, bool urgent, const char *summary, const char *body) {
        _cleanup_free_ char *s = NULL, *b = NULL;
        sd_bus *bus;
        int r;

        if (!n->enabled)
                return;
        bus = notifier_bus(n);
        if (!bus)
                return;
        r = notifier_has_server(bus);
        if (r <= 0)
                /* No notification server: the log line is all there is. */
                return;
        if (notifier_format(summary, body, &s, &b) < 0)
                return;
        r = notifier_call(bus, urgent, s, b);
        if (r < 0)
                log_error_errno(r, "Cannot send a desktop notification: %m");
}
