/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A D-Bus client for the system tier, for what the usermount CLI does not do: MountFd of a
 * block device the caller opened itself (the CLI sends device paths with Mount). It runs
 * inside the test system as the calling user:
 *
 *         um-system-call mount-fd DEVICE
 *
 * It prints "mount-point=PATH" and exits 0, or prints "error=NAME" and "message=TEXT" and
 * exits 1; 2 for a usage or connection problem.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "macro.h"
#include "usermount-names.h"

static int mount_fd(const char *device) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *mount_point;
        int r;

        fd = open(device, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                fprintf(stderr, "cannot open %s: %m\n", device);
                return 2;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "cannot connect to the system bus: %s\n", strerror(-r));
                return 2;
        }
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountFd",
                               &error, &reply, "hssa{sv}", fd, "", "", 0);
        if (r < 0) {
                printf("error=%s\nmessage=%s\n", strempty(error.name), strempty(error.message));
                return 1;
        }
        r = sd_bus_message_read(reply, "s", &mount_point);
        if (r < 0) {
                fprintf(stderr, "cannot read the reply: %s\n", strerror(-r));
                return 2;
        }
        printf("mount-point=%s\n", mount_point);
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "mount-fd") == 0)
                return mount_fd(argv[2]);
        fprintf(stderr, "usage: um-system-call mount-fd DEVICE\n");
        return 2;
}
