/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front's methods (udisks-front.h): Filesystem.Mount and Unmount become
 * requests of usermount's own pipeline (the same caller identity, limits, probe, policy,
 * polkit, locked flags, id-mapping, registry and journal as a Mount of
 * org.freedesktop.UserMount1), answered in udisks' words; the errors as udisks names
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include "caller.h"
#include "jobproto.h"
#include "log.h"
#include "mountns.h"
#include "pipeline.h"
#include "removable.h"
#include "request-dbus.h"
#include "request.h"
#include "udisks-front.h"

#define UDISKS_ERROR "org.freedesktop.UDisks2.Error."

int udisks_reply_error(sd_bus_message *m, const UmError *error) {
        const char *name;

        switch (error->kind) {
        case UM_ERROR_KIND_NOT_AUTHORIZED:
                name = error->error == ECANCELED ? UDISKS_ERROR "NotAuthorizedDismissed"
                                                 : UDISKS_ERROR "NotAuthorized";
                break;
        case UM_ERROR_KIND_NOT_AUTHORIZED_CAN_OBTAIN:
                name = UDISKS_ERROR "NotAuthorizedCanObtain";
                break;
        case UM_ERROR_KIND_DEVICE_BUSY:
                name = UDISKS_ERROR "DeviceBusy";
                break;
        case UM_ERROR_KIND_NOT_MOUNTED:
                name = UDISKS_ERROR "NotMounted";
                break;
        case UM_ERROR_KIND_OPTION_NOT_ALLOWED:
                name = UDISKS_ERROR "OptionNotPermitted";
                break;
        default:
                name = UDISKS_ERROR "Failed";
                break;
        }
        return sd_bus_reply_method_errorf(m, name, "%s", error->message);
}

int udisks_reply_not_supported(sd_bus_message *m, const char *what) {
        return sd_bus_reply_method_errorf(m, UDISKS_ERROR "NotSupported",
                                          "usermount's UDisks2 service does not support %s: "
                                          "it mounts and unmounts filesystems, sets up loop "
                                          "devices and ejects drives, and nothing else.",
                                          what);
}

/* ---- options -------------------------------------------------------------------------- */

int udisks_read_options(sd_bus_message *m, UDisksOptions *o, UmError *error) {
        const char *key;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *want = NULL, *contents = NULL;
                int b = 0;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "fstype") || streq(key, "options"))
                        want = "s";
                else if (streq(key, "auth.no_user_interaction") || streq(key, "force") ||
                         streq(key, "read-only"))
                        want = "b";
                else if (streq(key, "offset") || streq(key, "size"))
                        want = "t";
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                if (want && !streq(contents, want)) {
                        char esc[64];

                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "Option '%s' must be of type '%s'.",
                                            um_escape(key, esc, sizeof(esc)), want);
                }
                if (!want)
                        r = sd_bus_message_skip(m, "v");
                else if (want[0] == 's')
                        r = sd_bus_message_read(m, "v", "s",
                                                streq(key, "fstype") ? &o->fstype : &o->options);
                else if (want[0] == 't')
                        r = sd_bus_message_read(m, "v", "t",
                                                streq(key, "offset") ? &o->offset : &o->size);
                else {
                        r = sd_bus_message_read(m, "v", "b", &b);
                        if (streq(key, "force"))
                                o->force = b;
                        else if (streq(key, "read-only"))
                                o->read_only = b;
                        else
                                o->no_interaction = b;
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int udisks_translate_options(const char *in, MountParams *params, char **ret) {
        _cleanup_free_ char *copy = strdup(in ?: ""), *out = calloc(1, strlen(in ?: "") + 1);
        char *save = NULL;

        if (!copy || !out)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (streq(t, "ro"))
                        params->read_only = true;
                else if (streq(t, "exec"))
                        params->exec = true;
                else if (streq(t, "rw") || streq(t, "nodev") || streq(t, "nosuid") ||
                         streq(t, "noexec") || streq(t, "flush"))
                        continue;
                else {
                        if (out[0])
                                strcat(out, ",");
                        strcat(out, t);
                }
        }
        *ret = TAKE_PTR(out);
        return 0;
}

/* ---- answers -------------------------------------------------------------------------- */

static void front_mounted(Request *req, const MountRecord *rec) {
        /* MountPoints went out already (manager_register_mount()): clients that read it on
         * this reply find it. */
        (void) sd_bus_reply_method_return(req->call.message, "s", rec->mount_point);
}

static void front_done(Request *req) {
        (void) sd_bus_reply_method_return(req->call.message, "");
}

static void front_failed(Request *req, const UmError *error) {
        (void) udisks_reply_error(req->call.message, error);
}

static const RequestFront udisks_request_front = {
        .mounted = front_mounted,
        .done = front_done,
        .failed = front_failed,
        .loop_set_up = udisks_loops_set_up,
};

/* Unmount: the registered mount of the device in the caller's mount namespace, if it has
 * one there (a mount of the same device elsewhere, or another device's mount at the same
 * path there, is not the one asked for). */
static void pick_unmount_point(Request *req) {
        const Registry *reg = req->manager->registry;
        uint64_t mntns;

        if (mountns_id_of_process(req->call.caller.pidfd, req->call.caller.pid, &mntns) < 0)
                return;
        for (size_t i = 0; i < reg->n_records; i++) {
                const MountRecord *rec = reg->records[i];
                char *p;

                if (rec->devnum != req->unmount_devnum || rec->mntns_id != mntns ||
                    !rec->mount_point || !(p = strdup(rec->mount_point)))
                        continue;
                free(req->call.unmount_point);
                req->call.unmount_point = p;
                return;
        }
}

static void on_caller_known(void *userdata, int r, const UmError *error) {
        Request *req = userdata;

        if (r == -ECANCELED && !error) {
                request_free(req); /* never answered by the bus: usermountd is stopping */
                return;
        }
        if (r < 0) {
                log_request(LOG_LEVEL_INFO, LOG_UID_NONE, NULL, "refuse",
                            "Refused UDisks2 %s from %s: %s",
                            sd_bus_message_get_member(req->call.message),
                            strempty(sd_bus_message_get_sender(req->call.message)),
                            error->message);
                (void) udisks_reply_error(req->call.message, error);
                request_free(req);
                return;
        }
        if (req->call.method == METHOD_UNMOUNT)
                pick_unmount_point(req);
        pipeline_start(req);
}

int udisks_start_request(UDisksFront *f, Request *req) {
        req->front = &udisks_request_front;
        req->front_data = f;
        caller_identify(f->manager->callers, &req->call, on_caller_known, req);
        return 1;
}

/* ---- Filesystem ----------------------------------------------------------------------- */

/* Mount's and Unmount's start: the options read (a refusal answered: 0) and the device's
 * mount points now (*ret_points, never NULL on 1). */
static int read_filesystem_call(sd_bus_message *m, UDisksFront *f, const UDisksBlock *b,
                                UDisksOptions *o, const char ***ret_points) {
        UmError e = {};
        int r;

        r = udisks_read_options(m, o, &e);
        if (r < 0 && e.kind)
                return udisks_reply_error(m, &e) < 0 ? -EIO : 0;
        if (r < 0)
                return r;
        *ret_points = udisks_front_mount_points(f, b, true);
        return *ret_points ? 1 : -ENOMEM;
}

int udisks_method_mount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UDisksFront *f = udisks_front_current();
        UDisksBlock *b = userdata;
        _cleanup_(request_freep) Request *req = NULL;
        _cleanup_free_ const char **points = NULL;
        _cleanup_free_ char *fs_options = NULL;
        UDisksOptions o = {};
        UmError e = {};
        int r;

        r = read_filesystem_call(m, f, b, &o, &points);
        if (r <= 0)
                return r < 0 ? r : 1; /* refused, and answered */
        if (points[0])
                return sd_bus_reply_method_errorf(m, UDISKS_ERROR "AlreadyMounted",
                                                  "Device %s is already mounted at `%s'.",
                                                  b->device, udisks_front_mounted_where(f, b));
        req = request_new(f->manager, METHOD_MOUNT, m);
        if (!req)
                return -ENOMEM;
        /* A loop device it set up for a user (LoopSetup) is that user's image. */
        UDisksLoop *loop = udisks_loops_find(f, b->devnum);
        if (loop) {
                req->loop_setup_by = loop->uid;
                req->loop_diskseq = loop->diskseq;
        }
        r = udisks_translate_options(o.options, &req->call.params, &fs_options);
        if (r < 0)
                return r;
        req->call.params.interactive = !o.no_interaction;
        /* udisks' "auto" is usermount's "": the probe says what the filesystem is. */
        r = call_set_mount_args(&req->call, req->conf, b->device,
                                o.fstype && !streq(o.fstype, "auto") ? o.fstype : "",
                                fs_options, &e);
        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        return udisks_start_request(f, TAKE_PTR(req));
}

int udisks_method_unmount(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        UDisksFront *f = udisks_front_current();
        UDisksBlock *b = userdata;
        _cleanup_(request_freep) Request *req = NULL;
        _cleanup_free_ const char **points = NULL;
        UDisksOptions o = {};
        int r;

        r = read_filesystem_call(m, f, b, &o, &points);
        if (r <= 0)
                return r < 0 ? r : 1; /* refused, and answered */
        if (!points[0])
                return sd_bus_reply_method_errorf(m, UDISKS_ERROR "NotMounted",
                                                  "Device `%s' is not mounted", b->device);
        req = request_new(f->manager, METHOD_UNMOUNT, m);
        if (!req)
                return -ENOMEM;
        /* The mount of this device in the caller's namespace, once the caller is known
         * (on_caller_known()); any until then. */
        req->call.unmount_point = strdup(points[0]);
        if (!req->call.unmount_point)
                return -ENOMEM;
        req->unmount_devnum = (uint64_t) b->devnum;
        req->call.force = o.force;
        req->call.params.interactive = !o.no_interaction;
        return udisks_start_request(f, TAKE_PTR(req));
}

/* ---- Loop, Drive, Manager.LoopSetup --------------------------------------------------- */

/* ---- Drive.Eject, Drive.PowerOff ------------------------------------------------------- */

/* As udisks2: refused while a filesystem of the drive is mounted; then, once polkit said
 * yes, a worker flushes every device of the drive and ejects the medium or powers the
 * drive off. */
static int drive_call(sd_bus_message *m, UDisksDrive *d, bool power_off) {
        UDisksFront *f = udisks_front_current();
        _cleanup_(request_freep) Request *req = NULL;
        _cleanup_free_ DriveEjectJob *job = calloc(1, sizeof(DriveEjectJob));
        const UDisksBlock *disk = NULL;
        UDisksOptions o = {};
        UmError e = {};
        int r;

        if (!job)
                return -ENOMEM;
        r = udisks_read_options(m, &o, &e);
        if (r < 0)
                return e.kind ? udisks_reply_error(m, &e) : r;
        for (size_t i = 0; i < f->n_blocks; i++) {
                const UDisksBlock *b = f->blocks[i];
                _cleanup_free_ const char **points = NULL;

                if (!streq(b->disk, d->disk))
                        continue;
                points = udisks_front_mount_points(f, b, true);
                if (!points)
                        return -ENOMEM;
                if (points[0])
                        return sd_bus_reply_method_errorf(m, UDISKS_ERROR "DeviceBusy",
                                                          "Cannot %s drive in use: Device %s is "
                                                          "mounted at %s.",
                                                          power_off ? "power off" : "eject",
                                                          b->device,
                                                          udisks_front_mounted_where(f, b));
                if (job->n_devices >= JOB_EJECT_MAX_DEVICES)
                        return sd_bus_reply_method_errorf(m, UDISKS_ERROR "Failed",
                                                          "The drive has too many devices.");
                /* The binding polkit is asked about: the worker refuses another one. */
                (void) looptrack_diskseq(b->devnum, &job->diskseqs[job->n_devices]);
                job->devices[job->n_devices++] = (uint64_t) b->devnum;
                if (streq(b->name, b->disk))
                        disk = b;
        }
        if (!disk)
                return sd_bus_reply_method_errorf(m, UDISKS_ERROR "Failed",
                                                  "Unable to find block device for drive");
        job->disk = (uint64_t) disk->devnum;
        (void) looptrack_diskseq(disk->devnum, &job->disk_diskseq);
        job->power_off = power_off;
        req = request_new(f->manager, METHOD_DRIVE_EJECT, m);
        if (!req)
                return -ENOMEM;
        req->source.type = SOURCE_BLOCK_DEVICE;
        req->source.rdev = disk->devnum;
        req->source.removable = removable_check(f->sysfs_fd, disk->devnum, NULL) > 0;
        req->source_path = strdup(disk->device);
        if (!req->source_path)
                return -ENOMEM;
        req->eject_job = TAKE_PTR(job);
        req->call.params.interactive = !o.no_interaction;
        return udisks_start_request(f, TAKE_PTR(req));
}

int udisks_method_eject(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return drive_call(m, userdata, false);
}

int udisks_method_power_off(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return drive_call(m, userdata, true);
}
