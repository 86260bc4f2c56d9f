/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libusermount: the client library of usermountd (org.freedesktop.UserMount1 on the system
 * bus). See libusermount(3).
 *
 * Conventions: every type is opaque; functions that can fail return 0 (or a documented
 * positive value) on success and a negative errno on failure; a failed call to usermountd
 * leaves the D-Bus error name and message in the client (usermount_client_get_error()).
 * The library never prints, never exits, and every file descriptor it returns has
 * O_CLOEXEC. A client and what it made may be used by one thread at a time.
 */
#ifndef USERMOUNT_H
#define USERMOUNT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct usermount_client usermount_client;
typedef struct usermount_options usermount_options;
typedef struct usermount_info usermount_info;
typedef struct usermount_monitor usermount_monitor;

/* ---- connection, authentication, errors: usermount_client_new(3) ---- */

typedef enum usermount_auth {
        USERMOUNT_AUTH_NONE = 0,              /* polkit never asks anybody (the default) */
        USERMOUNT_AUTH_ALLOW_INTERACTIVE = 1, /* params["interactive"]: the caller runs an agent */
        USERMOUNT_AUTH_TTY_AGENT = 2,         /* retry with pkttyagent on the terminal */
} usermount_auth;

/* What USERMOUNT_AUTH_TTY_AGENT did about the last call (usermount_client_get_auth_result()). */
typedef enum usermount_auth_result {
        USERMOUNT_AUTH_RESULT_NOT_NEEDED = 0, /* polkit did not ask for authentication */
        USERMOUNT_AUTH_RESULT_RETRIED = 1,    /* the agent ran and the call was sent again */
        USERMOUNT_AUTH_RESULT_IN_USERNS = 2,  /* no agent: this process is in a user namespace */
        USERMOUNT_AUTH_RESULT_NO_TERMINAL = 3,/* no agent: standard input is not a terminal */
        USERMOUNT_AUTH_RESULT_ROOT = 4,       /* no agent: root, whom polkit asks nothing */
        USERMOUNT_AUTH_RESULT_AGENT_FAILED = 5,/* the agent did not start or register */
        USERMOUNT_AUTH_RESULT_NOT_ASKED = 6,  /* authentication was needed; the mode forbids asking */
} usermount_auth_result;

/* The kind of a failure, from the D-Bus error name (usermount_error_kind_from_name()).
 * The values are part of the ABI: a new kind gets the next free number. */
typedef enum usermount_error_kind {
        USERMOUNT_ERROR_NONE = 0,
        USERMOUNT_ERROR_FAILED = 1,
        USERMOUNT_ERROR_NOT_AUTHORIZED = 2,
        USERMOUNT_ERROR_NOT_AUTHORIZED_CAN_OBTAIN = 3,
        USERMOUNT_ERROR_INVALID_ARGUMENT = 4,
        USERMOUNT_ERROR_INVALID_SOURCE = 5,
        USERMOUNT_ERROR_FILESYSTEM_NOT_ALLOWED = 6,
        USERMOUNT_ERROR_OPTION_NOT_ALLOWED = 7,
        USERMOUNT_ERROR_DEVICE_BUSY = 8,
        USERMOUNT_ERROR_INVALID_TARGET = 9,
        USERMOUNT_ERROR_NOT_MOUNTED = 10,
        USERMOUNT_ERROR_LIMIT_EXCEEDED = 11,
        USERMOUNT_ERROR_UNAVAILABLE = 12,   /* no usermountd, no reply, activation failed */
        USERMOUNT_ERROR_ACCESS_DENIED = 13, /* the bus policy refused the call */
        USERMOUNT_ERROR_UNSUPPORTED = 14,   /* unknown method, interface or object: an older daemon */
        USERMOUNT_ERROR_OTHER = 15,         /* any other name */
} usermount_error_kind;

/* A new client on the system bus ($DBUS_SYSTEM_BUS_ADDRESS if set) in *ret, the caller's
 * to unref; unref accepts NULL and returns NULL. */
int usermount_client_new(usermount_client **ret);
usermount_client *usermount_client_unref(usermount_client *c);
int usermount_client_set_auth(usermount_client *c, usermount_auth mode);
int usermount_client_set_timeout(usermount_client *c, uint64_t usec);
int usermount_client_is_connected(usermount_client *c);
int usermount_client_can_pass_fds(usermount_client *c);
/* The D-Bus error name and message of the last failed call, owned by c until its next
 * call; -ENODATA when that call did not fail with a D-Bus error. */
int usermount_client_get_error(usermount_client *c, const char **ret_name,
                               const char **ret_message);
usermount_auth_result usermount_client_get_auth_result(usermount_client *c, int *ret_agent_error);
usermount_error_kind usermount_error_kind_from_name(const char *name);

/* New string (free()) / NULL-terminated array (usermount_strv_free()), the caller's. */
int usermount_get_version(usermount_client *c, char **ret);
int usermount_get_supported_filesystems(usermount_client *c, char ***ret);
void usermount_strv_free(char **l);

/* ---- mounting: usermount_open_mount(3) ---- */

/* Options of a mount request; setters copy their strings (NULL or "" clears) and fds. */
int usermount_options_new(usermount_options **ret);
usermount_options *usermount_options_free(usermount_options *o);
int usermount_options_set_fstype(usermount_options *o, const char *fstype);
int usermount_options_set_fs_options(usermount_options *o, const char *options);
int usermount_options_set_target(usermount_options *o, const char *path);
int usermount_options_set_read_only(usermount_options *o, int read_only);
int usermount_options_set_exec(usermount_options *o, int exec);
int usermount_options_set_idmap(usermount_options *o, const char *idmap);
int usermount_options_set_userns_fd(usermount_options *o, int fd);
int usermount_options_set_driver(usermount_options *o, const char *driver);
int usermount_options_set_partition(usermount_options *o, uint32_t partition);

/* source_fd stays the caller's. *ret_mount_fd (O_CLOEXEC), *ret_mount_point (free()) and
 * *ret_info (usermount_info_free(); ret_info may be NULL) are the caller's. o may be NULL. */
int usermount_open_mount(usermount_client *c, int source_fd, const usermount_options *o,
                         int *ret_mount_fd, usermount_info **ret_info);
int usermount_mount_fd(usermount_client *c, int source_fd, const usermount_options *o,
                       char **ret_mount_point, usermount_info **ret_info);
int usermount_mount(usermount_client *c, const char *device, const usermount_options *o,
                    char **ret_mount_point, usermount_info **ret_info);

/* ---- unmounting: usermount_unmount(3) ---- */

#define USERMOUNT_UNMOUNT_FORCE (1U << 0)

int usermount_unmount(usermount_client *c, const char *mount_point, unsigned flags);

/* ---- listing, the info: usermount_list(3) ---- */

/* *ret_infos: a new array of *ret_n infos, freed with usermount_info_list_free(). Getters
 * accept NULL; their strings belong to the info. */
int usermount_list(usermount_client *c, usermount_info ***ret_infos, size_t *ret_n);
void usermount_info_list_free(usermount_info **infos, size_t n);
usermount_info *usermount_info_free(usermount_info *info);

const char *usermount_info_get_mount_point(const usermount_info *info);
const char *usermount_info_get_device(const usermount_info *info);
const char *usermount_info_get_backing_file(const usermount_info *info);
const char *usermount_info_get_fstype(const usermount_info *info);
const char *usermount_info_get_label(const usermount_info *info);
const char *usermount_info_get_uuid(const usermount_info *info);
const char *usermount_info_get_options(const usermount_info *info);
const char *usermount_info_get_driver(const usermount_info *info);
const char *usermount_info_get_idmap(const usermount_info *info);
const char *usermount_info_get_idmap_uid_map(const usermount_info *info);
const char *usermount_info_get_idmap_gid_map(const usermount_info *info);
const char *const *usermount_info_get_attributes(const usermount_info *info);
int usermount_info_has_attribute(const usermount_info *info, const char *attribute);
uint64_t usermount_info_get_mount_id(const usermount_info *info);
uint32_t usermount_info_get_partition(const usermount_info *info);
int usermount_info_get_owner_uid(const usermount_info *info, uint32_t *ret_uid);
uint64_t usermount_info_get_created_usec(const usermount_info *info);
const char *usermount_info_get_json(const usermount_info *info);

/* ---- monitoring: usermount_monitor_new(3) ---- */

typedef enum usermount_event {
        USERMOUNT_EVENT_ADDED = 1,
        USERMOUNT_EVENT_REMOVED = 2,
        /* usermountd restarted and the monitor subscribed again (mount_point and info
         * NULL): mounts may have come and gone unseen meanwhile. */
        USERMOUNT_EVENT_RESUBSCRIBED = 3,
} usermount_event;

/* info is valid during the call only; return < 0 to stop the monitor. */
typedef int (*usermount_monitor_func)(usermount_monitor *m, usermount_event event,
                                      const char *mount_point, const usermount_info *info,
                                      void *userdata);

/* The monitor holds a reference to c; its fd belongs to c's connection. */
int usermount_monitor_new(usermount_client *c, usermount_monitor_func func, void *userdata,
                          usermount_monitor **ret);
usermount_monitor *usermount_monitor_free(usermount_monitor *m);
int usermount_monitor_get_fd(usermount_monitor *m);
int usermount_monitor_get_events(usermount_monitor *m);
int usermount_monitor_get_timeout(usermount_monitor *m, uint64_t *ret_usec);
int usermount_monitor_process(usermount_monitor *m);
int usermount_monitor_wait(usermount_monitor *m, uint64_t timeout_usec);
int usermount_monitor_run(usermount_monitor *m);

#ifdef __cplusplus
}
#endif

#endif
