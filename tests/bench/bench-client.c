/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The benchmark's clients (see bench-client.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-client.h"
#include "bench-stats.h"
#include "harness.h"
#include "macro.h"
#include "usermount-names.h"

static int client_fail(ClientJob *job, int r, const sd_bus_error *error, const char *what) {
        ClientResult *res = job->result;

        res->failed = true;
        if (error && sd_bus_error_is_set(error))
                snprintf(res->error, sizeof(res->error), "%s: %s: %s", what, error->name,
                         strempty(error->message));
        else
                snprintf(res->error, sizeof(res->error), "%s: %s", what, strerror(-r));
        return r;
}

/* One OpenMount: the fd the reply carries is closed with the reply, at once. */
static int call_open_mount(ClientJob *job, sd_bus *bus, int image_fd, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        uint64_t t0;
        int fd, r;

        r = sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "OpenMount");
        if (r >= 0)
                r = sd_bus_message_append(call, "hssa{sv}", image_fd, job->fstype, "", 0);
        if (r < 0)
                return client_fail(job, r, NULL, "building the OpenMount call");

        t0 = stats_now_ns();
        r = sd_bus_call(bus, call, 60 * 1000000ULL, &error, &reply);
        if (r < 0)
                return client_fail(job, r, &error, "OpenMount");
        r = sd_bus_message_read(reply, "h", &fd);
        if (r <= 0)
                return client_fail(job, r < 0 ? r : -EBADMSG, NULL, "OpenMount reply");
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

/* MountFd of the image at the default place (<media_root>/<user>/<label>), untimed, then
 * Unmount of the mount point it returned: the Unmount is timed. */
static int call_mount_unmount(ClientJob *job, sd_bus *bus, int image_fd, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *mount_point = NULL;
        const char *mp;
        uint64_t t0;
        int r;

        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountFd",
                               &error, &reply, "hssa{sv}", image_fd, job->fstype, "", 0);
        if (r < 0)
                return client_fail(job, r, &error, "MountFd");
        r = sd_bus_message_read(reply, "s", &mp);
        if (r <= 0)
                return client_fail(job, r < 0 ? r : -EBADMSG, NULL, "MountFd reply");
        mount_point = strdup(mp);
        if (!mount_point)
                return client_fail(job, -ENOMEM, NULL, "MountFd reply");
        reply = sd_bus_message_unref(reply);

        t0 = stats_now_ns();
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Unmount",
                               &error, NULL, "sa{sv}", mount_point, 0);
        if (r < 0)
                return client_fail(job, r, &error, "Unmount");
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int call_ping(ClientJob *job, sd_bus *bus, uint64_t *ret_ns) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *version = NULL;
        uint64_t t0 = stats_now_ns();
        int r;

        r = sd_bus_get_property_string(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                       "Version", &error, &version);
        if (r < 0)
                return client_fail(job, r, &error, "Get Version");
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

static int client_loop(ClientJob *job, sd_bus *bus, int image_fd) {
        ClientResult *res = job->result;
        uint64_t ns = 0;
        int r;

        for (unsigned i = 0; i < job->warmup + job->count; i++) {
                if (i == job->warmup)
                        res->start_ns = stats_now_ns();
                if (job->mode == CLIENT_OPEN_MOUNT)
                        r = call_open_mount(job, bus, image_fd, &ns);
                else if (job->mode == CLIENT_MOUNT_UNMOUNT)
                        r = call_mount_unmount(job, bus, image_fd, &ns);
                else
                        r = call_ping(job, bus, &ns);
                if (r < 0)
                        return r;
                if (i >= job->warmup)
                        job->latency_ns[res->n_done++] = ns;
        }
        res->end_ns = stats_now_ns();
        return 0;
}

static int client_run(ClientJob *job) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int image_fd = -EBADF;
        const char *name = NULL;
        int r;

        r = harness_sd_bus_connect(&bus);
        if (r < 0)
                return client_fail(job, r, NULL, "connecting to the bus");
        if (job->image) {
                image_fd = open(job->image, O_RDONLY | O_CLOEXEC);
                if (image_fd < 0)
                        return client_fail(job, -errno, NULL, job->image);
        }
        if (job->mode == CLIENT_HOLD) {
                r = sd_bus_get_unique_name(bus, &name);
                if (r < 0)
                        return client_fail(job, r, NULL, "the unique name");
                harness_report("name=%s", name);
                (void) harness_await_release();
                return 0;
        }
        if (job->start_on_release) {
                harness_report("ready");
                r = harness_await_release();
                if (r < 0)
                        return client_fail(job, r, NULL, "waiting for the start");
        }
        return client_loop(job, bus, image_fd);
}

int client_main(void *userdata) {
        ClientJob *job = userdata;
        int r;

        r = client_run(job);
        __atomic_store_n(&job->result->done, 1, __ATOMIC_RELEASE);
        return r < 0 ? 1 : 0;
}
