/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for usermountd, for the harness's own tests only: it owns
 * org.freedesktop.UserMount1 on the system bus, serves a minimal Manager (the Version
 * property and a ListMounts that returns nothing) and exits 0 on SIGTERM.
 * "--exit-code=N" makes it exit with N before it touches the bus.
 */
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>
#include <glib-unix.h>

#include "usermount-names.h"

static const char introspection_xml[] =
        "<node>"
        "  <interface name='" UM_MANAGER_INTERFACE "'>"
        "    <method name='ListMounts'>"
        "      <arg name='params' type='a{sv}' direction='in'/>"
        "      <arg name='mounts' type='aa{sv}' direction='out'/>"
        "    </method>"
        "    <property name='Version' type='s' access='read'/>"
        "  </interface>"
        "</node>";

static void method_call(GDBusConnection *connection, const char *sender, const char *path,
        const char *interface, const char *method, GVariant *parameters,
        GDBusMethodInvocation *invocation, gpointer userdata) {
        if (g_str_equal(method, "ListMounts"))
                g_dbus_method_invocation_return_value(invocation,
                        g_variant_new_parsed("(@aa{sv} [],)"));
        else
                g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR,
                        G_DBUS_ERROR_UNKNOWN_METHOD, "No such method %s", method);
}

static GVariant *get_property(GDBusConnection *connection, const char *sender, const char *path,
        const char *interface, const char *property, GError **error, gpointer userdata) {
        return g_variant_new_string("standin");
}

static const GDBusInterfaceVTable vtable = {
        .method_call = method_call,
        .get_property = get_property,
};

static void on_bus_acquired(GDBusConnection *connection, const char *name, gpointer userdata) {
        GDBusNodeInfo *info = userdata;
        g_autoptr(GError) error = NULL;

        if (!g_dbus_connection_register_object(connection, UM_OBJECT_PATH, info->interfaces[0],
                    &vtable, NULL, NULL, &error)) {
                g_printerr("standin: cannot register the object: %s\n", error->message);
                exit(1);
        }
}

static void on_name_lost(GDBusConnection *connection, const char *name, gpointer userdata) {
        g_printerr("standin: could not own %s\n", name);
        exit(2);
}

static gboolean on_terminate(gpointer userdata) {
        g_main_loop_quit(userdata);
        return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
        g_autoptr(GDBusNodeInfo) info = NULL;
        g_autoptr(GMainLoop) loop = NULL;
        guint owner;

        for (int i = 1; i < argc; i++)
                if (g_str_has_prefix(argv[i], "--exit-code="))
                        return atoi(argv[i] + strlen("--exit-code="));

        info = g_dbus_node_info_new_for_xml(introspection_xml, NULL);
        loop = g_main_loop_new(NULL, FALSE);
        g_unix_signal_add(SIGTERM, on_terminate, loop);
        g_unix_signal_add(SIGINT, on_terminate, loop);
        owner = g_bus_own_name(G_BUS_TYPE_SYSTEM, UM_BUS_NAME, G_BUS_NAME_OWNER_FLAGS_NONE,
                on_bus_acquired, NULL, on_name_lost, info, NULL);
        g_main_loop_run(loop);
        g_bus_unown_name(owner);
        return 0;
}
