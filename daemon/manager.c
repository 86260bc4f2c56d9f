/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager's objects made, loaded at start and freed (manager.h): the configuration
 * and its reloads, the runtime directory, the worker pool and the stage namespace, the
 * registry with the loop devices and drivers of its mounts.
 */
#include <assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "caller.h"
#include "config.h"
#include "jobproto.h"
#include "log.h"
#include "loopmark.h"
#include "manager.h"
#include "mount-dbus.h"
#include "mountns.h"
#include "stagens.h"
#include "pathcheck.h"
#include "usermount-names.h"
#include "utf8.h"

#define REGISTRY_FILE "mounts.json"

int manager_new(Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->runtime_dir = strdup(USERMOUNT_RUNDIR);
        if (!m->runtime_dir)
                return -ENOMEM;
        m->watch_interval_usec = MANAGER_WATCH_INTERVAL_USEC;
        m->stage_ns_fd = -EBADF;
        m->worker_pool_size = MANAGER_WORKER_POOL_SIZE;
        r = conf_new_default(&m->conf);
        if (r < 0)
                return r;
        r = label_lsm_detect(&m->lsm);
        if (r < 0)
                return r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* The requests in flight went first (request_free_all()): they use what follows. */
        assert(!m->requests);
        if (m->workers) {
                const WorkerPoolStats st = worker_pool_stats(m->workers);

                log_info("worker pool: %u spawned, %u hits, %u misses, %u failures.",
                          st.spawned, st.hits, st.misses, st.failures);
        }
        m->workers = worker_pool_free(m->workers);
        safe_close(m->stage_ns_fd);
        sd_event_source_disable_unref(m->mountinfo_watch);
        sd_event_source_disable_unref(m->reconcile_timer);
        sd_event_source_disable_unref(m->sighup);
        sd_event_source_disable_unref(m->idle_timer);
        sd_event_source_disable_unref(m->service_post);
        sd_device_monitor_unref(m->device_monitor);
        registry_free(m->registry);
        sd_bus_slot_unref(m->object_slot);
        caller_cache_free(m->callers);
        m->busfds = busfds_free(m->busfds);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        free(m->runtime_dir);
        conf_unref(m->conf);
        free(m->conf_path);
        looptrack_done(&m->loops);
        drivertrack_done(&m->drivers); /* the drivers go on: the next instance takes over */
        owner_map_done(&m->owners);
        subscribers_done(&m->subscribers);
        sd_bus_slot_unref(m->name_owner_slot);
        free(m);
        return NULL;
}

int manager_prepare_runtime_dir(Manager *m) {
        struct stat st;

        /* Workers stage mounts over this directory in their private namespaces. */
        if (mkdir(m->runtime_dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(-errno, "Failed to create %s: %m", m->runtime_dir);
        if (lstat(m->runtime_dir, &st) < 0)
                return log_error_errno(-errno, "Failed to check %s: %m", m->runtime_dir);
        if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022)) {
                log_error("%s must be a directory owned by root and writable only by root.",
                          m->runtime_dir);
                return -EPERM;
        }
        return 0;
}

/* The worker binary: next to this program, as installed (libexecdir) and as built. */
static int worker_binary_path(char **ret) {
        char self[4096], *slash;
        ssize_t n;

        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0)
                return -errno;
        self[n] = 0;
        slash = strrchr(self, '/');
        if (!slash)
                return -EINVAL;
        *slash = 0;
        return asprintf(ret, "%s/usermount-worker", self) < 0 ? -ENOMEM : 0;
}

int manager_start_workers(Manager *m) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = stagens_make(m->runtime_dir, &m->stage_ns_fd);
        if (r < 0)
                /* Builds then stage in a copy of the daemon's own namespace, as they did
                 * before: slower with many mounts, as safe. */
                log_warning_errno(r, "Failed to make the stage mount namespace, building "
                                  "mounts in copies of the daemon's own: %m");
        r = worker_binary_path(&path);
        if (r < 0)
                return log_error_errno(r, "Failed to find usermount-worker: %m");
        if (access(path, X_OK) < 0)
                return log_error_errno(-errno, "Failed to find usermount-worker at %s: %m",
                                       path);
        r = worker_pool_new(m->event, path, m->worker_pool_size, job_layouts_hash(),
                            &m->workers);
        if (r < 0)
                return log_error_errno(r, "Failed to start the worker pool: %m");
        return 0;
}

/* Logs each line conf_load() wrote (one problem each), at level. */
static void log_conf_problems(char *text, LogLevel level) {
        for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
                end = strchr(line, '\n');
                if (end)
                        *end = 0;
                if (*line)
                        (void) log_full_errno(level, 0, "%s", line);
        }
}

static int conf_read(const char *path, bool missing_ok, Conf **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *diag;
        int r;

        diag = open_memstream(&text, &size);
        if (!diag)
                return -ENOMEM;
        r = conf_load(path, missing_ok, diag, ret);
        fclose(diag);
        if (r < 0) {
                if (text && *text)
                        log_conf_problems(text, LOG_LEVEL_ERROR);
                else
                        log_error_errno(r, "Failed to read %s: %m", path);
        }
        return r;
}

int manager_load_conf(Manager *m, const char *path, bool missing_ok) {
        Conf *c = NULL;
        int r;

        r = conf_read(path, missing_ok, &c);
        if (r < 0) {
                log_error("%s has errors; not starting (a bad configuration must never weaken "
                          "the policy). Check it with 'usermountd --check-config %s'.", path, path);
                return r;
        }
        free(m->conf_path);
        m->conf_path = strdup(path);
        if (!m->conf_path) {
                conf_unref(c);
                return log_error_errno(-ENOMEM, "Out of memory.");
        }
        m->conf_missing_ok = missing_ok;
        conf_unref(m->conf);
        m->conf = c;
        if (c->path)
                log_info("Read the configuration from %s.", c->path);
        else
                log_info("No %s; using the built-in defaults.", path);
        return 0;
}

/*
 * SIGHUP: read the configuration again. Requests in flight keep the one they started
 * with; new requests get the new one. A file with errors changes nothing. The signal
 * source has a higher priority than the bus, so every call sent after the signal is
 * handled under the outcome of the reload.
 */
void manager_reload(Manager *m) {
        Conf *c = NULL;
        int r;

        if (!m->conf_path)
                return;
        r = conf_read(m->conf_path, m->conf_missing_ok, &c);
        if (r < 0) {
                log_error("Kept the previous configuration: %s has errors.", m->conf_path);
                return;
        }
        conf_unref(m->conf);
        m->conf = c;
        log_info("Reloaded the configuration%s%s.", c->path ? " from " : " (built-in defaults)",
                 c->path ?: "");
        if (m->bus)
                (void) sd_bus_emit_properties_changed(m->bus, UM_OBJECT_PATH,
                                                      UM_MANAGER_INTERFACE,
                                                      "SupportedFilesystems", NULL);
}

/* Reads /etc/subuid again if it changed since it was last read (owner.h): one stat() per
 * request. */
void manager_refresh_owners(Manager *m) {
        int r = owner_map_refresh(&m->owners, IDMAP_SUBUID_PATH, NULL);

        if (r == -EFBIG)
                log_warning("%s is larger than %u bytes: only the ranges in its first %u bytes "
                            "count their uids as their owners for the limits.",
                            IDMAP_SUBUID_PATH, OWNER_FILE_MAX, OWNER_FILE_MAX);
        else if (r < 0)
                log_warning_errno(r, "Failed to read %s (the ranges read before stay in use "
                                  "for the limits): %m", IDMAP_SUBUID_PATH);
}

/* The drivers of the last instance that still run count and are watched again; so are
 * those of registered mounts, should the table have been lost. */
static int manager_load_drivers(Manager *m) {
        size_t dropped = 0;
        int r;

        /* Their exits are watched by reconcile_watch(). */
        m->drivers = (DriverTrack) { .event = m->event };
        if (asprintf(&m->drivers.path, "%s/%s", m->runtime_dir, DRIVERTRACK_FILE) < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = drivertrack_load(&m->drivers, &dropped);
        if (r < 0)
                log_warning_errno(r, "Failed to read %s: %m", m->drivers.path);
        if (dropped > 0)
                log_info("%zu userspace drivers of the last instance are gone.", dropped);
        for (size_t i = 0; i < m->registry->n_records; i++) {
                const MountRecord *rec = m->registry->records[i];
                pid_t pid = (pid_t) rec->driver_pid;
                int fd;

                if (pid <= 0 || drivertrack_has(&m->drivers, pid, rec->driver_start) ||
                    !drivertrack_alive(pid, rec->driver_start))
                        continue;
                fd = pidfd_open(pid, 0);
                if (fd >= 0)
                        (void) drivertrack_adopt(&m->drivers, pid, rec->driver_start,
                                               owner_map_lookup(&m->owners, rec->owner_uid),
                                               (uid_t) rec->driver_uid, fd);
        }
        if (m->drivers.n_entries > 0)
                log_info("Watching %zu userspace drivers.", m->drivers.n_entries);
        return 0;
}

int manager_load_registry(Manager *m) {
        _cleanup_free_ char *path = NULL;
        UmError error = {};
        size_t dropped = 0;
        int r;

        if (asprintf(&path, "%s/%s", m->runtime_dir, REGISTRY_FILE) < 0)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = registry_load(path, &m->registry, &dropped, &error);
        if (r == -EBADMSG) {
                _cleanup_free_ char *aside = NULL;

                /* Never trust a damaged file half-way; keep it for the admin to look at. */
                log_warning("%s is damaged (%s); moving it aside and starting empty.", path,
                            error.message);
                if (asprintf(&aside, "%s.damaged", path) >= 0)
                        (void) rename(path, aside);
                r = registry_load(path, &m->registry, &dropped, &error);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to load %s: %s", path, error.message);
        if (dropped > 0)
                log_warning("Dropped %zu malformed entries from %s.", dropped, path);

        /* Before serving anyone: forget mounts that are gone (the daemon was down). */
        for (size_t i = m->registry->n_records; i > 0; i--) {
                MountRecord *rec = m->registry->records[i - 1];

                if (mountns_mount_exists(rec->mntns_id, rec->mount_id, NULL) == 0) {
                        log_request_mount(LOG_LEVEL_INFO, rec->owner_uid, rec->device,
                                          "forget", rec->fstype, rec->mount_point,
                                          "%s is no longer mounted; forgetting it.",
                                          rec->mount_point);
                        (void) registry_remove(m->registry, rec);
                }
        }
        /* Their loop devices count against their owners' limits again. */
        manager_refresh_owners(m);
        for (size_t i = 0; i < m->registry->n_records; i++) {
                MountRecord *rec = m->registry->records[i];
                uint64_t seq;

                if (rec->backing_file && !rec->file_backed &&
                    looptrack_diskseq((dev_t) rec->devnum, &seq) >= 0)
                        (void) looptrack_add(&m->loops, (dev_t) rec->devnum, seq,
                                             owner_map_lookup(&m->owners, rec->owner_uid));
        }
        loop_sweep_marks(m->runtime_dir);
        r = manager_load_drivers(m);
        if (r < 0)
                return r;
        if (m->registry->n_records > 0)
                log_info("Watching %zu mounts from before the restart.", m->registry->n_records);
        return 0;
}

int manager_register_mount(Manager *m, MountRecord *rec) {
        int r;

        r = registry_add(m->registry, rec);
        if (r < 0)
                return r;
        (void) mount_dbus_emit(m->bus, &m->subscribers, "MountAdded", rec);
        if (m->on_mounts_changed)
                m->on_mounts_changed(m->udisks, rec->devnum);
        return 0;
}

BusFds *manager_busfds_of(Manager *m, sd_bus_message *message) {
        if (m->udisks_busfds && message && sd_bus_message_get_bus(message) == m->udisks_bus)
                return m->udisks_busfds;
        return m->busfds;
}

void manager_forget_mount(Manager *m, MountRecord *rec) {
        int r;

        /* The loop device's mark stays until the device is released for real (the sweep of
         * reconcile_all()): the kernel lets go of it after the unmount, and a uevent in
         * between must not give it the links of its filesystem. */
        uint64_t devnum = rec->devnum;

        (void) mount_dbus_emit(m->bus, &m->subscribers, "MountRemoved", rec);
        r = registry_remove(m->registry, rec);
        if (r < 0)
                log_warning_errno(r, "Failed to save the registry: %m");
        if (m->on_mounts_changed)
                m->on_mounts_changed(m->udisks, devnum);
}
