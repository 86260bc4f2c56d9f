/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount monitor: prints usermountd's MountAdded and MountRemoved signals as they come,
 * one line each, until interrupted.
 */
#include <signal.h>
#include <stdio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-client.h"
#include "mount-info.h"
#include "mount-json.h"
#include "args.h"
#include "output.h"
#include "usermount-names.h"
#include "cli.h"

typedef struct MonitorArgs {
        bool json;
} MonitorArgs;

/* What the bus callbacks need. */
typedef struct Monitor {
        const MonitorArgs *args;
        sd_event *event;
} Monitor;

static void monitor_help(void) {
        printf("Usage: usermount monitor [OPTIONS]\n"
               "\n"
               "Print a line whenever usermountd mounts or unmounts a filesystem, including\n"
               "mounts taken down because their device went away, until interrupted (Ctrl+C,\n"
               "SIGINT or SIGTERM; exit status 0). usermountd tells you about your own mounts,\n"
               "and about everybody's if you are root or polkit allows you to unmount other\n"
               "users' mounts; it tells nobody else (monitor subscribes, and subscribes again\n"
               "when usermountd restarts). Mounts that usermount attaches itself inside a\n"
               "namespace of your own are not events of usermountd's.\n"
               "\n"
               "Each line is '+' for a new mount or '-' for one that is gone, then the mount\n"
               "point, the device (for an image, the image file) and the filesystem type,\n"
               "separated by spaces; '-' stands for a missing value, and characters that could\n"
               "control the terminal are shown as \\xNN:\n"
               "  + /run/media/alice/STICK /dev/sdb1 ext4\n"
               "  - /run/media/alice/STICK /dev/sdb1 ext4\n"
               "Each line is written out as soon as the event arrives, also into a pipe.\n"
               "\n"
               "Options:\n"
               "      --json  Print one JSON object per line (JSON Lines) instead: \"event\"\n"
               "              (\"added\" or \"removed\"), \"mount-point\", then the keys of\n"
               "              usermountd's info dict as usermount list --json shows them.\n"
               "  -h, --help  Show this help.\n"
               "\n"
               "Examples:\n"
               "  usermount monitor\n"
               "  usermount monitor --json | jq --unbuffered -r 'select(.event == \"added\")\n"
               "      | .\"mount-point\"'\n"
               "\n"
               "Exit status: 0 when interrupted, 8 if the system bus goes away, otherwise as\n"
               "listed in usermount --help.\n");
}

/* Formats the event in m (s mount_point, a{sv} info) as a line, without '\n'. */
static int format_event(sd_bus_message *m, bool added, bool json, char **ret) {
        const char *mount_point;
        int r;

        r = sd_bus_message_read(m, "s", &mount_point);
        if (r < 0)
                return r;

        if (json) {
                _cleanup_(json_object_putp) json_object *info = NULL, *event = NULL;

                r = mount_json_read(m, &info);
                if (r >= 0 && !json_object_is_type(info, json_type_object))
                        r = -EBADMSG;
                if (r >= 0)
                        r = mount_json_event(added ? "added" : "removed", mount_point, info,
                                             &event);
                if (r < 0)
                        return r;
                return mount_json_format(event, false, ret);
        } else {
                _cleanup_(mount_info_done) MountInfo info = {};

                r = mount_info_read(m, &info);
                if (r < 0)
                        return r;
                return mount_info_format_event(&info, added, mount_point, ret);
        }
}

static int on_mount_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *monitor = userdata;
        bool added = sd_bus_message_is_signal(m, UM_MANAGER_INTERFACE, "MountAdded") > 0;
        _cleanup_free_ char *line = NULL;
        int r;

        r = format_event(m, added, monitor->args->json, &line);
        if (r < 0) {
                /* One malformed signal is not a reason to stop watching. */
                log_error_errno(r, "Ignoring a signal from usermountd this usermount cannot "
                                "read: %m");
                return 0;
        }

        puts(line);
        /* Whoever reads the pipe wants the event now, not when a buffer fills up. */
        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error_errno(errno ?: EIO, "Cannot write to standard output: %m");
                return sd_event_exit(monitor->event, EXIT_STATUS_FAILURE);
        }
        return 0;
}

static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Monitor *monitor = userdata;

        /* The synthesized message has no bus to find the event loop by; userdata has it. */
        log_error("The system bus connection was closed.");
        return sd_event_exit(monitor->event, EXIT_STATUS_UNAVAILABLE);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        return sd_event_exit(sd_event_source_get_event(s), EXIT_STATUS_OK);
}

/* Asks usermountd (starting it if need be) to send this connection its signals. */
static int monitor_call_subscribe(sd_bus *bus) {
        return sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                  "Subscribe", NULL, NULL, "");
}

/* usermountd restarted (its name has a new owner): the subscription was the old one's. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 ||
            !streq(name, UM_BUS_NAME) || new_owner[0] == 0)
                return 0;
        return sd_bus_call_method_async(sd_bus_message_get_bus(m), NULL, UM_BUS_NAME,
                                        UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Subscribe",
                                        NULL, NULL, "");
}

/* Receives MountAdded and MountRemoved from usermountd, whoever owns the name now. */
static int monitor_subscribe(sd_bus *bus, Monitor *monitor) {
        static const char *const members[] = { "MountAdded", "MountRemoved" };
        int r;

        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "NameOwnerChanged",
                                on_name_owner_changed, monitor);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(members); i++) {
                r = sd_bus_match_signal(bus, NULL, UM_BUS_NAME, UM_OBJECT_PATH,
                                        UM_MANAGER_INTERFACE, members[i], on_mount_signal,
                                        monitor);
                if (r < 0)
                        return r;
        }
        /* sd-bus reports the end of the connection as this local signal. */
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local",
                                "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local",
                                "Disconnected", on_disconnected, monitor);
        if (r < 0)
                return r;
        /* After the matches: no signal sent once the daemon knows us can be missed. */
        return monitor_call_subscribe(bus);
}

static ExitStatus monitor_run(const MonitorArgs *args) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        Monitor monitor = { .args = args };
        ExitStatus status;
        sigset_t mask;
        int r;

        /* sd-event takes signals through a signalfd; they must not be delivered first. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
                log_error_errno(errno, "Cannot block SIGINT and SIGTERM: %m");
                return EXIT_STATUS_FAILURE;
        }

        r = sd_event_new(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the event loop: %m");
                return EXIT_STATUS_FAILURE;
        }

        status = client_bus_connect(false, &bus);
        if (status != EXIT_STATUS_OK)
                return status;
        r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the event loop: %m");
                return EXIT_STATUS_FAILURE;
        }
        monitor.event = event;
        r = monitor_subscribe(bus, &monitor);
        if (r < 0)
                return client_bus_log_error(bus, NULL, r);

        r = sd_event_loop(event);
        if (r < 0) {
                log_error_errno(r, "The event loop failed: %m");
                return EXIT_STATUS_FAILURE;
        }
        return r;
}

int verb_monitor(int argc, char *argv[]) {
        MonitorArgs args = {};
        int r;

        r = args_parse_json_only(argc, argv, monitor_help, &args.json);
        if (r < 0)
                return usage_hint("monitor");
        if (r == 0)
                return EXIT_STATUS_OK;

        return monitor_run(&args);
}
