/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount monitor: prints usermountd's MountAdded and MountRemoved signals as they come,
 * one line each, until interrupted.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <time.h>

#include "bus-client.h"
#include "mount-info.h"
#include "mount-json.h"
#include "args.h"
#include "output.h"
#include "cli.h"

typedef struct MonitorArgs {
        bool json;
} MonitorArgs;

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

/* Formats the event (mount_point, info) as a line, without '\n'. */
static int format_event(const char *mount_point, const usermount_info *src, bool added,
                        bool json, char **ret) {
        int r;

        if (json) {
                _cleanup_(json_object_putp) json_object *info = NULL, *event = NULL;

                r = mount_json_from_usermount(src, &info);
                if (r >= 0)
                        r = mount_json_event(added ? "added" : "removed", mount_point, info,
                                             &event);
                if (r < 0)
                        return r;
                return mount_json_format(event, false, ret);
        } else {
                _cleanup_(mount_info_done) MountInfo info = {};

                r = mount_info_from_usermount(src, &info);
                if (r < 0)
                        return r;
                return mount_info_format_event(&info, added, mount_point, ret);
        }
}

/* A usermount_monitor_func: prints the event, and stops (-EIO) when stdout fails. */
static int on_mount_event(usermount_monitor *m, usermount_event event, const char *mount_point,
                          const usermount_info *info, void *userdata) {
        const MonitorArgs *args = userdata;
        _cleanup_free_ char *line = NULL;
        int r;

        if (event == USERMOUNT_EVENT_RESUBSCRIBED)
                return 0; /* usermountd restarted: nothing to print */
        r = info ? format_event(mount_point, info, event == USERMOUNT_EVENT_ADDED, args->json,
                                &line) : -EBADMSG;
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
                return -EIO;
        }
        return 0;
}

/* Milliseconds until the monitor wants to be processed anyway (-1: no limit). */
static int monitor_poll_timeout(usermount_monitor *m) {
        struct timespec ts;
        uint64_t until, now;

        if (usermount_monitor_get_timeout(m, &until) < 0 || until == UINT64_MAX)
                return -1;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
        if (until <= now)
                return 0;
        return (until - now) / 1000 > INT_MAX ? INT_MAX : (int) ((until - now + 999) / 1000);
}

/*
 * Waits for the monitor's fd and for SIGINT and SIGTERM (through sigfd): returns
 * EXIT_STATUS_OK on a signal, else what ended the monitor.
 */
static ExitStatus monitor_loop(usermount_monitor *m, int sigfd) {
        for (;;) {
                struct pollfd p[2] = {
                        { .fd = usermount_monitor_get_fd(m),
                          .events = (short) usermount_monitor_get_events(m) },
                        { .fd = sigfd, .events = POLLIN },
                };
                int r;

                r = usermount_monitor_process(m);
                if (r == -ECONNRESET) {
                        log_error("The system bus connection was closed.");
                        return EXIT_STATUS_UNAVAILABLE;
                }
                if (r == -EIO)
                        return EXIT_STATUS_FAILURE; /* standard output: said already */
                if (r < 0) {
                        log_error_errno(r, "The event loop failed: %m");
                        return EXIT_STATUS_FAILURE;
                }
                /* 0 events: messages are queued already; process them without waiting. */
                r = poll(p, 2, p[0].events ? monitor_poll_timeout(m) : 0);
                if (r < 0 && errno != EINTR) {
                        log_error_errno(errno, "The event loop failed: %m");
                        return EXIT_STATUS_FAILURE;
                }
                if (r > 0 && (p[1].revents & POLLIN))
                        return EXIT_STATUS_OK;
        }
}

static ExitStatus monitor_run(const MonitorArgs *args) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL;
        _cleanup_close_ int sigfd = -EBADF;
        usermount_monitor *monitor = NULL;
        ExitStatus status;
        sigset_t mask;
        int r;

        /* SIGINT and SIGTERM end the loop through a signalfd: they must not be delivered. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
                log_error_errno(errno, "Cannot block SIGINT and SIGTERM: %m");
                return EXIT_STATUS_FAILURE;
        }
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0) {
                log_error_errno(errno, "Cannot set up the event loop: %m");
                return EXIT_STATUS_FAILURE;
        }

        status = client_connect(false, arg_ask_password, &client);
        if (status != EXIT_STATUS_OK)
                return status;
        /* Subscribes, and again whenever usermountd restarts (usermount_monitor_new(3)). */
        r = usermount_monitor_new(client, on_mount_event, (void *) args, &monitor);
        if (r < 0)
                return client_log_error(client, r);

        status = monitor_loop(monitor, sigfd);
        usermount_monitor_free(monitor);
        return status;
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
