/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount mount: opens the source with the caller's own permissions, asks usermountd
 * for a locked, detached mount of it (OpenMount), and attaches that mount in the caller's
 * mount namespace with move_mount().
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "bus-client.h"
#include "mount-info.h"
#include "namespace.h"
#include "output.h"
#include "usermount-names.h"
#include "usermount.h"

/*
 * usermountd may probe the device, ask polkit (25 s) and build the mount in a worker
 * (30 s each), so a reply can take longer than sd-bus's default of 25 s.
 */
#define OPEN_MOUNT_TIMEOUT_USEC (120ULL * 1000000ULL)

typedef struct MountArgs {
        const char *source;
        const char *target;
        const char *fstype; /* NULL: let the daemon probe */
        char *options;      /* owned; NULL: none */
        bool read_only;
} MountArgs;

static void mount_args_done(MountArgs *args) {
        free(args->options);
        *args = (MountArgs) {};
}

static void mount_help(void) {
        printf("Usage: usermount mount [OPTIONS] SOURCE TARGET\n"
               "\n"
               "Mount SOURCE, a filesystem image file or a block device, at TARGET, an existing\n"
               "directory, inside a user and mount namespace of your own.\n"
               "\n"
               "usermount opens SOURCE itself, with your permissions, and passes the open file\n"
               "to usermountd; polkit decides whether you may mount it. usermountd checks the\n"
               "filesystem and the options against its policy and returns a detached mount that\n"
               "is nodev, nosuid and noexec, and read-only if asked for or if SOURCE could only\n"
               "be opened for reading. These flags are locked: neither you nor anyone you hand\n"
               "the mount to can clear them. usermount then attaches the mount at TARGET.\n"
               "\n"
               "The mount lives in your current mount namespace, which must be one you\n"
               "administer, such as the one 'unshare --user --map-root-user --mount' or a\n"
               "rootless container gives you. Only that namespace, and namespaces made from it,\n"
               "see the mount, and usermountd does not keep track of it: unmount it with\n"
               "'umount TARGET', or let it go away with the namespace.\n"
               "\n"
               "Options:\n"
               "  -t, --type=TYPE        Filesystem type, e.g. ext4. Refused if SOURCE holds\n"
               "                         another one. Default: whatever SOURCE holds.\n"
               "  -o, --options=OPTIONS  Comma-separated filesystem options, e.g.\n"
               "                         'noatime,commit=30'. May be given more than once.\n"
               "                         usermountd refuses options outside its policy, such as\n"
               "                         suid, dev and exec.\n"
               "  -r, --read-only        Open SOURCE read-only and mount it read-only. Without\n"
               "                         this option SOURCE is opened for reading and writing,\n"
               "                         or read-only, with a note, if you may only read it.\n"
               "      --no-ask-password  Do not ask for a password (see usermount --help).\n"
               "  -h, --help             Show this help.\n"
               "\n"
               "Examples:\n"
               "  unshare --user --map-root-user --mount\n"
               "  usermount mount disk.img /mnt\n"
               "  usermount mount --read-only -t iso9660 /dev/sr0 /mnt/cdrom\n"
               "  usermount mount -o noatime,commit=30 disk.img /mnt\n"
               "  umount /mnt\n"
               "\n"
               "Exit status: 0 on success, otherwise as listed in usermount --help.\n");
}

/* Appends more to the comma-separated *options, as mount(8) does with repeated -o. */
static int append_options(char **options, const char *more) {
        char *joined;

        if (isempty(more))
                return 0;
        if (asprintf(&joined, "%s%s%s", strempty(*options), *options ? "," : "", more) < 0)
                return -ENOMEM;
        free(*options);
        *options = joined;
        return 0;
}

/* Records an operand of the command line; more than SOURCE and TARGET is a usage error. */
static int add_operand(const char **operands, size_t *n, const char *arg) {
        if (*n >= 2) {
                _cleanup_free_ char *e = output_escape(arg);

                log_error("Too many arguments, starting with '%s'.", strempty(e));
                return -EINVAL;
        }
        operands[(*n)++] = arg;
        return 0;
}

/* Checks what getopt cannot: the operands, and that strings for D-Bus are UTF-8. */
static int mount_check_args(const char **operands, size_t n, MountArgs *args) {
        if (n < 2) {
                log_error(n == 0 ? "Missing SOURCE and TARGET." : "Missing TARGET.");
                return -EINVAL;
        }
        if (isempty(operands[0]) || isempty(operands[1])) {
                log_error("SOURCE and TARGET must not be empty.");
                return -EINVAL;
        }
        /* D-Bus only carries UTF-8; say so here rather than fail to build the call. */
        if (!output_utf8_is_valid(args->fstype)) {
                log_error("The filesystem type is not valid UTF-8.");
                return -EINVAL;
        }
        if (!output_utf8_is_valid(args->options)) {
                log_error("The options are not valid UTF-8.");
                return -EINVAL;
        }

        args->source = operands[0];
        args->target = operands[1];
        return 0;
}

/*
 * Fills args from the command line. Returns 1 to go on, 0 when done (help shown), -EINVAL
 * after printing a usage error, -ENOMEM.
 */
static int mount_parse_argv(int argc, char *argv[], MountArgs *args) {
        enum {
                ARG_NO_ASK_PASSWORD = 0x100,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "type", required_argument, NULL, 't' },
                { "options", required_argument, NULL, 'o' },
                { "read-only", no_argument, NULL, 'r' },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
                {}
        };
        const char *operands[2] = {};
        size_t n_operands = 0;
        int c, r;

        /*
         * A leading '-' returns operands in order (as c == 1), which keeps "SOURCE TARGET -r"
         * working whatever $POSIXLY_CORRECT says. optind = 0 restarts getopt for this argv.
         */
        optind = 0;
        while ((c = getopt_long(argc, argv, "-ht:o:r", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        mount_help();
                        return 0;
                case 't':
                        args->fstype = optarg;
                        break;
                case 'o':
                        r = append_options(&args->options, optarg);
                        if (r < 0)
                                return r;
                        break;
                case 'r':
                        args->read_only = true;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        arg_ask_password = false;
                        break;
                case 1:
                        r = add_operand(operands, &n_operands, optarg);
                        if (r < 0)
                                return r;
                        break;
                default:
                        /* '?': getopt has said what was wrong. */
                        return -EINVAL;
                }
        }
        /* Operands after "--". */
        for (; optind < argc; optind++) {
                r = add_operand(operands, &n_operands, argv[optind]);
                if (r < 0)
                        return r;
        }

        r = mount_check_args(operands, n_operands, args);
        if (r < 0)
                return r;
        return 1;
}

static bool is_mountable_type(mode_t mode) {
        return S_ISREG(mode) || S_ISBLK(mode);
}

/*
 * Opens source as the daemon expects it: read-write, or read-only when read_only is set or
 * when writing is not permitted (then *ret_write_error is the -errno of the read-write
 * attempt, else 0). Anything but a regular file or a block device is -EMEDIUMTYPE; it is
 * looked at before opening, so that a FIFO cannot block us.
 */
static int open_source(const char *source, bool read_only, int *ret_fd, int *ret_write_error) {
        _cleanup_close_ int fd = -EBADF;
        int write_error = 0;
        struct stat st;

        if (stat(source, &st) < 0)
                return -errno;
        if (!is_mountable_type(st.st_mode))
                return -EMEDIUMTYPE;

        if (!read_only) {
                fd = open(source, O_RDWR | O_CLOEXEC | O_NOCTTY);
                /* EPERM: an immutable or append-only file. */
                if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
                        write_error = -errno;
                else if (fd < 0)
                        return -errno;
        }
        if (fd < 0) {
                fd = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (fd < 0)
                        return -errno;
        }

        /* The path may have been replaced since stat(); the fd is what the daemon gets. */
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!is_mountable_type(st.st_mode))
                return -EMEDIUMTYPE;

        *ret_fd = TAKE_FD(fd);
        *ret_write_error = write_error;
        return 0;
}

static ExitStatus log_source_error(const char *source, int r) {
        _cleanup_free_ char *e = output_escape(source);

        if (r == -EMEDIUMTYPE)
                log_error("%s is neither a block device nor a filesystem image file.",
                          strempty(e));
        else
                log_error_errno(r, "Cannot open %s: %m", strempty(e));
        return EXIT_STATUS_REFUSED;
}

static ExitStatus log_target_error(const char *target, int r) {
        _cleanup_free_ char *e = output_escape(target);

        if (r == -ENOENT)
                log_error("Target %s does not exist; create the directory first.", strempty(e));
        else if (r == -ENOTDIR)
                log_error("Target %s is not a directory.", strempty(e));
        else
                log_error_errno(r, "Cannot open target %s: %m", strempty(e));
        return EXIT_STATUS_TARGET;
}

static ExitStatus log_attach_error(const char *target, int r) {
        _cleanup_free_ char *e = output_escape(target);

        log_error_errno(r, "Cannot attach the mount at %s: %m", strempty(e));
        return EXIT_STATUS_TARGET;
}

static ExitStatus log_not_in_own_namespace(const char *target, int r) {
        _cleanup_free_ char *e = output_escape(target);

        if (r < 0)
                log_error_errno(r, "Cannot attach the mount at %s: %m", strempty(e));
        else
                log_error("Cannot attach a mount at %s: this process does not administer its "
                          "mount namespace.", strempty(e));
        log_error("usermount mount attaches the mount in your mount namespace, which needs a "
                  "user and mount namespace of your own, e.g. 'unshare --user "
                  "--map-root-user --mount'; the desktop path that mounts for you comes in a "
                  "later version.");
        return EXIT_STATUS_TARGET;
}

/* Sends OpenMount(source_fd, fstype, options, params); error and reply as sd_bus_call(). */
static int call_open_mount(sd_bus *bus, int source_fd, const MountArgs *args, bool read_only,
                           sd_bus_error *error, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "OpenMount");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "hss", source_fd, strempty(args->fstype),
                                  strempty(args->options));
        if (r < 0)
                return r;

        r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;
        if (read_only) {
                r = sd_bus_message_append(m, "{sv}", "read-only", "b", 1);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_append(m, "{sv}", "interactive", "b", (int) arg_ask_password);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;

        return sd_bus_call(bus, m, OPEN_MOUNT_TIMEOUT_USEC, error, ret_reply);
}

/* Takes the mount fd (a copy we own) and the info dict out of an OpenMount reply. */
static int read_open_mount_reply(sd_bus_message *reply, int *ret_mount_fd, MountInfo *info) {
        _cleanup_close_ int mount_fd = -EBADF;
        int fd, r;

        r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0)
                return r;
        /* The message owns fd and closes it with the message. */
        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (mount_fd < 0)
                return -errno;

        r = mount_info_read(reply, info);
        if (r < 0)
                return r;

        *ret_mount_fd = TAKE_FD(mount_fd);
        return 0;
}

static ExitStatus print_summary(const MountInfo *info, const MountArgs *args) {
        _cleanup_free_ char *summary = NULL;
        int r;

        r = mount_info_format_summary(info, args->source, args->target, &summary);
        if (r < 0) {
                log_error_errno(r, "Mounted, but cannot describe the mount: %m");
                return EXIT_STATUS_OK;
        }
        puts(summary);
        return EXIT_STATUS_OK;
}

static ExitStatus mount_run(const MountArgs *args) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int target_fd = -EBADF, source_fd = -EBADF, mount_fd = -EBADF;
        _cleanup_(mount_info_done) MountInfo info = {};
        int can_attach, write_error = 0, r;

        /*
         * Fail before the daemon opens a loop device, mounts a possibly hostile image or
         * asks for a password, when the result could not be attached anyway.
         */
        can_attach = namespace_can_attach_mounts();
        if (can_attach == 0)
                return log_not_in_own_namespace(args->target, 0);

        /*
         * The target is opened once, now: it is where the mount goes, whatever happens to
         * the path meanwhile. Like mount(8), a symlink to a directory is followed.
         */
        target_fd = open(args->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (target_fd < 0)
                return log_target_error(args->target, -errno);

        r = open_source(args->source, args->read_only, &source_fd, &write_error);
        if (r < 0)
                return log_source_error(args->source, r);
        if (write_error < 0) {
                _cleanup_free_ char *e = output_escape(args->source);

                log_error_errno(write_error, "Note: cannot open %s for writing (%m); the mount "
                                "will be read-only.", strempty(e));
        }

        r = client_bus_open(&bus);
        if (r < 0) {
                log_error_errno(r, "Cannot connect to the system bus: %m");
                return EXIT_STATUS_UNAVAILABLE;
        }
        /* Waits for the connection, so that a bus that is not there shows up here. */
        r = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD);
        if (r < 0)
                return client_bus_log_error(bus, NULL, r);
        if (r == 0) {
                log_error("The system bus connection cannot pass file descriptors, which "
                          "usermount needs.");
                return EXIT_STATUS_UNAVAILABLE;
        }

        r = call_open_mount(bus, source_fd, args, args->read_only || write_error < 0, &error,
                            &reply);
        if (r < 0)
                return client_bus_log_error(bus, &error, r);
        /* usermountd has what it needs from the source; we hold nothing we do not use. */
        source_fd = safe_close(source_fd);

        r = read_open_mount_reply(reply, &mount_fd, &info);
        if (r < 0) {
                log_error_errno(r, "usermountd sent a reply this usermount cannot read: %m");
                return EXIT_STATUS_FAILURE;
        }

        if (move_mount(mount_fd, "", target_fd, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
                r = -errno;
                /* EPERM/EINVAL: not our namespace to change, unless we know it is. */
                if ((r == -EPERM || r == -EINVAL) && can_attach != 1)
                        return log_not_in_own_namespace(args->target, r);
                return log_attach_error(args->target, r);
        }

        return print_summary(&info, args);
}

int verb_mount(int argc, char *argv[]) {
        _cleanup_(mount_args_done) MountArgs args = {};
        int r;

        r = mount_parse_argv(argc, argv, &args);
        if (r == -ENOMEM) {
                log_error_errno(r, "%m");
                return EXIT_STATUS_FAILURE;
        }
        if (r < 0)
                return usage_hint("mount");
        if (r == 0)
                return EXIT_STATUS_OK;

        return mount_run(&args);
}
