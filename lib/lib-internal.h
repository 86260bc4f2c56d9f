/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the parts of libusermount share: the client object, the one way a call is sent
 * (with the authentication mode applied), and reading an info dict. Nothing here is
 * exported (libusermount.sym).
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "macro.h"
#include "usermount.h"
#include "usermount-cleanup.h"

/* Exported (the library is built with -fvisibility=hidden and libusermount.sym). */
#define _public_ __attribute__((visibility("default")))

/*
 * usermountd may probe the device, ask polkit (25 s) and build or take down the mount in a
 * worker (30 s each), so a reply can take longer than sd-bus's default of 25 s.
 */
#define CLIENT_DEFAULT_TIMEOUT_USEC (120ULL * 1000000ULL)

struct usermount_client {
        unsigned n_ref;
        sd_bus *bus;
        usermount_auth auth;
        uint64_t timeout_usec;
        /* The last failed call: its D-Bus error, and what the tty agent did about it. */
        sd_bus_error error;
        usermount_auth_result auth_result;
        int agent_error;
};

usermount_client *client_ref(usermount_client *c);

/* Appends the call's arguments to m, params last (with "interactive" = interactive). */
typedef int (*ClientBuildFunc)(sd_bus_message *m, bool interactive, const void *userdata);

/*
 * Sends method with the arguments build() appends, applying the client's authentication
 * mode (see usermount_client_set_auth()), and returns the reply in *ret_reply. On failure
 * the client keeps the D-Bus error and -errno is returned.
 */
int client_call(usermount_client *c, const char *method, ClientBuildFunc build,
                const void *userdata, sd_bus_message **ret_reply);

/* The errno of the error the client keeps (r when none is set). */
int client_error_errno(usermount_client *c, int r);

/* Starts a new call: forgets the last error. */
void client_reset_error(usermount_client *c);

/*
 * Reads the a{sv} info dict at m's position into a new info: every key as JSON, the known
 * ones typed (keys of another type are left out of the typed view). -EBADMSG: malformed.
 */
int info_read(sd_bus_message *m, usermount_info **ret);

/* Reads the aa{sv} of a ListMounts reply at m's position, each as info_read() does, into a
 * new array of *ret_n infos (NULL when empty). -EBADMSG: malformed. */
int info_read_array(sd_bus_message *m, usermount_info ***ret, size_t *ret_n);

struct usermount_options {
        char *fstype;
        char *fs_options;
        char *target;
        char *idmap;
        char *driver;
        int userns_fd; /* owned; -EBADF: none */
        uint32_t partition;
        bool read_only;
        bool exec;
};

/* Appends the params dict of o (org.freedesktop.UserMount1(5)) with "interactive" = interactive. */
int options_append_params(sd_bus_message *m, const usermount_options *o, bool interactive);
