/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount unmount: asks usermountd to take down a mount it made (Unmount), named by its
 * mount point, or by its device or image file, whose mount points ListMounts tells.
 */
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>

#include "auth-call.h"
#include "bus-client.h"
#include "container.h"
#include "mount-info.h"
#include "namespace.h"
#include "output.h"
#include "path.h"
#include "route.h"
#include "usermount-names.h"
#include "userns.h"
#include "cli.h"

typedef struct UnmountArgs {
        const char *what;
        bool force;
        bool all_targets;
        pid_t container; /* --container=PID; 0: none */
} UnmountArgs;

static void unmount_help(void) {
        printf("Usage: usermount unmount [OPTIONS] MOUNTPOINT|DEVICE|IMAGE\n"
               "       usermount unmount --container=PID [OPTIONS] MOUNTPOINT\n"
               "\n"
               "Unmount a filesystem that usermountd mounted (see usermount list), and free its\n"
               "loop device. The mount is named by its mount point, by the block device that\n"
               "is mounted (a /dev/disk/by-* link to it will do), or by the image file that is\n"
               "mounted. For a device or an image file, usermount looks up where usermountd\n"
               "mounted it; when that is more than one place it unmounts nothing, lists them,\n"
               "and leaves the choice to you (or to --all-targets).\n"
               "\n"
               "A relative path is made absolute with the working directory, without\n"
               "resolving symbolic links. You may unmount your own mounts; unmounting another\n"
               "user's mount needs an authorization of its own. A directory usermountd made\n"
               "for the mount under /run/media is removed with it.\n"
               "\n"
               "Mounts that usermount attached itself inside a user and mount namespace of your\n"
               "own are not usermountd's to unmount: use 'umount MOUNTPOINT' there.\n"
               "\n"
               "With --container=PID, usermount unmounts MOUNTPOINT, an absolute path inside\n"
               "the running container of process PID, that 'usermount mount --container'\n"
               "attached there: it joins the container's namespaces, checks that a mount with\n"
               "nosuid and nodev is there, and unmounts it, which frees its loop device.\n"
               "\n"
               "Options:\n"
               "  -f, --force            Detach the mount even if it is busy (a lazy unmount:\n"
               "                         it disappears now, and the filesystem is shut down\n"
               "                         when the last file on it is closed). Without this\n"
               "                         option a busy mount is left alone (exit status 5).\n"
               "  -A, --all-targets      When a DEVICE or IMAGE is mounted at more than one\n"
               "                         place, unmount all of them.\n"
               "      --container=PID    Unmount MOUNTPOINT inside the running container of\n"
               "                         process PID (see above).\n"
               "      --no-ask-password  Do not ask for a password (see usermount --help).\n"
               "  -h, --help             Show this help.\n"
               "\n"
               "On success, usermount prints \"Unmounted MOUNTPOINT.\" for each mount.\n"
               "\n"
               "Examples:\n"
               "  usermount unmount /run/media/$USER/STICK\n"
               "  usermount unmount /dev/sdb1\n"
               "  usermount unmount --force disk.img\n"
               "  usermount unmount --container=$(podman inspect -f '{{.State.Pid}}' box) /mnt\n"
               "\n"
               "Exit status: 0 on success, 9 if nothing usermountd mounted is there, 2 if a\n"
               "device or image is mounted at several places and --all-targets was not given,\n"
               "otherwise as listed in usermount --help.\n");
}

/* Records the one operand; a second one is a usage error. */
static int take_operand(const char **operand, const char *arg) {
        if (*operand) {
                _cleanup_free_ char *e = output_escape(arg);

                log_error("Too many arguments, starting with '%s'.", strempty(e));
                return -EINVAL;
        }
        *operand = arg;
        return 0;
}

/*
 * Fills args from the command line. Returns 1 to go on, 0 when done (help shown), -EINVAL
 * after printing a usage error.
 */
static int unmount_parse_argv(int argc, char *argv[], UnmountArgs *args) {
        enum {
                ARG_NO_ASK_PASSWORD = 0x100,
                ARG_CONTAINER,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "force", no_argument, NULL, 'f' },
                { "all-targets", no_argument, NULL, 'A' },
                { "container", required_argument, NULL, ARG_CONTAINER },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                {}
        };
        const char *operand = NULL;
        int c, r;

        /* As in usermount mount: operands in order, whatever $POSIXLY_CORRECT says. */
        optind = 0;
        while ((c = getopt_long(argc, argv, "-hfA", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        unmount_help();
                        return 0;
                case 'f':
                        args->force = true;
                        break;
                case 'A':
                        args->all_targets = true;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        arg_ask_password = false;
                        break;
                case ARG_CONTAINER:
                        if (container_parse_pid(optarg, &args->container) < 0)
                                return -EINVAL;
                        break;
                case 1:
                        r = take_operand(&operand, optarg);
                        if (r < 0)
                                return r;
                        break;
                default:
                        /* '?': getopt has said what was wrong. */
                        return -EINVAL;
                }
        }
        /* The operand after "--". */
        for (; optind < argc; optind++) {
                r = take_operand(&operand, argv[optind]);
                if (r < 0)
                        return r;
        }
        if (isempty(operand)) {
                log_error(operand ? "MOUNTPOINT, DEVICE or IMAGE must not be empty." :
                                    "Missing MOUNTPOINT, DEVICE or IMAGE.");
                return -EINVAL;
        }

        if (args->container && container_check_target(operand) < 0)
                return -EINVAL;

        args->what = operand;
        return 1;
}

/* After NotMounted: the one case where the user may be looking in the wrong place. */
static void log_not_tracked_hint(void) {
        if (namespace_can_attach_mounts() == 1 && userns_detect() == 1)
                log_error("Mounts that usermount attached itself in a namespace of your own are "
                          "not tracked by usermountd; unmount those with 'umount'.");
}

static ExitStatus unmount_one(usermount_client *client, const char *mount_point, bool force) {
        _cleanup_free_ char *e = NULL;
        ExitStatus status;
        int r;

        if (!output_utf8_is_valid(mount_point)) {
                e = output_escape(mount_point);
                log_error("%s is not valid UTF-8, and usermountd only takes UTF-8 paths.",
                          strempty(e));
                return EXIT_STATUS_USAGE;
        }

        r = usermount_unmount(client, mount_point, force ? USERMOUNT_UNMOUNT_FORCE : 0);
        if (r < 0) {
                status = auth_log_error(client, r);
                if (status == EXIT_STATUS_NOT_MOUNTED)
                        log_not_tracked_hint();
                return status;
        }

        e = output_escape(mount_point);
        printf("Unmounted %s.\n", strempty(e));
        return EXIT_STATUS_OK;
}

/* Prints the mount points of matches, indented, after a message that announces them. */
static void log_mount_points(const MountInfo *infos, const size_t *matches, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *e = output_escape(infos[matches[i]].mount_point);

                log_error("  %s", strempty(e));
        }
}

/* Unmounts the mounts of the device or image at path (absolute; st is its stat). */
static ExitStatus unmount_source(usermount_client *client, const UnmountArgs *args,
                                 const char *path, const struct stat *st) {
        _cleanup_(mount_list_done) MountList list = {};
        _cleanup_free_ char *canonical = realpath(path, NULL), *e = output_escape(path);
        _cleanup_free_ size_t *matches = NULL;
        ExitStatus status = EXIT_STATUS_OK;
        const MountInfo *infos;
        size_t n_infos, n_matches = 0;
        int r;

        r = mount_list_fetch(client, &list);
        if (r < 0)
                return client_log_error(client, r);
        infos = list.infos;
        n_infos = list.n;

        matches = calloc(n_infos ?: 1, sizeof(size_t));
        if (!matches) {
                log_error_errno(ENOMEM, "%m");
                return EXIT_STATUS_FAILURE;
        }
        for (size_t i = 0; i < n_infos; i++)
                if (!isempty(infos[i].mount_point) &&
                    route_source_matches(&infos[i], path, canonical, st))
                        matches[n_matches++] = i;

        if (n_matches == 0) {
                log_error("%s is not mounted by usermountd (not among the mounts it lists for "
                          "you).", strempty(e));
                log_not_tracked_hint();
                status = EXIT_STATUS_NOT_MOUNTED;
        } else if (n_matches > 1 && !args->all_targets) {
                log_error("%s is mounted at %zu places:", strempty(e), n_matches);
                log_mount_points(infos, matches, n_matches);
                log_error("Name the mount point to unmount, or use --all-targets to unmount "
                          "them all.");
                status = EXIT_STATUS_USAGE;
        } else
                /* Each one is tried; the first failure decides the exit status. */
                for (size_t i = 0; i < n_matches; i++) {
                        ExitStatus s = unmount_one(client, infos[matches[i]].mount_point,
                                                   args->force);

                        if (status == EXIT_STATUS_OK)
                                status = s;
                }

        return status;
}

/* --container=PID: in the container's namespaces; usermountd has no part in it. */
static ExitStatus unmount_run_container(const UnmountArgs *args) {
        _cleanup_(container_done) Container c = CONTAINER_NULL;
        ExitStatus status;

        status = container_open(args->container, &c);
        if (status != EXIT_STATUS_OK)
                return status;
        return container_unmount(&c, args->what, args->force);
}

static ExitStatus unmount_run(const UnmountArgs *args) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL;
        _cleanup_free_ char *path = NULL;
        struct stat st = {};
        ExitStatus status;
        int r, stat_error = 0;

        r = path_make_absolute_cwd(args->what, &path);
        if (r < 0) {
                _cleanup_free_ char *e = output_escape(args->what);

                log_error_errno(r, "Cannot make %s an absolute path: %m", strempty(e));
                return EXIT_STATUS_FAILURE;
        }
        if (stat(path, &st) < 0)
                stat_error = -errno;

        status = client_connect(false, arg_ask_password, &client);
        if (status != EXIT_STATUS_OK)
                return status;

        if (unmount_route(stat_error, st.st_mode) == UNMOUNT_ROUTE_SOURCE)
                return unmount_source(client, args, path, &st);
        return unmount_one(client, path, args->force);
}

int verb_unmount(int argc, char *argv[]) {
        UnmountArgs args = {};
        int r;

        r = unmount_parse_argv(argc, argv, &args);
        if (r < 0)
                return usage_hint("unmount");
        if (r == 0)
                return EXIT_STATUS_OK;

        if (args.container)
                return unmount_run_container(&args);
        return unmount_run(&args);
}
