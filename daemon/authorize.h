/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asking polkit, asynchronously, whether a caller may perform an action
 * (org.freedesktop.PolicyKit1.Authority.CheckAuthorization). The subject is the calling
 * process as the caller stage checked it (caller.h): "unix-process" with its pid, start
 * time, uid and pidfd, so polkitd need not ask the bus about the caller again. polkitd
 * checks pid, start time and uid against /proc itself, and finds the caller's logind
 * session from the pid: rules see subject.user, subject.pid, subject.session,
 * subject.local and subject.active as they did with the "system-bus-name" subject.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "call.h"
#include "um-error.h"

/* The process polkit is asked about. */
typedef struct AuthorizeSubject {
        pid_t pid;
        uint64_t start_time; /* clock ticks after boot (/proc/PID/stat field 22) */
        uid_t uid;
        int pidfd;           /* of pid, or -EBADF; borrowed: the call carries a copy */
} AuthorizeSubject;

/* The subject polkit is asked about for a known caller (borrows its pidfd). */
AuthorizeSubject authorize_subject_of(const Caller *caller);

/*
 * Called once with r = 0 (authorized), -EACCES (error says NotAuthorized or
 * NotAuthorizedCanObtain) or another -errno when polkit could not be asked.
 */
typedef void (*AuthorizeDone)(int r, const UmError *error, void *userdata);

/*
 * Sends the check for subject; details is a NULL-terminated list of key, value pairs
 * (values are passed through um_escape(), so device data is safe). interactive allows
 * polkit to ask for a password. The reply arrives through done, unless *ret_slot is
 * unreffed first. Returns 0 or -errno (nothing sent).
 */
int authorize_check_async(sd_bus *bus, const AuthorizeSubject *subject, const char *action,
                          const char *const *details, bool interactive, AuthorizeDone done,
                          void *userdata, sd_bus_slot **ret_slot);

/* Appends the (sa{sv}) unix-process subject of CheckAuthorization to m. */
int authorize_append_process_subject(sd_bus_message *m, const AuthorizeSubject *subject);
