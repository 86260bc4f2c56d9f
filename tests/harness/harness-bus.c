/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The harness's side of the private bus: its own sd-bus connection, waiting for a service
 * to own its name, polkit CheckAuthorization, replacing polkit rules and waiting until
 * they are in effect, and connections for callers that work inside a user namespace.
 */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "macro.h"

#include "harness-private.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_OBJECT "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define RULES_DIR "/etc/polkit-1/rules.d"
#define RULES_FILE RULES_DIR "/00-usermount-harness.rules"
#define RULES_RECHECK_MS 50

static int bus_connect(const char *address, sd_bus **ret_bus) {
        sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        if ((r = sd_bus_set_address(bus, address)) < 0 ||
                (r = sd_bus_set_bus_client(bus, 1)) < 0 || (r = sd_bus_start(bus)) < 0) {
                sd_bus_unref(bus);
                return r;
        }
        *ret_bus = bus;
        return 0;
}

int harness_bus_open(void) {
        int r = bus_connect(harness.bus_address, &harness.bus);

        if (r < 0) {
                harness_log("cannot connect to the private bus %s: %s", harness.bus_address,
                        g_strerror(-r));
                return r;
        }
        harness.bus_fd = sd_bus_get_fd(harness.bus);
        return 0;
}

int harness_sd_bus_connect(sd_bus **ret_bus) {
        const char *address = g_getenv("DBUS_SYSTEM_BUS_ADDRESS");

        if (!address)
                return -ENXIO;
        return bus_connect(address, ret_bus);
}

GDBusConnection *harness_gdbus_connect(GError **error) {
        const char *address = g_getenv("DBUS_SYSTEM_BUS_ADDRESS");

        if (!address) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                        "DBUS_SYSTEM_BUS_ADDRESS is not set");
                return NULL;
        }
        /* Without CROSS_NAMESPACE, GDBus sends its uid as seen in its own user namespace
         * in the EXTERNAL handshake (0 for a namespaced root), which the bus compares
         * with the uid it sees on the socket and rejects. GLib 2.74 documents the flag
         * but g_dbus_connection_new_for_address_sync() refuses it (its mask of valid
         * flags lacks it); constructing the object directly passes it through. */
        return g_initable_new(G_TYPE_DBUS_CONNECTION, NULL, error, "address", address, "flags",
                G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                        G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION |
                        G_DBUS_CONNECTION_FLAGS_CROSS_NAMESPACE,
                NULL);
}

/* Dispatches what sd-bus has queued and returns if that was anything (the caller
 * rechecks its condition); otherwise waits for bus traffic, for pidfd (if >= 0) to signal
 * an exit (-ESRCH), for the deadline (-ETIMEDOUT) or for max_wait_ms (0). */
static int bus_wait(int pidfd, int64_t deadline, int max_wait_ms) {
        struct pollfd p[2];
        int64_t left;
        uint64_t usec;
        int r, n = 1, timeout;
        bool dispatched = false;

        while ((r = sd_bus_process(harness.bus, NULL)) > 0)
                dispatched = true;
        if (r < 0)
                return r;
        if (dispatched)
                return 0;

        left = deadline - harness_now_ms();
        if (left <= 0)
                return -ETIMEDOUT;
        timeout = (int) MIN(left, (int64_t) max_wait_ms);
        if (sd_bus_get_timeout(harness.bus, &usec) > 0 && usec != UINT64_MAX) {
                uint64_t now = g_get_monotonic_time();

                timeout = usec <= now ? 0 : (int) MIN((int64_t) timeout,
                                                (int64_t) ((usec - now) / 1000 + 1));
        }
        p[0] = (struct pollfd){ .fd = sd_bus_get_fd(harness.bus),
                .events = (short) sd_bus_get_events(harness.bus) };
        if (pidfd >= 0)
                p[n++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
        r = poll(p, n, timeout);
        if (r < 0 && errno != EINTR)
                return -errno;
        if (n > 1 && p[1].revents)
                return -ESRCH;
        return 0;
}

/* 1 if name is owned (by pid, when pid > 0), 0 if not. */
static int name_owned_by(const char *name, pid_t pid) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint32_t owner_pid;
        int r;

        r = sd_bus_call_method(harness.bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus", "GetConnectionUnixProcessID", &error, &reply, "s", name);
        if (r < 0)
                return sd_bus_error_has_name(&error, "org.freedesktop.DBus.Error.NameHasNoOwner")
                               ? 0
                               : r;
        r = sd_bus_message_read(reply, "u", &owner_pid);
        if (r < 0)
                return r;
        return pid <= 0 || (pid_t) owner_pid == pid;
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        *(bool *) userdata = true;
        return 0;
}

int harness_bus_wait_for_name(const char *name, pid_t pid, int pidfd, int timeout_ms) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        int64_t deadline = harness_now_ms() + timeout_ms;
        g_autofree char *match = g_strdup_printf(
                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
                name);
        bool changed = true;
        int r;

        /* Subscribe before the first check, so no change can fall in between. */
        r = sd_bus_add_match(harness.bus, &slot, match, on_signal, &changed);
        if (r < 0)
                return r;
        for (;;) {
                if (changed) {
                        changed = false;
                        r = name_owned_by(name, pid);
                        if (r != 0)
                                return r < 0 ? r : 0;
                }
                r = bus_wait(pidfd, deadline, INT_MAX);
                if (r < 0)
                        return r;
        }
}

int harness_polkit_check(const char *bus_name, const char *action_id, const char *const *details,
        bool allow_user_interaction, HarnessAuthorization *ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int authorized, challenge, r;

        r = sd_bus_message_new_method_call(harness.bus, &m, POLKIT_BUS_NAME, POLKIT_OBJECT,
                POLKIT_INTERFACE, "CheckAuthorization");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sa{sv})s", "system-bus-name", 1, "name", "s", bus_name,
                action_id);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'a', "{ss}");
        for (size_t i = 0; r >= 0 && details && details[i] && details[i + 1]; i += 2)
                r = sd_bus_message_append(m, "{ss}", details[i], details[i + 1]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "us", (uint32_t) (allow_user_interaction ? 1 : 0),
                        "");
        if (r < 0)
                return r;

        r = sd_bus_call(harness.bus, m, 0, &error, &reply);
        if (r < 0) {
                harness_log("CheckAuthorization(%s, %s) failed: %s", bus_name, action_id,
                        error.message ? error.message : g_strerror(-r));
                return r;
        }
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0)
                return r;
        ret->is_authorized = authorized;
        ret->is_challenge = challenge;
        return 0;
}

int harness_set_rules(const char *js) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        unsigned generation = ++harness.rules_generation;
        g_autofree char *number = g_strdup_printf("%u", generation);
        g_autofree char *contents = NULL;
        g_autoptr(GError) error = NULL;
        const char *details[] = { "generation", number, NULL };
        int64_t deadline = harness_now_ms() + HARNESS_TIMEOUT_MS;
        bool changed = false;
        int r;

        if (!harness.initialized || harness.attached || !harness.probe_name)
                return -EINVAL;
        /* polkitd emits Changed after it reloaded rules or actions. */
        r = sd_bus_match_signal(harness.bus, &slot, POLKIT_BUS_NAME, POLKIT_OBJECT,
                POLKIT_INTERFACE, "Changed", on_signal, &changed);
        if (r < 0)
                return r;

        /* The probe rule comes first and answers for the probe action only, YES for this
         * generation and NO for any other, so no test rule can answer in its place. The
         * file is replaced atomically: polkitd reads either the old or the new one. */
        contents = g_strdup_printf(
                "/* Written by the usermount test harness, generation %u. */\n"
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id == \"%s\")\n"
                "                return action.lookup(\"generation\") == \"%u\" ?\n"
                "                        polkit.Result.YES : polkit.Result.NO;\n"
                "});\n"
                "\n%s\n",
                generation, HARNESS_PROBE_ACTION, generation, strempty(js));
        if (!g_file_set_contents_full(RULES_FILE, contents, -1, G_FILE_SET_CONTENTS_CONSISTENT,
                    0644, &error)) {
                harness_log("cannot write %s: %s", RULES_FILE, error->message);
                return -EIO;
        }

        for (;;) {
                HarnessAuthorization a;

                changed = false;
                /* polkitd says yes to uid 0 without running any rule: the subject is
                 * an unprivileged process the harness keeps for this. */
                r = harness_polkit_check(harness.probe_name, HARNESS_PROBE_ACTION, details,
                        false, &a);
                if (r < 0)
                        return r;
                if (a.is_authorized)
                        return 0;
                /* Recheck on bus traffic (Changed), and every RULES_RECHECK_MS in case the
                 * signal went out before this generation was read. */
                r = bus_wait(-1, deadline, RULES_RECHECK_MS);
                if (r == -ETIMEDOUT) {
                        harness_log("polkitd did not load rules generation %u within %d ms "
                                    "(a syntax error makes it skip the file; run with "
                                    "UM_HARNESS_DEBUG=1 to see its log)",
                                generation, HARNESS_TIMEOUT_MS);
                        return r;
                }
                if (r < 0)
                        return r;
        }
}
