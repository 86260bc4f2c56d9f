/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount mount: asks usermountd to mount a block device (Mount, by path) or an image
 * file usermount opened with the caller's own permissions (MountFd), attached where the
 * caller asked or under the media root; or, inside a user and mount namespace the caller
 * administers, asks for a locked, detached mount (OpenMount) and attaches it with
 * move_mount() itself.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "auth-call.h"
#include "bus-client.h"
#include "container.h"
#include "mount-info.h"
#include "namespace.h"
#include "output.h"
#include "partspec.h"
#include "path.h"
#include "route.h"
#include "usermount-names.h"
#include "userns.h"
#include "cli.h"

typedef struct MountArgs {
        const char *source;
        const char *target; /* NULL: usermountd picks one under the media root */
        const char *fstype; /* NULL: let the daemon probe */
        char *options;      /* owned; NULL: none */
        const char *idmap;  /* NULL: "namespace" in a user namespace, else the daemon's default */
        const char *userns; /* a user namespace file for idmap "namespace"; NULL: ours */
        bool read_only;
        bool exec;
        const char *driver; /* --driver: "kernel" or "userspace"; NULL: the daemon's policy */
        const char *partition; /* --partition=SPEC as given; NULL: none */
        PartSpec partition_spec;
        pid_t container;       /* --container=PID; 0: none */
} MountArgs;

static void mount_args_done(MountArgs *args) {
        free(args->options);
        *args = (MountArgs) {};
}

static void mount_help(void) {
        printf("Usage: usermount mount [OPTIONS] SOURCE [TARGET]\n"
               "       usermount mount --container=PID [OPTIONS] SOURCE TARGET\n"
               "\n"
               "Mount SOURCE, a block device or a filesystem image file, at TARGET, an existing\n"
               "empty directory that you own, or, without TARGET, at /run/media/USER/NAME\n"
               "(the administrator may configure another directory than /run/media), where\n"
               "NAME is the filesystem's label, else its UUID, else 'disk'.\n"
               "\n"
               "A block device is opened by usermountd, which accepts device nodes and the\n"
               "/dev/disk/by-* links to them; an image file is opened by usermount, with your\n"
               "permissions, and passed to usermountd, which attaches it to a loop device.\n"
               "polkit decides whether you may mount it. usermountd checks the filesystem and\n"
               "the options against its policy and mounts it nodev, nosuid and noexec, and\n"
               "read-only if asked for or if the image could only be opened for reading. These\n"
               "flags are locked: neither you nor anyone else can clear them on this mount.\n"
               "usermountd attaches the mount in your mount namespace and keeps track of it:\n"
               "see usermount list, and take it down with usermount unmount.\n"
               "\n"
               "Inside a user and mount namespace of your own, such as the one 'unshare --user\n"
               "--map-root-user --mount' or a rootless container gives you, usermount instead\n"
               "receives the locked mount, detached, and attaches it at TARGET itself; TARGET\n"
               "is then required. Such a mount is seen only in that namespace and those made\n"
               "from it, and usermountd does not keep track of it: unmount it with\n"
               "'umount TARGET', or let it go away with the namespace.\n"
               "\n"
               "With --container=PID, usermount, run on the host, gives a running container of\n"
               "yours the mount at TARGET inside it: PID is a process of the container\n"
               "(podman inspect -f '{{.State.Pid}}' NAME). usermount opens SOURCE on the host,\n"
               "receives the locked mount with files owned as the container's users see them,\n"
               "joins the container's user and mount namespaces and attaches the mount at\n"
               "TARGET, an absolute path in the container that must be an existing, empty\n"
               "directory, reached without symbolic links. usermountd does not keep track of\n"
               "it: take it down with 'usermount unmount --container=PID TARGET', or let it\n"
               "go away when the container stops.\n"
               "\n"
               "TARGET is made absolute with the working directory, without resolving\n"
               "symbolic links: usermountd refuses a target that is a symbolic link or has one\n"
               "in its path.\n"
               "\n"
               "Options:\n"
               "  -t, --type=TYPE        Filesystem type, e.g. ext4. Refused if SOURCE holds\n"
               "                         another one. Default: whatever SOURCE holds.\n"
               "  -o, --options=OPTIONS  Comma-separated filesystem options, e.g.\n"
               "                         'noatime,commit=30'. May be given more than once.\n"
               "                         usermountd refuses options outside its policy, such as\n"
               "                         suid, dev and exec.\n"
               "  -r, --read-only        Mount read-only (and open an image read-only).\n"
               "                         Without this option an image is opened for reading and\n"
               "                         writing, or read-only, with a note, if you may only\n"
               "                         read it.\n"
               "      --exec             Allow running programs from the mount (no noexec).\n"
               "                         Needs an authorization of its own (by default, an\n"
               "                         administrator's).\n"
               "      --idmap=MAPPING    How file owners on the filesystem appear: 'none' (as\n"
               "                         stored; the default outside a user namespace), 'user'\n"
               "                         (the owner of the root directory appears as you, all\n"
               "                         others as the overflow id, nobody, and cannot be\n"
               "                         changed) or 'namespace' (as they would inside your\n"
               "                         user namespace: on-disk uid 0 is your namespace's\n"
               "                         root; the default inside a user namespace). With\n"
               "                         'namespace', usermountd checks that the namespace maps\n"
               "                         only your own uid and gid and the ranges\n"
               "                         /etc/subuid and /etc/subgid give you.\n"
               "      --userns=FILE      With --idmap=namespace (implied): map the ids as the\n"
               "                         user namespace FILE does, e.g. /proc/PID/ns/user of a\n"
               "                         container's process. It must be yours.\n"
               "      --container=PID    Attach the mount at TARGET inside the running\n"
               "                         container of process PID (see above); implies\n"
               "                         --idmap=namespace with the container's user\n"
               "                         namespace, unless --idmap says otherwise.\n"
               "      --partition=SPEC   Mount one partition of a disk image with a partition\n"
               "                         table (GPT or MBR), such as a VM disk or a Raspberry\n"
               "                         Pi image. SPEC is the partition's number, as\n"
               "                         'usermount probe IMAGE' lists them, or one of:\n"
               "                           label:NAME  the GPT partition name or the\n"
               "                                       filesystem label is NAME\n"
               "                           uuid:UUID   the partition UUID or the filesystem\n"
               "                                       UUID is UUID\n"
               "                           type:NAME   the partition type: a Discoverable\n"
               "                                       Partitions name (root-x86-64, esp,\n"
               "                                       home, linux-generic...), a GPT type\n"
               "                                       GUID or an MBR type (0x83)\n"
               "                         which usermount resolves to the number by reading the\n"
               "                         table itself; exactly one partition must match.\n"
               "                         Without this option, an image with a partition table\n"
               "                         gets its only partition that holds a filesystem\n"
               "                         usermountd mounts, and is refused, with the list,\n"
               "                         when it has several. Not for block devices: a disk's\n"
               "                         partitions are devices of their own (/dev/sdb2).\n"
               "      --driver=DRIVER    Which driver parses the filesystem: 'userspace' (a\n"
               "                         sandboxed FUSE driver such as fuse2fs or lowntfs-3g, which\n"
               "                         runs as a uid of its own, so that a hostile image can\n"
               "                         at worst crash it; slower) or 'kernel' (the kernel's\n"
               "                         own driver; faster, and every option of the type). By\n"
               "                         default the administrator's choice (Driver= in\n"
               "                         usermount.conf): as shipped, userspace for images and\n"
               "                         removable media where a driver for the type is\n"
               "                         installed. Asking for the kernel's where the\n"
               "                         administrator chose userspace needs an authorization\n"
               "                         of its own (by default, an administrator's).\n"
               "      --no-ask-password  Do not ask for a password (see usermount --help).\n"
               "  -h, --help             Show this help.\n"
               "\n"
               "On success, usermount prints one line: what it mounted (device, type, label),\n"
               "where, and the flags that are locked.\n"
               "\n"
               "Examples:\n"
               "  usermount mount /dev/sdb1\n"
               "  usermount mount /dev/disk/by-label/STICK ~/stick\n"
               "  usermount mount --read-only disk.img\n"
               "  usermount mount -t iso9660 /dev/sr0 /media/cdrom\n"
               "  usermount mount -o noatime,commit=30 --idmap=user disk.img ~/disk\n"
               "  usermount mount --userns=/proc/4242/ns/user rootfs.img ~/ctr/rootfs\n"
               "  usermount mount --partition=2 vm-disk.img ~/vm\n"
               "  usermount mount --partition=label:rootfs raspios.img ~/pi\n"
               "  usermount mount --driver=userspace /dev/sdb1\n"
               "\n"
               "  Into a running rootless podman container, from the host:\n"
               "    podman run -d --name box IMAGE sleep infinity\n"
               "    usermount mount --container=$(podman inspect -f '{{.State.Pid}}' box) \\\n"
               "            disk.img /mnt\n"
               "    usermount unmount --container=$(podman inspect -f '{{.State.Pid}}' box) /mnt\n"
               "\n"
               "  In a namespace of your own:\n"
               "    unshare --user --map-root-user --mount\n"
               "    usermount mount disk.img /mnt\n"
               "    umount /mnt\n"
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
        if (n < 1) {
                log_error("Missing SOURCE.");
                return -EINVAL;
        }
        if (isempty(operands[0]) || (n > 1 && isempty(operands[1]))) {
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
        if (args->idmap && (isempty(args->idmap) || !output_utf8_is_valid(args->idmap))) {
                log_error("--idmap needs a MAPPING: none, user or namespace.");
                return -EINVAL;
        }
        if (args->driver && !streq(args->driver, "kernel") && !streq(args->driver, "userspace")) {
                _cleanup_free_ char *e = output_escape(args->driver);

                log_error("--driver needs 'kernel' or 'userspace', not '%s'.", strempty(e));
                return -EINVAL;
        }
        if (args->userns && isempty(args->userns)) {
                log_error("--userns needs a FILE, such as /proc/PID/ns/user.");
                return -EINVAL;
        }
        if (args->userns && args->idmap && !streq(args->idmap, "namespace")) {
                log_error("--userns only goes with --idmap=namespace.");
                return -EINVAL;
        }
        if (args->userns && !args->idmap)
                args->idmap = "namespace";
        if (args->container && args->userns) {
                log_error("--container already names the user namespace; leave out --userns.");
                return -EINVAL;
        }
        if (args->container && (n < 2 || container_check_target(operands[1]) < 0)) {
                if (n < 2)
                        log_error("Missing TARGET: with --container, the directory inside the "
                                  "container to mount at.");
                return -EINVAL;
        }
        if (args->partition && partspec_parse(args->partition, &args->partition_spec) < 0) {
                _cleanup_free_ char *e = output_escape(args->partition);

                log_error("--partition needs a partition number (1 or more) or label:NAME, "
                          "uuid:UUID or type:NAME, not '%s'.", strempty(e));
                return -EINVAL;
        }

        args->source = operands[0];
        args->target = n > 1 ? operands[1] : NULL;
        return 0;
}

/*
 * Fills args from the command line. Returns 1 to go on, 0 when done (help shown), -EINVAL
 * after printing a usage error, -ENOMEM.
 */
static int mount_parse_argv(int argc, char *argv[], MountArgs *args) {
        enum {
                ARG_NO_ASK_PASSWORD = 0x100,
                ARG_EXEC,
                ARG_IDMAP,
                ARG_USERNS,
                ARG_PARTITION,
                ARG_DRIVER,
                ARG_CONTAINER,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "type", required_argument, NULL, 't' },
                { "options", required_argument, NULL, 'o' },
                { "read-only", no_argument, NULL, 'r' },
                { "exec", no_argument, NULL, ARG_EXEC },
                { "idmap", required_argument, NULL, ARG_IDMAP },
                { "userns", required_argument, NULL, ARG_USERNS },
                { "partition", required_argument, NULL, ARG_PARTITION },
                { "driver", required_argument, NULL, ARG_DRIVER },
                { "container", required_argument, NULL, ARG_CONTAINER },
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
                case ARG_EXEC:
                        args->exec = true;
                        break;
                case ARG_IDMAP:
                        /* Passed on as it is: usermountd knows which mappings it offers. */
                        args->idmap = optarg;
                        break;
                case ARG_USERNS:
                        args->userns = optarg;
                        break;
                case ARG_PARTITION:
                        args->partition = optarg;
                        break;
                case ARG_DRIVER:
                        args->driver = optarg;
                        break;
                case ARG_CONTAINER:
                        if (container_parse_pid(optarg, &args->container) < 0)
                                return -EINVAL;
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

static void log_write_note(const char *source, int write_error) {
        _cleanup_free_ char *e = output_escape(source);

        log_error_errno(write_error, "Note: cannot open %s for writing (%m); the mount will be "
                        "read-only.", strempty(e));
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

/*
 * The request's options (usermount_open_mount(3)): what the command line says, with
 * read_only, the user namespace (userns_fd, or -EBADF), the target (NULL: the default
 * mount point) and the partition (0: none) as the caller worked them out.
 */
static int mount_options(const MountArgs *args, bool read_only, int userns_fd,
                         const char *target, uint32_t partition, usermount_options **ret) {
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        int r;

        r = usermount_options_new(&o);
        if (r >= 0)
                r = usermount_options_set_fstype(o, args->fstype);
        if (r >= 0)
                r = usermount_options_set_fs_options(o, args->options);
        if (r >= 0)
                r = usermount_options_set_exec(o, args->exec);
        if (r >= 0)
                r = usermount_options_set_idmap(o, args->idmap);
        if (r >= 0)
                r = usermount_options_set_driver(o, args->driver);
        if (r >= 0)
                r = usermount_options_set_read_only(o, read_only);
        if (r >= 0)
                r = usermount_options_set_userns_fd(o, userns_fd);
        if (r >= 0)
                r = usermount_options_set_target(o, target);
        if (r >= 0)
                r = usermount_options_set_partition(o, partition);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static ExitStatus print_summary(const usermount_info *src, const char *source,
                                const char *target) {
        _cleanup_(mount_info_done) MountInfo info = {};
        _cleanup_free_ char *summary = NULL;
        int r;

        r = mount_info_from_usermount(src, &info);
        if (r >= 0)
                r = mount_info_format_summary(&info, source, target, &summary);
        if (r < 0) {
                log_error_errno(r, "Mounted, but cannot describe the mount: %m");
                return EXIT_STATUS_OK;
        }
        puts(summary);
        return EXIT_STATUS_OK;
}

/*
 * --partition as the number usermountd takes: a number as it is, a label, UUID or type
 * looked up in the table of the image we opened (source_fd). 0 without --partition.
 */
static ExitStatus resolve_partition(const MountArgs *args, int source_fd, uint32_t *ret) {
        _cleanup_free_ PartTable *t = NULL;
        _cleanup_free_ char *e = NULL, *s = NULL;
        uint32_t other = 0;
        ExitStatus status;
        int r;

        *ret = 0;
        if (!args->partition)
                return EXIT_STATUS_OK;
        if (args->partition_spec.kind == PART_SPEC_NUMBER) {
                *ret = args->partition_spec.number;
                return EXIT_STATUS_OK;
        }
        t = calloc(1, sizeof(PartTable));
        if (!t) {
                log_error_errno(ENOMEM, "%m");
                return EXIT_STATUS_FAILURE;
        }
        status = probe_read_table(args->source, source_fd, t);
        if (status != EXIT_STATUS_OK)
                return status;
        e = output_escape(args->source);
        s = output_escape(args->partition);
        if (isempty(t->type)) {
                log_error("%s has no partition table, so --partition=%s names nothing.",
                          strempty(e), strempty(s));
                return EXIT_STATUS_REFUSED;
        }
        r = partspec_resolve(&args->partition_spec, t, ret, &other);
        if (r == -ENOTUNIQ) {
                log_error("--partition=%s matches more than one partition of %s (%" PRIu32
                          " and %" PRIu32 "); see usermount probe, and give the number.",
                          strempty(s), strempty(e), *ret, other);
                *ret = 0;
                return EXIT_STATUS_USAGE;
        }
        if (r < 0) {
                log_error("No partition of %s matches --partition=%s; see usermount probe.",
                          strempty(e), strempty(s));
                return EXIT_STATUS_REFUSED;
        }
        return EXIT_STATUS_OK;
}

/* Opens --userns FILE (read-only: that is all a namespace file needs), or nothing. */
static ExitStatus open_userns(const MountArgs *args, int *ret_fd) {
        _cleanup_free_ char *e = NULL;
        int fd;

        *ret_fd = -EBADF;
        if (!args->userns)
                return EXIT_STATUS_OK;
        fd = open(args->userns, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
                *ret_fd = fd;
                return EXIT_STATUS_OK;
        }
        e = output_escape(args->userns);
        log_error_errno(-errno, "Cannot open the user namespace %s: %m", strempty(e));
        return EXIT_STATUS_REFUSED;
}

/*
 * The namespace path: OpenMount, then move_mount() onto TARGET here, or, with a container
 * (--container), onto TARGET inside it (container.h).
 */
static ExitStatus mount_run_open_mount(const MountArgs *args, const Container *container) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL;
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        _cleanup_close_ int target_fd = -EBADF, source_fd = -EBADF, mount_fd = -EBADF,
                userns_fd = -EBADF;
        uint32_t partition = 0;
        int write_error = 0, r;
        ExitStatus status;

        if (!args->target) {
                log_error("Missing TARGET: inside a user and mount namespace of your own, "
                          "usermount attaches the mount itself, and needs to know where.");
                return usage_hint("mount");
        }

        /*
         * The target is opened once, now: it is where the mount goes, whatever happens to
         * the path meanwhile. Like mount(8), a symlink to a directory is followed. A
         * container's target is opened inside the container, after OpenMount.
         */
        if (!container) {
                target_fd = open(args->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (target_fd < 0)
                        return log_target_error(args->target, -errno);
        }

        r = open_source(args->source, args->read_only, &source_fd, &write_error);
        if (r < 0)
                return log_source_error(args->source, r);
        if (write_error < 0)
                log_write_note(args->source, write_error);
        status = resolve_partition(args, source_fd, &partition);
        if (status != EXIT_STATUS_OK)
                return status;
        status = open_userns(args, &userns_fd);
        if (status != EXIT_STATUS_OK)
                return status;
        if (container && streq_ptr(args->idmap, "namespace"))
                userns_fd = fcntl(container->userns_fd, F_DUPFD_CLOEXEC, 3);
        if (container && userns_fd < 0 && streq_ptr(args->idmap, "namespace")) {
                log_error_errno(-errno, "Cannot duplicate the container's user namespace: %m");
                return EXIT_STATUS_FAILURE;
        }

        status = client_connect(true, arg_ask_password, &client);
        if (status != EXIT_STATUS_OK)
                return status;

        r = mount_options(args, args->read_only || write_error < 0, userns_fd, NULL, partition,
                          &o);
        if (r >= 0)
                r = usermount_open_mount(client, source_fd, o, &mount_fd, &info);
        if (r < 0)
                return auth_log_error(client, r);
        /* usermountd has what it needs from the source; we hold nothing we do not use. */
        source_fd = safe_close(source_fd);

        if (container) {
                /* On failure the mount goes away when mount_fd is closed. */
                _cleanup_free_ char *where = NULL;

                status = container_attach(container, mount_fd, args->target);
                if (status != EXIT_STATUS_OK)
                        return status;
                if (asprintf(&where, "%s in the container of process %d", args->target,
                             (int) container->pid) < 0)
                        return print_summary(info, args->source, args->target);
                return print_summary(info, args->source, where);
        } else if (move_mount(mount_fd, "", target_fd, "",
                              MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return log_attach_error(args->target, -errno);

        return print_summary(info, args->source, args->target);
}

/*
 * Makes path (what: "Target", "Device") absolute for usermountd into *ret; prints what is
 * wrong and returns failure, or EXIT_STATUS_USAGE for a path D-Bus cannot carry, if not.
 */
static ExitStatus make_bus_path(const char *what, const char *path, ExitStatus failure,
                                char **ret) {
        _cleanup_free_ char *e = output_escape(path), *absolute = NULL;
        int r;

        r = path_make_absolute_cwd(path, &absolute);
        if (r < 0) {
                log_error_errno(r, "Cannot make %s %s an absolute path: %m", what, strempty(e));
                return failure;
        }
        if (!output_utf8_is_valid(absolute)) {
                log_error("%s %s is not valid UTF-8, and usermountd only takes UTF-8 paths.",
                          what, strempty(e));
                return EXIT_STATUS_USAGE;
        }
        *ret = TAKE_PTR(absolute);
        return EXIT_STATUS_OK;
}

/* The tracked path: Mount(device) or MountFd(image), attached by usermountd. */
static ExitStatus mount_run_daemon(const MountArgs *args, bool by_fd) {
        _cleanup_(usermount_client_unrefp) usermount_client *client = NULL;
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_(usermount_options_freep) usermount_options *o = NULL;
        _cleanup_free_ char *target = NULL, *device = NULL, *mount_point = NULL;
        _cleanup_close_ int source_fd = -EBADF, userns_fd = -EBADF;
        uint32_t partition = 0;
        int write_error = 0, r;
        ExitStatus status;

        if (args->target) {
                status = make_bus_path("Target", args->target, EXIT_STATUS_TARGET, &target);
                if (status != EXIT_STATUS_OK)
                        return status;
        }

        if (by_fd) {
                r = open_source(args->source, args->read_only, &source_fd, &write_error);
                if (r < 0)
                        return log_source_error(args->source, r);
                if (write_error < 0)
                        log_write_note(args->source, write_error);
                status = resolve_partition(args, source_fd, &partition);
                if (status != EXIT_STATUS_OK)
                        return status;
        } else {
                /* usermountd opens the device, and resolves /dev/disk/by-* links itself. */
                status = make_bus_path("Device", args->source, EXIT_STATUS_REFUSED, &device);
                if (status != EXIT_STATUS_OK)
                        return status;
        }
        status = open_userns(args, &userns_fd);
        if (status != EXIT_STATUS_OK)
                return status;

        status = client_connect(by_fd, arg_ask_password, &client);
        if (status != EXIT_STATUS_OK)
                return status;

        r = mount_options(args, args->read_only || write_error < 0, userns_fd, target,
                          partition, &o);
        if (r >= 0)
                r = by_fd ? usermount_mount_fd(client, source_fd, o, &mount_point, &info)
                          : usermount_mount(client, device, o, &mount_point, &info);
        if (r < 0)
                return auth_log_error(client, r);
        source_fd = safe_close(source_fd);

        return print_summary(info, args->source, mount_point);
}

/* --container=PID: the container is checked before SOURCE is even opened. */
static ExitStatus mount_run_container(MountArgs *args) {
        _cleanup_(container_done) Container c = CONTAINER_NULL;
        ExitStatus status;

        status = container_open(args->container, &c);
        if (status != EXIT_STATUS_OK)
                return status;
        /* A wrong target is told before a loop device is made for nothing. */
        status = container_check_target_dir(&c, args->target);
        if (status != EXIT_STATUS_OK)
                return status;
        /* Files owned as the container's users expect them. */
        if (!args->idmap)
                args->idmap = "namespace";
        return mount_run_open_mount(args, &c);
}

static ExitStatus mount_run(MountArgs *args) {
        int in_userns = userns_detect();
        struct stat st;

        /* Followed symlinks: /dev/disk/by-label/STICK is a block device here. */
        if (stat(args->source, &st) < 0)
                return log_source_error(args->source, -errno);
        if (args->partition && S_ISBLK(st.st_mode)) {
                log_error("--partition is for disk images: a partition of a disk is a block "
                          "device of its own, such as /dev/sdb2; mount that one.");
                return usage_hint("mount");
        }

        if (args->container)
                return mount_run_container(args);

        /* In a user namespace, files should be owned as the namespace sees its own ids. */
        if (!args->idmap && in_userns == 1)
                args->idmap = "namespace";

        switch (mount_route(namespace_can_attach_mounts(), in_userns, st.st_mode)) {
        case MOUNT_ROUTE_OPEN_MOUNT:
                return mount_run_open_mount(args, NULL);
        case MOUNT_ROUTE_DEVICE:
                return mount_run_daemon(args, false);
        case MOUNT_ROUTE_FD:
                return mount_run_daemon(args, true);
        case MOUNT_ROUTE_BAD_SOURCE:
        default:
                return log_source_error(args->source, -EMEDIUMTYPE);
        }
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
