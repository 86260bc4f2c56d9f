/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The request pipeline, top-down (docs/architecture.md, "Request flow"):
 *
 *   pipeline_start()            limits; Unmount, ListMounts, Subscribe go their own way
 *   request_probe()             the worker probes the source (or opens the device path)
 *   on_probe_done()             what the source is; request_decide(): the policy
 *   request_prepare_driver()    a userspace driver: its sandbox made while polkit answers
 *   request_authorize_next()    polkit, one action after the other
 *   request_continue()          authorized: build (Unmount: detach)
 *   request_build()             the same worker builds the locked mount
 *   on_build_done()             OpenMount: reply with the fd; else attach
 *   on_attach_done()            registered, replied
 *
 * then Unmount and ListMounts, then the helpers that send jobs and make records. A
 * Request's own life is request.c's, the limits' counts limitcount.c's. Everything before
 * authorization is free of side effects on the system (probing only reads the source; a
 * driver's prepared sandbox holds a uid and runs nothing of the request, and goes with its
 * worker); everything after it works on fds, never on paths the caller controls.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/param.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "authdetails.h"
#include "authorize.h"
#include "limitcount.h"
#include "pipeline-private.h"
#include "pipeline.h"
#include "policy.h"
#include "request-dbus.h"
#include "driverscope.h"
#include "jobproto.h"
#include "admission.h"
#include "log.h"
#include "manager.h"
#include "mountns.h"
#include "procfs.h"
#include "reconcile.h"
#include "service.h"
#include "usermount-names.h"
#include "time-util.h"

static void request_probe(Request *req);
static void on_probe_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata);
static int request_decide(Request *req, UmError *error);
static int request_decide_driver(Request *req, UmError *error);
static int request_check_backing_limits(Request *req, UmError *error);
static void request_prepare_driver(Request *req);
static void on_driver_prepared(Worker *w, int r, const void *out, const UmError *error, int fd,
                               void *userdata);
static void on_authorized(int r, const UmError *error, void *userdata);
static void request_continue(Request *req);
static void request_build(Request *req);
static void on_build_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata);
static void on_driver_started(Worker *w, int r, const void *out, const UmError *error, int fd,
                              void *userdata);
static void on_attach_done(Worker *w, int r, const void *reply, const UmError *error, int fd,
                           void *userdata);
static void on_detach_undo_done(Worker *w, int r, const void *reply, const UmError *error, int fd,
                                void *userdata);
static void request_start_unmount(Request *req);
static void request_detach(Request *req);
static void on_detach_done(Worker *w, int r, const void *reply, const UmError *error, int fd,
                           void *userdata);
static void request_start_list(Request *req);
static void on_list_authorized(int r, const UmError *error, void *userdata);
static void request_send_job(Request *req, RequestStage stage, JobType type, const void *input,
                             const int *fds, size_t n_fds, bool last, uint64_t timeout_usec,
                             WorkerDone done);
static void job_caller(const Request *req, JobCaller *c);
static int request_build_job(Request *req, BuildJob *j);
static int request_attach_job(Request *req, AttachJob *j);
static int request_make_record(Request *req, const BuildReply *reply);
static const char *idmap_note(const MountRecord *rec, char *buf, size_t size);
static const char *request_what_mounted(const Request *req, char *buf, size_t size);

/* Whether an image of fstype is mounted from its file, without a loop device: erofs, unless
 * this kernel said it cannot (BuildReply.file_unsupported). */
static bool erofs_from_file(const Manager *m, const char *fstype) {
        return streq(fstype, "erofs") && !m->erofs_file_unsupported;
}

void pipeline_start(Request *req) {
        Manager *m = req->manager;
        UmError error = {};

        request_set_state(req, REQUEST_NEW); /* logs how long learning the caller took */
        service_note_activity(m);
        /* Exiting after being idle, the name already given up (service.c): a mount made
         * now would be watched by nobody once this process is gone. */
        if (m->idle_exiting && req->call.method != METHOD_UNMOUNT &&
            req->call.method != METHOD_LIST_MOUNTS) {
                um_error_set(&error, UM_ERROR_KIND_FAILED, EAGAIN,
                             "usermountd was exiting after being idle when this request came; "
                             "send it again, and the instance that is running now answers it.");
                return request_fail(req, &error);
        }
        manager_refresh_owners(m);
        req->owner = owner_map_lookup(&m->owners, req->call.caller.uid);
        /* From now on a close of its fds that hangs is the owner's (busfds.h). */
        busfds_claim(manager_busfds_of(m, req->call.message), req->call.message, req->owner);
        if (limitcount_check_request(req, &error) < 0)
                return request_fail(req, &error);
        req->unauthorized = limitcount_charges_unauthorized(req);

        request_link(req);

        switch (req->call.method) {
        case METHOD_UNMOUNT:
                return request_start_unmount(req);
        case METHOD_LIST_MOUNTS:
        case METHOD_SUBSCRIBE:
                return request_start_list(req);
        case METHOD_MOUNT:
        case METHOD_OPEN_MOUNT:
        case METHOD_MOUNT_FD:
                return request_probe(req);
        case METHOD_LOOP_SETUP:
                return request_start_loop_setup(req);
        case METHOD_DRIVE_EJECT:
                return request_start_eject(req);
        }
}

/* The first job of a mount request: probing what the caller passed, or opening the
 * device path it named; the worker then waits for the build. */
static void request_probe(Request *req) {
        int fds[2], n = 0;

        if (req->call.method == METHOD_MOUNT) {
                _cleanup_free_ OpenDeviceJob *job = calloc(1, sizeof(OpenDeviceJob));

                if (!job)
                        return request_fail_errno(req, -ENOMEM, "start probing the device");
                job_caller(req, &job->caller);
                job->idmap = req->call.params.idmap;
                job->userns_given = req->call.params.userns_given;
                if (request_is_image(req))
                        job->loop_diskseq = req->loop_diskseq;
                if (JOB_SET_STRING(job->device_path, req->call.device_path) < 0)
                        return request_fail_errno(req, -ENAMETOOLONG, "start probing the device");
                if (req->userns_fd >= 0)
                        fds[n++] = req->userns_fd;
                return request_send_job_timeout(req, REQUEST_PROBING, JOB_OPEN_DEVICE, job, fds,
                                                n, false, on_probe_done);
        }

        _cleanup_free_ ProbeJob *job = calloc(1, sizeof(ProbeJob));

        if (!job)
                return request_fail_errno(req, -ENOMEM, "start probing the source");
        *job = (ProbeJob) {
                .idmap = req->call.params.idmap,
                .userns_given = req->call.params.userns_given,
                .partition = req->call.params.partition,
                .read_only = req->call.params.read_only || req->call.source_read_only,
        };
        if (JOB_SET_STRING(job->runtime_dir, req->manager->runtime_dir) < 0)
                return request_fail_errno(req, -ENAMETOOLONG, "start probing the source");
        job_caller(req, &job->caller);
        fds[n++] = req->call.source_fd;
        if (req->userns_fd >= 0)
                fds[n++] = req->userns_fd;
        request_send_job_timeout(req, REQUEST_PROBING, JOB_PROBE, job, fds, n, false,
                                 on_probe_done);
}

/* A worker's reply that its check refuses: the request fails with e, which *error then
 * points at. */
int reply_malformed(const UmError **error, UmError *e) {
        um_error_set(e, UM_ERROR_KIND_FAILED, EBADMSG, "The mount worker sent a malformed result.");
        *error = e;
        return -EBADMSG;
}

static void on_probe_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata) {
        Request *req = userdata;
        const ProbeReply *reply = out;
        UmError e = {};

        /* On success the worker waits for the build (request_build()); else it exits. */
        if (r >= 0 && probe_reply_check(reply) < 0)
                r = reply_malformed(&error, &e);
        if (r < 0) {
                req->worker = worker_release(w);
                safe_close(fd);
                return request_fail(req, error);
        }
        if (req->call.method == METHOD_MOUNT) {
                /* The device the worker opened for us becomes the source. */
                req->device_fd = fd;
                r = source_inspect_fd(req->device_fd, &req->source, &e);
                if (r < 0)
                        return request_fail(req, &e);
                /* The worker opened it read-only (a write open waits for polkit): only a
                 * write-protected medium makes the mount read-only. */
                req->source.read_only = reply->read_only;
                req->read_only = req->call.params.read_only || reply->read_only;
                req->source_path = strndup(reply->device, sizeof(reply->device) - 1);
                if (!req->source_path)
                        return request_fail_errno(req, -ENOMEM, "record the device");
        } else {
                safe_close(fd);
                /* What the caller's fd is, as the worker found out (source_inspect_fd()). */
                req->source = reply->source;
                req->read_only = req->call.params.read_only || req->call.source_read_only ||
                                 req->source.read_only;
        }

        req->probe = reply->probe;
        req->partition = reply->partition;
        /* The maps were read and checked; the namespace itself is never used again. */
        req->idmap = (MountIdmap) {
                .mode = req->call.params.idmap,
                .caller_uid = req->call.caller.uid,
                .caller_gid = req->call.caller.gid,
                .uid_map = reply->uid_map,
                .gid_map = reply->gid_map,
        };
        request_drop_userns(req);
        r = request_decide(req, &e);
        if (r >= 0)
                r = request_check_backing_limits(req, &e);
        if (r < 0)
                return request_fail(req, &e);
        /* A userspace driver's start, prepared by the worker while polkit answers. */
        if (req->fuse_driver && req->call.caller.uid != 0)
                return request_prepare_driver(req);
        request_authorize_next(req);
}

/* PREPARE_DRIVER (jobproto.h): the worker replies at once, then claims the driver's uid and
 * makes its sandbox, which run nothing of the request until START_DRIVER. */
static void request_prepare_driver(Request *req) {
        PrepareDriverJob job = {
                .uid_first = req->conf->driver_uid_first,
                .uid_count = req->conf->driver_uid_count,
        };

        if (JOB_SET_STRING(job.runtime_dir, req->manager->runtime_dir) < 0)
                return request_fail_errno(req, -ENAMETOOLONG, "prepare the filesystem driver");
        request_send_job_timeout(req, REQUEST_PROBING, JOB_PREPARE_DRIVER, &job, NULL, 0, false,
                                 on_driver_prepared);
}

static void on_driver_prepared(Worker *w, int r, const void *out, const UmError *error, int fd,
                               void *userdata) {
        Request *req = userdata;

        safe_close(fd);
        if (r < 0) {
                req->worker = worker_release(w);
                return request_fail(req, error);
        }
        request_authorize_next(req);
}

/* What the mount will hold once built, against its limits: a loop device for an image the
 * kernel parses, a driver process for a userspace mount. */
static int request_check_backing_limits(Request *req, UmError *error) {
        int r;

        if (req->driver.driver == DRIVER_USERSPACE) {
                r = limitcount_check_drivers(req, error);
                if (r >= 0)
                        req->wants_driver = true;
                /* A partition's driver reads a loop device of the partition's bytes. */
                if (r >= 0 && req->partition.number > 0) {
                        r = limitcount_check_loops(req, error);
                        req->wants_loop = r >= 0;
                }
                return r;
        }
        if (req->source.type != SOURCE_IMAGE)
                return 0;
        /* Counted as a loop device until built: an erofs image falls back to one where it
         * cannot be mounted from its file. Beyond the limits it may still be mounted from
         * its file (BuildJob.loop_allowed false). */
        r = limitcount_check_loops(req, error);
        if (r < 0 && !erofs_from_file(req->manager, req->probe.fstype))
                return r;
        if (r < 0)
                *error = (UmError) {};
        req->wants_loop = r >= 0;
        return 0;
}

/* A loop device the UDisks2 front set up for this caller is the caller's image. */
bool request_is_image(const Request *req) {
        return req->source.type == SOURCE_IMAGE ||
               (req->loop_setup_by != (uid_t) -1 && req->loop_setup_by == req->call.caller.uid);
}

static SourceKind request_source_kind(const Request *req) {
        if (request_is_image(req))
                return SOURCE_KIND_IMAGE;
        return req->source.removable ? SOURCE_KIND_REMOVABLE : SOURCE_KIND_SYSTEM;
}

/*
 * Kernel or userspace driver (driverpolicy.h), and what a userspace driver cannot do: the
 * kernel driver's options, and idmap=namespace on a type that keeps ids on disk (FUSE
 * mounts cannot be id-mapped with the drivers' libfuse; the drivers' uid=/gid= show every
 * file as one user, which is what idmap=user becomes for them).
 */
static int request_decide_driver(Request *req, UmError *error) {
        const ConfFsType *t = conf_fstype(req->conf, req->probe.fstype);
        const FuseDriver *d = fusedriver_fuse_present() ? fusedriver_find(req->probe.fstype)
                                                        : NULL;
        /* What only the kernel can do: ids of a type with owners as in a user namespace.
         * (A partition any driver serves: from a loop device of its bytes.) */
        const bool namespace_ok = !(req->call.params.idmap == IDMAP_NAMESPACE && d && !d->ownerless);
        const bool can_serve = d && namespace_ok;
        const DriverInput in = {
                .fstype = req->probe.fstype,
                .kind = request_source_kind(req),
                .general = &req->conf->driver,
                .type = t ? &t->driver : NULL,
                .kernel_available = proc_has_filesystem(req->probe.fstype),
                .userspace_available = can_serve,
                .userspace_name = d ? d->name : NULL,
                .requested = req->call.params.driver,
        };
        int r;

        r = driver_decide(&in, &req->driver, error);
        if (r < 0 && d && !namespace_ok) {
                *error = (UmError) {};
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "idmap 'namespace' is not available with the userspace "
                                    "driver (%s): %s keeps ids on disk, and a FUSE mount cannot "
                                    "be id-mapped here. Use idmap 'user' (every file appears as "
                                    "yours) or 'none', or the kernel's driver (driver=kernel).",
                                    d->name, req->probe.fstype);
        }
        if (r >= 0 && d && !can_serve && req->driver.driver == DRIVER_KERNEL) {
                /* The kernel only because of idmap=namespace: where the userspace driver is
                 * the rule this is the kernel against the rule, as with driver=kernel, or a
                 * caller who controls the bytes would get the kernel's parser by asking. */
                DriverInput rule_in = in;
                DriverDecision rule = {};
                UmError ignored = {};

                rule_in.userspace_available = true;
                rule_in.requested = -1;
                if (driver_decide(&rule_in, &rule, &ignored) >= 0 &&
                    rule.driver == DRIVER_USERSPACE)
                        req->driver.kernel_override = true;
        }
        /* A loop device of LoopSetup is an image the kernel would parse without the image
         * path's checks (ImageCheck=, the recheck right before the mount, the claims that
         * go by the image file): only a userspace driver reads it. */
        if (r >= 0 && req->driver.driver == DRIVER_KERNEL && request_is_image(req) &&
            req->source.type == SOURCE_BLOCK_DEVICE)
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "A loop device set up through the UDisks2 API is read by a "
                                    "userspace driver only, not by the kernel's, which is the "
                                    "one for %s here (Driver= in %s, or no userspace driver "
                                    "installed); mount the image itself with \"usermount "
                                    "mount\", which checks it before the kernel reads it.",
                                    req->probe.fstype, req->conf->path ?: CONF_DEFAULT_PATH);
        if (r < 0 || req->driver.driver != DRIVER_USERSPACE)
                return r;
        req->fuse_driver = d;
        r = policy_check_userspace_options(req->call.options, d->name, error);
        if (r < 0)
                return r;
        if (!d->writable && !req->read_only) {
                req->read_only = req->mount_options.read_only = true;
                req->mount_options.attr_set |= MOUNT_ATTR_RDONLY;
        }
        return 0;
}

/* Policy on the probed facts: type allowed and as requested, options, which actions. */
static int request_decide(Request *req, UmError *error) {
        char want[64], have[64];
        const PolicyInput in = {
                .fstype = req->probe.fstype,
                .options = req->call.options,
                .read_only = req->read_only,
                .source_read_only = req->source.read_only,
                .exec = req->call.params.exec,
                .uid = req->call.caller.uid,
                .gid = req->call.caller.gid,
                .umask = req->call.caller.umask,
                .fs_conf = conf_fstype(req->conf, req->probe.fstype),
        };
        int r;

        um_escape(req->probe.fstype, have, sizeof(have));
        if (req->call.params.exec && !req->conf->allow_exec)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "Running programs from user mounts is switched off by the "
                                    "administrator (AllowExec=no in %s).",
                                    req->conf->path ?: CONF_DEFAULT_PATH);
        if (!fstype_allowed(req->probe.fstype))
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "The source holds a '%s' filesystem, which is not allowed "
                                    "for user mounts.", have);
        if (!conf_fstype_allowed(req->conf, req->probe.fstype))
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "The source holds a '%s' filesystem, which the administrator "
                                    "does not allow for user mounts (AllowedFilesystems= in %s).",
                                    have, req->conf->path ?: CONF_DEFAULT_PATH);
        if (!isempty(req->call.fstype) && !streq(req->call.fstype, req->probe.fstype))
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "The source holds '%s', not the requested '%s'.", have,
                                    um_escape(req->call.fstype, want, sizeof(want)));

        r = policy_build_options(&in, &req->mount_options, error);
        if (r < 0)
                return r;
        /* Labels last: the caller can give none (policy.c refuses them), the LSM decides. */
        r = label_add_options(&(const LabelInput) { .lsm = req->manager->lsm,
                                                    .caller_label = req->call.caller.label,
                                                    .selinux_type = req->conf->selinux_type },
                              &req->mount_options, error);
        if (r < 0)
                return r;

        r = request_decide_driver(req, error);
        if (r < 0)
                return r;
        admission_mount_actions(request_is_image(req) ? SOURCE_IMAGE : req->source.type,
                                req->source.removable,
                                req->driver.kernel_override, req->call.params.exec, req->actions);
        return 0;
}

/* What polkit rules see of req: an Unmount of another's mount, its record's facts; a
 * mount, the call and what the probe found and the policy decided. */
static void request_auth_details(const Request *req, AuthDetails *d) {
        const MountRecord *rec = req->call.method == METHOD_UNMOUNT ?
                registry_find_mount_id(req->manager->registry, req->unmount_id) : NULL;

        if (rec)
                return auth_details_of_mount(rec, d);
        auth_details_of_call(&req->call, &(const AuthFacts) {
                .device = request_source_path(req) ?: request_what(req),
                .devnum = req->source.type == SOURCE_BLOCK_DEVICE ? req->source.rdev : 0,
                .image_fd = req->source.type == SOURCE_IMAGE ? request_source_fd(req) : -EBADF,
                .probe = &req->probe,
                .partition = req->partition.number,
                .driver = req->driver.driver,
                .read_only = req->mount_options.read_only,
                .media_root = req->conf->media_root,
        }, d);
}

/* Asks polkit for each action the request needs, one after the other; root needs none. */
void request_authorize_next(Request *req) {
        AuthDetails d = {};
        const char *details[AUTH_DETAILS_LIST_MAX];
        int r;

        request_set_state(req, REQUEST_AUTHORIZING);
        if (req->call.caller.uid == 0 || req->n_actions_done >= ELEMENTSOF(req->actions) ||
            !req->actions[req->n_actions_done])
                return request_continue(req);

        request_auth_details(req, &d);
        auth_details_list(&d, details);
        const AuthorizeSubject subject = authorize_subject_of(&req->call.caller);
        r = authorize_check_async(req->manager->bus, &subject, req->actions[req->n_actions_done],
                                  details, req->call.params.interactive, on_authorized, req,
                                  &req->polkit_slot);
        if (r < 0)
                request_fail_errno(req, r, "ask polkit");
}

static void on_authorized(int r, const UmError *error, void *userdata) {
        Request *req = userdata;

        req->polkit_slot = sd_bus_slot_unref(req->polkit_slot);
        if (r < 0)
                return request_fail(req, error);
        req->n_actions_done++;
        request_authorize_next(req);
}

/* After authorization: what the method does. */
static void request_continue(Request *req) {
        /* polkit said yes: no longer charged to the budget of requests nobody authorized,
         * and neither are the owner's next ones before polkit answers them (owner.h). */
        if (req->call.caller.uid != 0)
                owner_known_add(&req->manager->authorized_owners, req->owner);
        req->unauthorized = false;
        if (req->call.method == METHOD_UNMOUNT)
                request_detach(req);
        else if (req->call.method == METHOD_LOOP_SETUP)
                request_loop_setup(req);
        else if (req->call.method == METHOD_DRIVE_EJECT)
                request_eject(req);
        else
                request_build(req);
}

static void request_build(Request *req) {
        uint64_t timeout = req->conf->limits.request_timeout_usec;
        _cleanup_free_ BuildJob *job = malloc(sizeof(BuildJob));
        int r, fds[2];

        /* The daemon attaches Mount's and MountFd's mounts; in a mount namespace others use,
         * the root directory must be the caller's (mountbuild.c, check_own_root()). A
         * caller cannot move from a namespace of its own into one of those later: that
         * takes privilege over the host's user namespace. */
        req->idmap.mode_given = req->call.params.idmap_given;
        if (req->call.method != METHOD_OPEN_MOUNT && req->call.caller.uid != 0) {
                r = mountns_shared_with_host(req->call.caller.pidfd, req->call.caller.pid);
                if (r < 0)
                        return request_fail_errno(req, r, "look at your mount namespace");
                req->idmap.own_root = r > 0;
        }
        /* A userspace driver of a type with owners: idmap=user, or its default in a namespace
         * others share, shows every file as the caller's (the driver's uid=, gid=). */
        if (req->fuse_driver && !req->fuse_driver->ownerless &&
            (req->idmap.mode == IDMAP_USER || (req->idmap.own_root && !req->idmap.mode_given))) {
                req->files_as_caller = true;
                req->idmap.mode = IDMAP_USER;
        }

        if (!job)
                return request_fail_errno(req, -ENOMEM, "start building the mount");
        r = request_build_job(req, job);
        if (r < 0)
                return request_fail_errno(req, r, "start building the mount");
        /* The read-only check of an image runs inside the build worker, with its own limit. */
        if (req->conf->image_check && req->source.type == SOURCE_IMAGE)
                timeout += req->conf->image_check_timeout_usec;
        fds[0] = request_source_fd(req);
        fds[1] = req->manager->stage_ns_fd;
        if (req->fuse_driver) {
                /* The driver first, watched before anything looks into its mount (jobproto.h). */
                req->build_job = TAKE_PTR(job);
                return request_send_job(req, REQUEST_BUILDING, JOB_START_DRIVER, req->build_job,
                                        fds, fds[1] >= 0 ? 2 : 1, false, timeout,
                                        on_driver_started);
        }
        request_send_job(req, REQUEST_BUILDING, JOB_BUILD, job, fds, fds[1] >= 0 ? 2 : 1, true,
                         timeout, on_build_done);
}

/*
 * From its start the driver is counted and watched by what runs, not by the request (and
 * killed if the request fails, request_free()). The worker that started it waits without
 * reaping it, so its pid is still its own here. A driver that is already gone (it crashed
 * right after the start) fails the request: its mount would answer nothing but ENOTCONN.
 */
static int request_track_driver(Request *req, const DriverStartReply *reply, int conn_fd) {
        _cleanup_close_ int conn = conn_fd;
        pid_t pid = (pid_t) reply->pid;
        int fd, r;

        fd = pidfd_open(pid, 0);
        if (fd < 0) {
                r = -errno;
                /* Not watched, it must not run. The pid is still the driver's: its worker
                 * waits without reaping it (its zombie, if it died). */
                if (pid > 1)
                        (void) kill(pid, SIGKILL);
                return r;
        }
        if (conn < 0) { /* the worker's reply always has the connection */
                (void) pidfd_send_signal(fd, SIGKILL, NULL, 0);
                safe_close(fd);
                return -EBADMSG;
        }
        if (!drivertrack_alive(pid, reply->start)) {
                safe_close(fd);
                return -ESRCH;
        }
        r = drivertrack_add(&req->manager->drivers, pid, reply->start, req->owner,
                            (uid_t) reply->uid, fcntl(fd, F_DUPFD_CLOEXEC, 3), TAKE_FD(conn));
        if (r < 0) {
                /* Not watched, it must not run: nobody would end it (the worker is let go). */
                (void) pidfd_send_signal(fd, SIGKILL, NULL, 0);
                safe_close(fd);
                return r;
        }
        safe_close(fd);
        req->driver_pid = pid;
        req->driver_start = reply->start;
        req->wants_driver = false;
        return 0;
}

/* The driver in its scope (or not; said in the log): the worker finishes the mount. */
static void on_scope_done(int r, void *userdata) {
        Request *req = userdata;
        int fds[2];

        req->scope = NULL;
        fds[0] = request_source_fd(req);
        fds[1] = req->manager->stage_ns_fd;
        request_send_job(req, REQUEST_BUILDING, JOB_BUILD, req->build_job, fds,
                         fds[1] >= 0 ? 2 : 1, true, req->conf->limits.request_timeout_usec,
                         on_build_done);
}

static void on_driver_started(Worker *w, int r, const void *out, const UmError *error, int fd,
                              void *userdata) {
        Request *req = userdata;
        const DriverStartReply *reply = out;
        const DriverScopeLimits limits = {
                .memory_max = req->conf->limits.driver_memory_max,
                .tasks_max = req->conf->limits.driver_tasks_max,
        };
        UmError e = {};

        if (r >= 0 && driver_start_reply_check(reply) < 0)
                r = reply_malformed(&error, &e);
        if (r < 0) {
                safe_close(fd);
                req->worker = worker_release(w);
                return request_fail(req, error);
        }
        r = request_track_driver(req, reply, fd);
        if (r >= 0 && reply->loop_devnum != 0) {
                /* A partition's loop device: counted by what exists from now on. */
                r = looptrack_add(&req->manager->loops, (dev_t) reply->loop_devnum,
                                  reply->loop_diskseq, req->owner);
                if (r >= 0)
                        req->wants_loop = false;
        }
        if (r < 0) {
                /* A driver tracked is killed with the request (request_free()), one that is
                 * not was killed by request_track_driver(). */
                req->worker = worker_release(w);
                return request_fail_errno(req, r, "watch the userspace driver");
        }
        r = driverscope_start(req->manager->bus, req->manager->event, req->driver_pid,
                              req->fuse_driver->name, req->owner, &limits, on_scope_done, req,
                              &req->scope);
        if (r < 0)
                on_scope_done(r, req);
}

static void on_build_done(Worker *w, int r, const void *out, const UmError *error, int fd,
                          void *userdata) {
        Request *req = userdata;
        const BuildReply *reply = out;
        char what[320], label[256], note[IDMAP_MAX_EXTENTS * 72];
        UmError e = {};
        int fds[2];

        req->worker = worker_release(w);
        if (r >= 0 && build_reply_check(reply) < 0)
                r = reply_malformed(&error, &e);
        if (r < 0) {
                safe_close(fd);
                return request_fail(req, error);
        }
        if (reply->file_unsupported && !req->manager->erofs_file_unsupported) {
                log_info("This kernel cannot mount erofs images from their files "
                         "(CONFIG_EROFS_FS_BACKED_BY_FILE); they get loop devices.");
                req->manager->erofs_file_unsupported = true;
        }
        if (reply->file_backed)
                req->wants_loop = false;
        if (reply->loop_devnum != 0) {
                /* From now on the loop device is counted by what exists, not by the request. */
                r = looptrack_add(&req->manager->loops, (dev_t) reply->loop_devnum,
                                  reply->loop_diskseq, req->owner);
                if (r < 0) {
                        safe_close(fd);
                        return request_fail_errno(req, r, "record the loop device");
                }
                req->wants_loop = false;
        }
        /* The driver serves a mount now: it ends with the mount (drivertrack.h), no longer
         * with the request. */
        if (reply->driver_pid != 0 && (pid_t) reply->driver_pid == req->driver_pid)
                req->driver_pid = 0;
        /* The worker may have chosen "user" for a root directory that is not the caller's. */
        req->idmap.mode = (IdmapMode) reply->idmap_mode;
        r = request_make_record(req, reply);
        if (r < 0) {
                safe_close(fd);
                return request_fail_errno(req, r, "record the mount");
        }

        if (req->call.method != METHOD_OPEN_MOUNT) {
                _cleanup_free_ AttachJob *job = malloc(sizeof(AttachJob));

                req->mount_fd = fd;
                if (!job || request_attach_job(req, job) < 0)
                        return request_fail_errno(req, job ? -ENAMETOOLONG : -ENOMEM,
                                                  "start attaching the mount");
                fds[0] = req->mount_fd;
                fds[1] = req->call.caller.pidfd;
                return request_send_job_timeout(req, REQUEST_ATTACHING, JOB_ATTACH, job, fds, 2,
                                                true, on_attach_done);
        }

        r = bus_reply_open_mount(req->call.message, fd, req->record);
        safe_close(fd);
        if (r < 0)
                log_warning_errno(r, "Failed to send the mount to uid %u: %m",
                                  (unsigned) req->call.caller.uid);
        else
                log_request_mount(LOG_LEVEL_INFO, req->call.caller.uid, req->record->device,
                                  "open-mount", req->record->fstype, NULL,
                                  "Mounted %s (%s, label \"%s\") for uid %u as a detached "
                                  "locked mount%s.",
                                  request_what_mounted(req, what, sizeof(what)),
                                  req->probe.fstype,
                                  um_escape(req->probe.label, label, sizeof(label)),
                                  (unsigned) req->call.caller.uid,
                                  idmap_note(req->record, note, sizeof(note)));
        request_free(req);
}

static void on_attach_done(Worker *w, int r, const void *reply, const UmError *error,
                           int fd, void *userdata) {
        Request *req = userdata;
        const AttachResult *attach = reply;
        MountRecord *rec = req->record;
        char what[320], note[IDMAP_MAX_EXTENTS * 72];

        req->worker = worker_release(w);
        safe_close(fd);
        req->mount_fd = safe_close(req->mount_fd);
        if (r < 0)
                return request_fail(req, error);

        rec->mount_point = strndup(attach->mount_point, sizeof(attach->mount_point) - 1);
        if (!rec->mount_point)
                return request_fail_errno(req, -ENOMEM, "record the mount");
        rec->mntns_id = attach->mntns_id;
        rec->mount_id = attach->mount_id ?: rec->mount_id;
        rec->created_dir = attach->created_dir;
        /* A namespace of the caller's own user namespace (request_build() asked). */
        rec->private_ns = req->call.caller.uid != 0 && !req->idmap.own_root;

        r = manager_register_mount(req->manager, rec);
        if (r < 0) {
                /* Attached but not recorded: nobody could unmount it through us. Undo. */
                log_error_errno(r, "Failed to record the mount at %s: %m", rec->mount_point);
                DetachJob job;

                if (detach_job_init(&job, rec->mount_point, rec->mount_id, true,
                                  rec->created_dir) < 0)
                        return on_detach_undo_done(NULL, r, NULL, NULL, -EBADF, req);
                return request_send_job_timeout(req, REQUEST_DETACHING, JOB_DETACH, &job,
                                                &req->call.caller.pidfd, 1, true,
                                                on_detach_undo_done);
        }
        req->record = NULL; /* the registry owns it now */

        log_request_mount(LOG_LEVEL_INFO, req->call.caller.uid, rec->device, "mount", rec->fstype,
                          rec->mount_point, "Mounted %s (%s) for uid %u at %s%s.",
                          request_what_mounted(req, what, sizeof(what)), rec->fstype,
                          (unsigned) req->call.caller.uid, rec->mount_point,
                          idmap_note(rec, note, sizeof(note)));
        if (req->front) {
                req->front->mounted(req, rec);
                return (void) request_free(req);
        }
        r = bus_reply_mount(req->call.message, rec);
        if (r < 0)
                log_warning_errno(r, "Failed to reply to uid %u: %m",
                                  (unsigned) req->call.caller.uid);
        request_free(req);
}

static void on_detach_undo_done(Worker *w, int r, const void *reply, const UmError *error,
                                int fd, void *userdata) {
        Request *req = userdata;
        UmError e = {};

        req->worker = worker_release(w);
        safe_close(fd);
        um_error_set(&e, UM_ERROR_KIND_FAILED, EIO,
                     "The mount could not be recorded, so it was undone; see the daemon's log.");
        request_fail(req, &e);
}

/* Finds the registered mount at req->call.unmount_point in the caller's namespace. */
static void request_start_unmount(Request *req) {
        Manager *m = req->manager;
        MountRecord *rec;
        uint64_t mntns;
        UmError e = {};
        int r;

        r = mountns_id_of_process(req->call.caller.pidfd, req->call.caller.pid, &mntns);
        if (r < 0)
                return request_fail_errno(req, r, "find your mount namespace");
        /* By the path each mount has now: mounts follow their directories. */
        for (size_t i = 0; i < m->registry->n_records; i++)
                if (m->registry->records[i]->mntns_id == mntns &&
                    !reconcile_mount_busy(m, m->registry->records[i]))
                        (void) reconcile_follow(m, m->registry->records[i]);
        rec = registry_find_mount_point(m->registry, mntns, req->call.unmount_point);
        if (rec && req->unmount_devnum != 0 && rec->devnum != req->unmount_devnum)
                rec = NULL; /* another device's mount at that place (the UDisks2 front) */
        if (!rec || reconcile_mount_busy(m, rec)) {
                um_error_set(&e, UM_ERROR_KIND_NOT_MOUNTED, ENOENT,
                             "Nothing that usermount mounted is at %s.", req->call.unmount_point);
                return request_fail(req, &e);
        }
        req->unmount_id = rec->mount_id;
        req->unmount_remove_dir = rec->created_dir;
        if (req->call.caller.uid == 0 || rec->owner_uid == req->call.caller.uid)
                return request_detach(req);

        req->actions[0] = UM_ACTION_UNMOUNT_OTHERS;
        req->source_path = strdup(rec->device);
        request_authorize_next(req);
}

static void request_detach(Request *req) {
        DetachJob job;
        int r;

        r = detach_job_init(&job, req->call.unmount_point, req->unmount_id, req->call.force,
                          req->unmount_remove_dir);
        if (r < 0)
                return request_fail_errno(req, r, "start unmounting");
        request_send_job_timeout(req, REQUEST_DETACHING, JOB_DETACH, &job,
                                 &req->call.caller.pidfd, 1, true, on_detach_done);
}

static void on_detach_done(Worker *w, int r, const void *reply, const UmError *error,
                           int fd, void *userdata) {
        Request *req = userdata;
        MountRecord *rec;

        req->worker = worker_release(w);
        safe_close(fd);
        rec = registry_find_mount_id(req->manager->registry, req->unmount_id);
        if (r == -ENOENT && rec && reconcile_follow(req->manager, rec) == 0) {
                /* Already gone from its namespace: forget it, and say so. */
                manager_forget_mount(req->manager, rec);
                return request_fail(req, error);
        }
        if (r == -ENOENT && rec) {
                UmError e = {};
                char esc[256];

                /* Still mounted, somewhere else now: never forgotten while mounted. */
                um_error_set(&e, UM_ERROR_KIND_NOT_MOUNTED, ENOENT,
                             "The mount moved while it was being unmounted; it is at %s now.",
                             um_escape(rec->mount_point, esc, sizeof(esc)));
                return request_fail(req, &e);
        }
        if (r < 0)
                return request_fail(req, error);
        log_request_mount(LOG_LEVEL_INFO, req->call.caller.uid, rec ? rec->device : NULL,
                          "unmount", rec ? rec->fstype : NULL, req->call.unmount_point,
                          "Unmounted %s for uid %u.", req->call.unmount_point,
                          (unsigned) req->call.caller.uid);
        if (rec)
                manager_forget_mount(req->manager, rec);
        if (req->front)
                req->front->done(req);
        else
                (void) sd_bus_reply_method_return(req->call.message, "");
        request_free(req);
}

static void request_start_list(Request *req) {
        const char *const details[] = { NULL };
        int r;

        if (req->call.caller.uid == 0) {
                on_list_authorized(0, NULL, req);
                return;
        }
        const AuthorizeSubject subject = authorize_subject_of(&req->call.caller);
        r = authorize_check_async(req->manager->bus, &subject, UM_ACTION_UNMOUNT_OTHERS,
                                  details, false, on_list_authorized, req, &req->polkit_slot);
        if (r < 0)
                on_list_authorized(r, NULL, req);
}

static void on_list_authorized(int r, const UmError *error, void *userdata) {
        Request *req = userdata;

        req->polkit_slot = sd_bus_slot_unref(req->polkit_slot);
        /* No authorization for others' mounts is not an error: the caller sees its own. */
        req->list_all = r >= 0;
        for (size_t i = 0; req->manager->registry && i < req->manager->registry->n_records; i++) {
                MountRecord *rec = req->manager->registry->records[i];

                if ((req->list_all || rec->owner_uid == req->call.caller.uid) &&
                    !reconcile_mount_busy(req->manager, rec))
                        (void) reconcile_follow(req->manager, rec);
        }
        if (req->call.method == METHOD_SUBSCRIBE)
                r = bus_reply_subscribe(req->call.message, &req->manager->subscribers,
                                        req->list_all);
        else
                r = bus_reply_list_mounts(req->call.message, req->manager->registry,
                                          req->call.caller.uid, req->list_all);
        if (r < 0) {
                log_warning_errno(r, "Failed to reply to %s: %m",
                                  req->call.method == METHOD_SUBSCRIBE ? "Subscribe" :
                                                                         "ListMounts");
                (void) sd_bus_reply_method_errno(req->call.message, r, NULL);
        }
        request_free(req);
}

/* What the caller is told when the job of stage does not finish in time: what did not
 * answer, as far as the daemon can tell. */
static const char *request_timeout_message(const Request *req, RequestStage stage,
                                           JobType type, uint64_t timeout_usec, char *buf,
                                           size_t size) {
        const unsigned sec = (unsigned) ((timeout_usec + 999999) / 1000000);

        switch (stage) {
        case REQUEST_PROBING:
                snprintf(buf, size, "The source did not answer within %u s (a device that does "
                         "not respond, or a file on a FUSE or network filesystem whose server "
                         "does not answer); the request was cancelled.", sec);
                break;
        case REQUEST_BUILDING:
                /* The driver's own start ends in time, killed by its worker if need be
                 * (JobDriver.start_deadline): what was late is the source, read again
                 * before the start. */
                if (type == JOB_START_DRIVER)
                        snprintf(buf, size, "The source did not answer within %u s while the "
                                 "filesystem driver %s was being started (a file on a FUSE or "
                                 "network filesystem whose server does not answer?); the "
                                 "request was cancelled.", sec,
                                 req->fuse_driver->path ?: req->fuse_driver->name);
                else if (req->fuse_driver)
                        snprintf(buf, size, "The filesystem driver %s did not answer within "
                                 "%u s; it was stopped, and nothing was mounted.",
                                 req->fuse_driver->path ?: req->fuse_driver->name, sec);
                else
                        snprintf(buf, size, "The device did not answer within %u s while it was "
                                 "being mounted; the request was cancelled.", sec);
                break;
        case REQUEST_ATTACHING:
                snprintf(buf, size, "The mount could not be attached within %u s (the "
                         "filesystem of the target directory does not answer?); the request "
                         "was cancelled.", sec);
                break;
        default:
                snprintf(buf, size, "The unmount did not finish within %u s (the filesystem "
                         "does not answer?); the request was cancelled.", sec);
                break;
        }
        return buf;
}

/*
 * Sends req's next job (jobproto.h): to the worker that probed for it, which waits for it,
 * else to a fresh one from the pool. last: the worker exits after it (and its reply is
 * handed on once it has).
 */
static void request_send_job(Request *req, RequestStage stage, JobType type, const void *input,
                             const int *fds, size_t n_fds, bool last, uint64_t timeout_usec,
                             WorkerDone done) {
        char timeout_message[UM_ERROR_MESSAGE_MAX];
        const WorkerJob job = {
                .layout = *job_layout(type),
                .input = input,
                .fds = fds,
                .n_fds = n_fds,
                .last = last,
                .timeout_usec = timeout_usec,
                .timeout_message = request_timeout_message(req, stage, type, timeout_usec,
                                                           timeout_message,
                                                           sizeof(timeout_message)),
        };
        UmError error = {};
        int r;

        request_set_state(req, stage);
        r = limitcount_check_workers(req, &error);
        if (r < 0)
                return request_fail(req, &error);
        r = -ECHILD;
        if (req->worker && worker_get_state(req->worker) == WORKER_WAITING)
                r = worker_send(req->worker, &job, done, req);
        if (r < 0) {
                /* None, or it died while polkit was asked: a fresh one does the same. */
                req->worker = worker_release(req->worker);
                r = worker_start(req->manager->workers, &job, done, req, &req->worker);
        }
        if (r < 0)
                return request_fail_errno(req, r, "start a worker");
        worker_set_owner(req->worker, req->owner);
        worker_set_unauthorized(req->worker, req->unauthorized);
}

void request_send_job_timeout(Request *req, RequestStage stage, JobType type,
                              const void *input, const int *fds, size_t n_fds, bool last,
                              WorkerDone done) {
        request_send_job(req, stage, type, input, fds, n_fds, last,
                         req->conf->limits.request_timeout_usec, done);
}

static void job_caller(const Request *req, JobCaller *c) {
        *c = (JobCaller) {
                .uid = req->call.caller.uid,
                .gid = req->call.caller.gid,
                .gid_known = req->call.caller.gid_known,
        };
        /* A longer name than any system allows (LOGIN_NAME_MAX) reads as no name: the
         * subuid lookup then goes by uid alone. */
        (void) JOB_SET_STRING(c->user_name, req->call.caller.user_name);
}

/* What the build worker needs: the source, the decided options and id-mapping, and the
 * values of the configuration that the build reads (the image check). */
static int request_build_job(Request *req, BuildJob *j) {
        const Conf *c = req->conf;
        int r;

        *j = (BuildJob) {
                .source = req->source,
                .probe = req->probe,
                .partition = req->partition,
                .idmap = req->idmap,
                .check = {
                        .enabled = c->image_check,
                        .uid = c->image_check_uid,
                        .gid = c->image_check_gid,
                        .uid_first = c->image_check_uid_first,
                        .uid_count = c->image_check_uid_count,
                        .timeout_usec = c->image_check_timeout_usec,
                },
        };
        r = job_options_pack(&req->mount_options, &j->options);
        if (r < 0)
                return r;
        j->driver = (JobDriver) {
                .kind = req->driver.driver,
                .uid_first = c->driver_uid_first,
                .uid_count = c->driver_uid_count,
                /* Half the request's time for the driver's start: the rest for the build. */
                .timeout_usec = c->limits.request_timeout_usec / 2,
                /* START_DRIVER's time (request_build()), less a margin for the reply. */
                .start_deadline = now_usec(CLOCK_MONOTONIC) + c->limits.request_timeout_usec -
                                  MIN(c->limits.request_timeout_usec / 4, UINT64_C(1000000)),
                .files_as_caller = req->files_as_caller,
                .memory_max = c->limits.driver_memory_max,
                .tasks_max = c->limits.driver_tasks_max,
                .cpu_sec = c->limits.driver_cpu_sec,
        };
        j->from_file = erofs_from_file(req->manager, req->probe.fstype);
        j->loop_allowed = req->wants_loop;
        if ((req->fuse_driver && JOB_SET_STRING(j->driver.name, req->fuse_driver->name) < 0) ||
            JOB_SET_STRING(j->source_path, request_source_path(req)) < 0 ||
            JOB_SET_STRING(j->runtime_dir, req->manager->runtime_dir) < 0)
                return -ENAMETOOLONG;
        return 0;
}

/* What the attach worker needs: the caller and where the mount goes. */
static int request_attach_job(Request *req, AttachJob *j) {
        *j = (AttachJob) { .uid = req->call.caller.uid, .gid = req->call.caller.gid };
        if (JOB_SET_STRING(j->target, req->call.params.target) < 0 ||
            JOB_SET_STRING(j->media_root, req->conf->media_root) < 0 ||
            JOB_SET_STRING(j->user_name, req->call.caller.user_name) < 0 ||
            JOB_SET_STRING(j->label, req->probe.label) < 0 ||
            JOB_SET_STRING(j->uuid, req->probe.uuid) < 0)
                return -ENAMETOOLONG;
        return 0;
}

/*
 * The "device" of an image mounted from its file: the file's path as escaped for
 * backing-file, cut to what the registry keeps (an absolute path shorter than PATH_MAX),
 * never within a UTF-8 sequence. For showing only, like backing-file.
 */
static char *file_device(const char *escaped) {
        size_t n = strnlen(escaped, PATH_MAX - 2);

        while (n > 0 && ((unsigned char) escaped[n] & 0xC0) == 0x80)
                n--;
        if (escaped[0] == '/')
                return strndup(escaped, n);
        char *p = malloc(n + 2);

        if (p) {
                p[0] = '/';
                memcpy(p + 1, escaped, n);
                p[n + 1] = 0;
        }
        return p;
}

/* The record of what was built for req (not yet attached or registered). */
static int request_make_record(Request *req, const BuildReply *reply) {
        _cleanup_(mount_record_freep) MountRecord *rec = calloc(1, sizeof(MountRecord));
        char label[1024], path[4096 * 4];
        struct timespec ts;

        path[0] = 0;
        if (!rec)
                return -ENOMEM;
        clock_gettime(CLOCK_REALTIME, &ts);
        rec->mount_id = reply->mount_id;
        /* Everything from a device or a caller's file system is stored escaped: the registry
         * and the bus carry only valid UTF-8 without control characters. */
        rec->backing_file = reply->backing_file[0] ?
                strdup(um_escape(reply->backing_file, path, sizeof(path))) : NULL;
        /* Mounted from its file, an image has no device but itself: its path. */
        rec->file_backed = reply->file_backed;
        /* So has an image a userspace driver serves. */
        rec->device = rec->file_backed || (req->fuse_driver && !reply->device[0]) ?
                file_device(path) : strdup(um_escape(reply->device, label, sizeof(label)));
        rec->owner_uid = req->call.caller.uid;
        rec->fstype = strdup(um_escape(req->probe.fstype, label, sizeof(label)));
        rec->label = strdup(um_escape(req->probe.label, label, sizeof(label)));
        rec->uuid = strdup(um_escape(req->probe.uuid, label, sizeof(label)));
        rec->partition = req->partition.number;
        /* A userspace driver gets none of the kernel driver's options. */
        rec->options = req->fuse_driver ? strdup("") :
                mount_options_to_string(&req->mount_options);
        rec->attr_set = req->mount_options.attr_set;
        rec->idmap = strdup(idmap_mode_to_string(req->idmap.mode));
        rec->driver = strdup(driver_kind_name(req->driver.driver));
        if (req->fuse_driver) {
                rec->driver_name = strdup(req->fuse_driver->name);
                rec->driver_pid = reply->driver_pid;
                rec->driver_start = reply->driver_start;
                rec->driver_uid = reply->driver_uid;
                if (!rec->driver_name)
                        return -ENOMEM;
        }
        if (req->idmap.mode != IDMAP_NONE && !req->fuse_driver) {
                char map[IDMAP_MAX_EXTENTS * 36];

                rec->attr_set |= MOUNT_ATTR_IDMAP;
                if (idmap_to_string(&reply->uid_map, map, sizeof(map)) < 0 ||
                    !(rec->idmap_uid_map = strdup(map)) ||
                    idmap_to_string(&reply->gid_map, map, sizeof(map)) < 0 ||
                    !(rec->idmap_gid_map = strdup(map)))
                        return -ENOMEM;
        }
        rec->created_usec = (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
        if (!rec->device || (reply->backing_file[0] && !rec->backing_file) || !rec->fstype ||
            !rec->label || !rec->uuid || !rec->options || !rec->idmap || !rec->driver)
                return -ENOMEM;
        if (req->source.type == SOURCE_BLOCK_DEVICE)
                rec->devnum = req->source.rdev;
        else if (!rec->file_backed) {
                struct stat st;

                if (!req->fuse_driver && stat(rec->device, &st) == 0 && S_ISBLK(st.st_mode))
                        rec->devnum = st.st_rdev;
        }
        req->record = TAKE_PTR(rec);
        return 0;
}

/* What was mounted, escaped, for the log: the source, or "partition 2 of /home/u/vm.img". */
static const char *request_what_mounted(const Request *req, char *buf, size_t size) {
        char what[256];

        um_escape(request_what(req), what, sizeof(what));
        if (req->partition.number > 0)
                snprintf(buf, size, "partition %u of %s", req->partition.number, what);
        else
                snprintf(buf, size, "%s", what);
        return buf;
}

/* ", id-mapped (namespace: uids 0:1000:1, gids 0:1000:1)" for the log, or "". */
static const char *idmap_note(const MountRecord *rec, char *buf, size_t size) {
        if (!rec->idmap_uid_map)
                return "";
        snprintf(buf, size, ", id-mapped (%s: uids %s, gids %s)", strempty(rec->idmap),
                 rec->idmap_uid_map, strempty(rec->idmap_gid_map));
        return buf;
}





