/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jobs a worker does for a request, each with its own input and reply type: plain
 * structs that cross the worker socket as bytes (worker-proto.h), the fds alongside.
 * Everything a job needs travels in it (the caller's ids, the decided options, the values
 * of the configuration it uses), so a worker never reads the configuration and a reload
 * never races one. The daemon builds them (pipeline.c); usermount-worker runs them
 * (jobs.c, worker side only).
 *
 *   job           fds                                  reply (+ fd)
 *   PROBE         source, [userns]                     ProbeReply
 *   OPEN_DEVICE   [userns]                             ProbeReply + the opened device
 *   PREPARE_DRIVER                                     (nothing; then the worker makes
 *                                                      a driver's sandbox ahead)
 *   START_DRIVER  source, stage namespace              DriverStartReply + the driver's
 *                                                      FUSE connection
 *   BUILD         source, stage namespace              BuildReply + the locked mount
 *   ATTACH        mount, caller's pidfd                AttachResult
 *   DETACH        pidfd of a process in the namespace  (nothing)
 *
 * A request's first worker probes, replies, waits for polkit's verdict, then builds
 * (BUILD sent as its last job); Mount and MountFd attach in a second worker. A mount a
 * userspace driver serves is built in two jobs of the same worker: START_DRIVER starts the
 * driver and waits, so that the daemon watches the driver (and has it moved into a scope
 * of its own, driverscope.h) before anything looks into its mount; then BUILD (the same
 * BuildJob) finishes the mount the driver serves. Before polkit is asked for such a mount,
 * PREPARE_DRIVER has the worker claim the driver's uid and make its sandbox while polkit
 * answers (it replies first): START_DRIVER then only has it exec the driver.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "drivertable.h"
#include "idmap.h"
#include "mountopts.h"
#include "source.h"
#include "worker-proto.h"

/* The directory, below the root of the stage namespace a BUILD job gets (the daemon's
 * stagens.h), that the build stages its mount over. */
#define JOB_STAGE_DIR "stage"

typedef enum JobType {
        JOB_PROBE = 1,
        JOB_OPEN_DEVICE,
        JOB_BUILD,
        JOB_ATTACH,
        JOB_DETACH,
        JOB_START_DRIVER,
        JOB_LOOP_SETUP,
        JOB_DRIVE_EJECT,
        JOB_LOOP_CLAIM,
        JOB_PREPARE_DRIVER,
} JobType;

#define JOB_PATH_MAX 4096
#define JOB_NAME_MAX 256

/* Who asks, as far as reading the maps of its user namespace needs (idmap namespace). */
typedef struct JobCaller {
        uint32_t uid;
        uint32_t gid;
        bool gid_known;
        char user_name[JOB_NAME_MAX]; /* for /etc/subuid, /etc/subgid */
} JobCaller;

typedef struct ProbeJob {
        JobCaller caller;
        int32_t idmap;       /* IdmapMode; namespace: fds[1] is the user namespace */
        bool userns_given;   /* that namespace is one the caller passed (to be checked) */
        uint32_t partition;  /* params "partition": 0, or the number in the image's table */
        bool read_only;      /* a read-only mount is asked for (claim.h: shared) */
        char runtime_dir[JOB_PATH_MAX]; /* where the claims of images are (claim.h) */
} ProbeJob;

typedef struct OpenDeviceJob {
        JobCaller caller;
        int32_t idmap;
        bool userns_given;
        char device_path[JOB_PATH_MAX]; /* as the caller gave it */
        uint64_t loop_diskseq;          /* a loop device the UDisks2 front set up for the
                                         * caller: this binding may be opened; 0: none */
} OpenDeviceJob;

typedef struct ProbeReply {
        SourceInfo source;   /* PROBE: what the caller's fd is */
        SourceProbe probe;
        SourcePartition partition; /* PROBE of an image: the partition chosen, if any */
        IdMap uid_map;       /* idmap namespace: the caller's checked maps */
        IdMap gid_map;
        bool read_only;      /* OPEN_DEVICE: the device could only be opened read-only */
        char device[64];     /* OPEN_DEVICE: the canonical node, e.g. /dev/sdb1 */
} ProbeReply;

/* MountOptions as bytes: items as "key\0" + ('=' "value\0" | '-'), in order. */
typedef struct JobOptions {
        uint64_t attr_set;
        bool read_only;
        uint32_t n_items;
        uint32_t used;
        char items[8192];
} JobOptions;

typedef struct JobImageCheck {
        bool enabled;                 /* ImageCheck= */
        uint32_t uid;                 /* ImageCheckUser=, resolved */
        uint32_t gid;
        uint32_t uid_first;           /* ImageCheckUidRange=; uid_count 0: none */
        uint32_t uid_count;
        uint64_t timeout_usec;        /* ImageCheckTimeoutSec= */
} JobImageCheck;

/* Which driver parses the filesystem (driverpolicy.h), and what a userspace one needs. */
typedef struct JobDriver {
        int32_t kind;                 /* DriverKind */
        char name[32];                /* userspace: the FuseDriver's name, e.g. "fuse2fs" */
        uint32_t uid_first;           /* DriverUidRange=: each driver a uid of its own */
        uint32_t uid_count;
        uint64_t timeout_usec;        /* how long it may take to answer FUSE_INIT */
        uint64_t start_deadline;      /* CLOCK_MONOTONIC usec: the start ends by then, before
                                       * the daemon's limit for the job (the driver is killed
                                       * by its worker, never left to a killed worker) */
        bool files_as_caller;         /* every file appears as the caller's (uid=, gid=) */
        uint64_t memory_max;          /* DriverMemoryMax= (fusedriver.h, FuseDriverSpec) */
        uint32_t tasks_max;           /* DriverTasksMax= */
        uint64_t cpu_sec;             /* DriverCPUSec=; 0: none */
} JobDriver;

typedef struct BuildJob {
        SourceInfo source;
        char source_path[JOB_PATH_MAX]; /* images: the backing file, for the record */
        SourceProbe probe;              /* what polkit was asked about */
        SourcePartition partition;      /* images: the partition to mount, or number 0 */
        JobOptions options;
        MountIdmap idmap;
        JobImageCheck check;
        char runtime_dir[JOB_PATH_MAX]; /* loop device marks, check locks */
        JobDriver driver;
        bool from_file;                 /* erofs image: try mounting the file itself first */
        bool loop_allowed;              /* an image may take a loop device (the limits) */
} BuildJob;

typedef struct BuildReply {
        char device[64];                  /* the block device mounted, e.g. /dev/loop3; "" when
                                           * mounted from the file (file_backed) */
        char backing_file[JOB_PATH_MAX];  /* an image's file, as the caller's fd links to it */
        uint64_t mount_id;                /* of the returned mount fd */
        uint64_t loop_devnum;             /* the loop device made for an image, or 0 */
        uint64_t loop_diskseq;            /* its disk sequence number (looptrack.h) */
        IdMap uid_map;                    /* the maps applied */
        IdMap gid_map;
        int32_t idmap_mode;               /* the id-mapping applied (IdmapMode) */
        uint64_t driver_pid;              /* userspace: the driver started, or 0 */
        uint64_t driver_start;            /* its start time (/proc/PID/stat field 22) */
        uint32_t driver_uid;              /* the uid it runs as */
        bool file_backed;                 /* the kernel mounted the image file itself */
        bool file_unsupported;            /* from_file: this kernel cannot (erofsfile.h) */
} BuildReply;

/* PREPARE_DRIVER: what claiming a driver's uid needs (JobDriver's range). */
typedef struct PrepareDriverJob {
        char runtime_dir[JOB_PATH_MAX]; /* where the uids' locks are */
        uint32_t uid_first;             /* DriverUidRange= */
        uint32_t uid_count;
} PrepareDriverJob;

/* START_DRIVER: the driver runs and answered FUSE_INIT; the worker waits for BUILD. */
typedef struct DriverStartReply {
        uint64_t pid;
        uint64_t start;                   /* its start time (/proc/PID/stat field 22) */
        uint32_t uid;                     /* the uid it runs as */
        uint64_t loop_devnum;             /* a partition's loop device it reads, or 0 */
        uint64_t loop_diskseq;
} DriverStartReply;

/* The reply of ATTACH. */
typedef struct AttachResult {
        char mount_point[4096]; /* where it was attached, in the caller's namespace */
        bool created_dir;       /* the directory was made by us (remove it on unmount) */
        uint64_t mount_id;      /* unique id of the attached mount */
        uint64_t mntns_id;      /* the namespace it was attached in */
} AttachResult;

typedef struct AttachJob {
        uint32_t uid;
        uint32_t gid;
        char target[JOB_PATH_MAX];        /* "" for the default */
        char media_root[JOB_PATH_MAX];    /* MediaRoot= */
        char user_name[JOB_NAME_MAX];
        char label[sizeof(((SourceProbe *) 0)->label)];
        char uuid[sizeof(((SourceProbe *) 0)->uuid)];
} AttachJob;

typedef struct DetachJob {
        char mount_point[JOB_PATH_MAX];
        uint64_t mount_id;
        bool force;
        bool remove_dir;
} DetachJob;

/* A DetachJob for the registered mount at mount_point (-ENAMETOOLONG if it does not fit). */
int detach_job_init(DetachJob *j, const char *mount_point, uint64_t mount_id, bool force,
                    bool remove_dir);

/* LOOP_SETUP (the UDisks2 front's Manager.LoopSetup): a loop device of the caller's image
 * (fds[0]), marked for udev as usermount's own, auto-clearing: it lasts while the daemon
 * holds the returned fd or a mount uses it. The worker also takes the image's claim
 * (claim.h) and waits: LOOP_CLAIM (no input) hands it over, for the daemon to hold as long
 * as the device (one fd per reply). */
typedef struct LoopSetupJob {
        uint64_t offset;                /* byte range of the file; size 0: to its end */
        uint64_t size;
        bool read_only;
        char runtime_dir[JOB_PATH_MAX]; /* the marks (loopmark.h) */
} LoopSetupJob;

typedef struct LoopSetupReply {
        char device[64];      /* /dev/loopN */
        uint64_t devnum;
        uint64_t diskseq;
        char backing_file[JOB_PATH_MAX]; /* the image's path, as the fd links to it */
        SourceProbe probe;    /* what the device holds; fstype "" if nothing mountable */
} LoopSetupReply;

/* DRIVE_EJECT (the UDisks2 front's Drive.Eject and PowerOff): each block device of a
 * drive flushed (opened O_EXCL: refused while anything holds it), then the medium ejected,
 * or the drive stopped and its USB port powered off. */
#define JOB_EJECT_MAX_DEVICES 64
typedef struct DriveEjectJob {
        uint64_t disk;                          /* the whole disk's dev_t */
        uint64_t disk_diskseq;                  /* and its disk sequence number (0: unknown) */
        uint64_t devices[JOB_EJECT_MAX_DEVICES]; /* every block device of the drive */
        uint64_t diskseqs[JOB_EJECT_MAX_DEVICES]; /* theirs: the devices polkit was asked
                                                   * about, not ones plugged in since */
        uint32_t n_devices;
        bool power_off;
} DriveEjectJob;

/* The wire layout of each job (worker-proto.h), and their hash for HELLO. */
extern const WorkerJobLayout job_layouts[];
extern const size_t job_n_layouts;
const WorkerJobLayout *job_layout(JobType type);
uint32_t job_layouts_hash(void);

/* Copies s into the fixed field dst (size n); -ENAMETOOLONG if it does not fit. */
int job_set_string(char *dst, size_t n, const char *s);
#define JOB_SET_STRING(field, s) job_set_string((field), sizeof(field), (s))

/* Whether the fixed field holds a NUL-terminated string (checked by the worker). */
#define JOB_STRING_OK(field) (memchr((field), 0, sizeof(field)) != NULL)

/* Whether a reply a worker sent is one the daemon may read: every string NUL-terminated
 * within its field, maps within IDMAP_MAX_EXTENTS, enums in range. -EBADMSG if not. */
int probe_reply_check(const ProbeReply *r);

/* Whether p is a partition or the whole source: number 0 with offset and size 0, or a
 * number with a size that ends within 64 bits. -EBADMSG if not. */
int source_partition_check(const SourcePartition *p);
int build_reply_check(const BuildReply *r);
int driver_start_reply_check(const DriverStartReply *r);

/* MountOptions <-> JobOptions. pack: -E2BIG when they do not fit. unpack: -EBADMSG for
 * bytes that are not what pack makes; *ret is owned (mount_options_done()). */
int job_options_pack(const MountOptions *o, JobOptions *ret);
int job_options_unpack(const JobOptions *j, MountOptions *ret);
