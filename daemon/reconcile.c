/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watching the registered mounts (reconcile.h): a mount may be unmounted or moved by its
 * owner, or lose its device; the registry follows what the kernel says, on events
 * (mountinfo changes, udev's removals) and on a timer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "request.h"
#include "jobproto.h"
#include "log.h"
#include "loopmark.h"
#include "manager.h"
#include "mountns.h"
#include "pathcheck.h"
#include "reconcile.h"
#include "utf8.h"

typedef struct Cleanup {
        Manager *manager;
        Worker *worker;
        uint64_t mount_id;
        char *mount_point;
        int pidfd;
} Cleanup;

static Cleanup *cleanup_free(Cleanup *c) {
        if (!c)
                return NULL;
        worker_release(c->worker);
        safe_close(c->pidfd);
        free(c->mount_point);
        c->manager->n_cleanups--;
        free(c);
        return NULL;
}

/* An Unmount of it, or the detach after its device went, is under way: the outcome is
 * theirs to report (a reconcile meanwhile would call their own unmount "outside"). */
bool reconcile_mount_busy(Manager *m, const MountRecord *rec) {
        if (rec->detaching)
                return true;
        for (Request *r = m->requests; r; r = r->next)
                if (r->call.method == METHOD_UNMOUNT && r->unmount_id == rec->mount_id)
                        return true;
        return false;
}

static void on_cleanup_done(Worker *w, int r, const void *reply, const UmError *error,
                            int fd, void *userdata) {
        Cleanup *c = userdata;
        MountRecord *rec;

        c->worker = worker_release(w);
        safe_close(fd);
        rec = registry_find_mount_id(c->manager->registry, c->mount_id);
        if (r < 0 && r != -ENOENT)
                log_request_mount(LOG_LEVEL_WARNING, rec ? rec->owner_uid : LOG_UID_NONE,
                                  rec ? rec->device : NULL, "vanished", rec ? rec->fstype : NULL,
                                  c->mount_point,
                                  "Could not detach %s after its device went away: %s",
                                  c->mount_point, error ? error->message : "unknown error");
        if (rec)
                manager_forget_mount(c->manager, rec);
        cleanup_free(c);
}

/* The device of rec is gone: detach the mount lazily in its namespace, then forget it. */
static void reconcile_detach_vanished(Manager *m, MountRecord *rec) {
        Cleanup *c;
        int pidfd = -EBADF, r;

        if (reconcile_mount_busy(m, rec))
                return;
        r = mountns_find_process(rec->mntns_id, &pidfd);
        if (r < 0) {
                /* Nobody lives there any more: the namespace and the mount go with the last fd. */
                manager_forget_mount(m, rec);
                return;
        }
        c = calloc(1, sizeof(*c));
        if (c)
                c->mount_point = strdup(rec->mount_point);
        if (!c || !c->mount_point) {
                free(c);
                safe_close(pidfd);
                return;
        }
        c->manager = m;
        m->n_cleanups++;
        c->mount_id = rec->mount_id;
        c->pidfd = pidfd;
        log_request_mount(LOG_LEVEL_INFO, rec->owner_uid, rec->device, "vanished", rec->fstype,
                          rec->mount_point, "The device of %s went away; detaching the mount.",
                          rec->mount_point);
        DetachJob job;
        r = detach_job_init(&job, c->mount_point, rec->mount_id, true, rec->created_dir);
        if (r >= 0)
                r = worker_start(m->workers,
                                 &(const WorkerJob) {
                                         .layout = *job_layout(JOB_DETACH),
                                         .input = &job,
                                         .fds = &c->pidfd,
                                         .n_fds = 1,
                                         .last = true,
                                         .timeout_usec = m->conf->limits.request_timeout_usec,
                                 },
                                 on_cleanup_done, c, &c->worker);
        if (r < 0)
                cleanup_free(c);
        else
                rec->detaching = true;
}

/*
 * true while the block device (and, for loop devices, its backing file) is still there:
 * sysfs still has the device, under the same number (a removed device's number can be
 * reused, its directory cannot outlive it). Always for an image mounted from its file.
 */
static bool record_device_present(const MountRecord *rec) {
        char path[128], want[32], have[32] = "";
        _cleanup_(fclosep) FILE *f = NULL;
        struct stat st;

        /* A userspace driver's mount is there while its driver runs: a dead one answers
         * nothing but ENOTCONN. */
        if (rec->driver_pid)
                return drivertrack_alive((pid_t) rec->driver_pid, rec->driver_start);
        /* An image mounted from its file has no device to lose: the superblock holds the
         * file open, which no rename or unlink of its name takes away. */
        if (rec->file_backed)
                return true;
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/dev", major((dev_t) rec->devnum),
                 minor((dev_t) rec->devnum));
        snprintf(want, sizeof(want), "%u:%u\n", major((dev_t) rec->devnum),
                 minor((dev_t) rec->devnum));
        f = fopen(path, "re");
        if (!f || !fgets(have, sizeof(have), f) || !streq(have, want))
                return false;
        if (!rec->backing_file)
                return true;
        /* A loop device whose backing file was detached has no loop/backing_file. */
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file",
                 major((dev_t) rec->devnum), minor((dev_t) rec->devnum));
        return stat(path, &st) == 0;
}

/*
 * Follows a mount whose mount point was renamed or moved (from any mount namespace: the
 * mount goes with its directory): the record takes the path the kernel reports now, so
 * that the mount stays listed and unmountable. A directory the daemon made is no longer
 * its to remove once it moved. Returns statmount's answer: 1 mounted, 0 gone, -errno.
 */
int reconcile_follow(Manager *m, MountRecord *rec) {
        _cleanup_free_ char *now = NULL;
        char old_esc[256], now_esc[256];
        int r;

        r = mountns_mount_exists(rec->mntns_id, rec->mount_id, &now);
        if (r <= 0 || !now || streq(now, rec->mount_point))
                return r;
        /* A caller in a chroot gave its path from its root; the kernel's is from the
         * namespace's, with the chroot in front: not a move. */
        if (strlen(now) > strlen(rec->mount_point) &&
            streq(now + strlen(now) - strlen(rec->mount_point), rec->mount_point))
                return r;
        /* A path the registry could not keep (too long, not UTF-8, controls): the mount is
         * still tracked by its id, under the path it had. */
        if (strlen(now) >= PATH_MAX || !utf8_is_valid(now) || path_has_control_characters(now))
                return r;
        log_request_mount(LOG_LEVEL_INFO, rec->owner_uid, rec->device, "moved", rec->fstype,
                          now, "%s was moved to %s; following it.",
                          um_escape(rec->mount_point, old_esc, sizeof(old_esc)),
                          um_escape(now, now_esc, sizeof(now_esc)));
        free(rec->mount_point);
        rec->mount_point = TAKE_PTR(now);
        rec->created_dir = false;
        r = registry_save(m->registry);
        if (r < 0)
                log_warning_errno(r, "Failed to save the registry: %m");
        return 1;
}

void reconcile_all(Manager *m) {
        /* The limits count loop devices in memory: forget those released meanwhile. */
        (void) looptrack_prune(&m->loops);
        if (!m->registry)
                return;
        for (size_t i = m->registry->n_records; i > 0; i--) {
                MountRecord *rec = m->registry->records[i - 1];
                int r;

                if (reconcile_mount_busy(m, rec))
                        continue;
                r = reconcile_follow(m, rec);
                if (r == -ENOSYS && !m->warned_no_statmount) {
                        log_warning("statmount() is refused here (an old kernel, or a seccomp "
                                    "filter that does not know it): mounts unmounted behind "
                                    "usermount's back stay registered until their device "
                                    "goes away.");
                        m->warned_no_statmount = true;
                }
                if (r == 0) {
                        log_request_mount(LOG_LEVEL_INFO, rec->owner_uid, rec->device,
                                          "forget", rec->fstype, rec->mount_point,
                                          "%s was unmounted outside usermount; forgetting it.",
                                          rec->mount_point);
                        manager_forget_mount(m, rec);
                } else if (!record_device_present(rec))
                        /* Mounted, or unknown: a device that is gone is gone either way, and
                         * the detach looks for the mount itself. */
                        reconcile_detach_vanished(m, rec);
        }
        /* Marks of loop devices that were released (OpenMount's too) go with them. */
        loop_sweep_marks(m->runtime_dir);
}

static int on_mountinfo_changed(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        reconcile_all(userdata);
        return 0;
}

static int on_reconcile_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        reconcile_all(m);
        return sd_event_source_set_time_relative(s, m->watch_interval_usec);
}

static int on_device_event(sd_device_monitor *monitor, sd_device *device, void *userdata) {
        sd_device_action_t action;

        if (sd_device_get_action(device, &action) >= 0 && action == SD_DEVICE_REMOVE)
                reconcile_all(userdata);
        return 0;
}

/* A driver exited: a registered mount it served is dead now (reconcile detaches it). */
static void on_driver_exit(DriverTrack *t, pid_t pid, uint64_t start, void *userdata) {
        Manager *m = userdata;

        log_debug("Userspace driver %d exited.", (int) pid);
        reconcile_all(m);
}

/* Block device removals as udevd announces them; only where udevd runs (its control socket). */
static int watch_devices(Manager *m) {
        int r;

        if (access("/run/udev/control", F_OK) < 0)
                return 0;
        r = sd_device_monitor_new(&m->device_monitor);
        if (r >= 0)
                r = sd_device_monitor_filter_add_match_subsystem_devtype(m->device_monitor,
                                                                         "block", NULL);
        if (r >= 0)
                r = sd_device_monitor_attach_event(m->device_monitor, m->event);
        if (r >= 0)
                r = sd_device_monitor_start(m->device_monitor, on_device_event, m);
        if (r < 0) {
                /* The timer below still notices removals, a little later. */
                log_warning_errno(r, "Failed to watch block devices through udev: %m");
                m->device_monitor = sd_device_monitor_unref(m->device_monitor);
        }
        return 0;
}

/*
 * Watches registered mounts: POLLPRI on /proc/self/mountinfo reports changes in the
 * daemon's own namespace (the host's, for desktop mounts) at once; udevd's device monitor
 * reports removed devices at once where udevd runs; a timer (--watch-interval) covers
 * other namespaces and systems without udevd (like containers). A userspace driver that
 * exits leaves a dead mount: its exit watch (drivertrack.h) reconciles too.
 */
int reconcile_watch(Manager *m) {
        int fd, r;

        m->drivers.on_exit = on_driver_exit;
        m->drivers.userdata = m;
        (void) watch_devices(m);

        fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = sd_event_add_io(m->event, &m->mountinfo_watch, fd, EPOLLPRI, on_mountinfo_changed, m);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        (void) sd_event_source_set_io_fd_own(m->mountinfo_watch, true);
        if (m->watch_interval_usec == 0)
                return 0;
        r = sd_event_add_time_relative(m->event, &m->reconcile_timer, CLOCK_MONOTONIC,
                                       m->watch_interval_usec, 0, on_reconcile_timer, m);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(m->reconcile_timer, SD_EVENT_ON);
}
