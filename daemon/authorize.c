/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit over sd-bus, without libpolkit: the call is small and asynchronous, and the
 * daemon already has an event loop and a bus connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authorize.h"
#include "macro.h"
#include "usermount-names.h"

#define POLKIT_CHECK_FLAG_ALLOW_USER_INTERACTION 1u
/* polkit may wait for the user to type a password; without interaction it answers fast. */
#define POLKIT_TIMEOUT_USEC (25ULL * 1000000ULL)
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (300ULL * 1000000ULL)

typedef struct AuthorizeCall {
        AuthorizeDone done;
        void *userdata;
        char action[128];
} AuthorizeCall;

/* What a refusal of action means for the user, where its name does not say it: "" or a
 * sentence that starts with a space. */
static const char *action_why(const char *action) {
        if (streq(action, UM_ACTION_MOUNT_KERNEL_DRIVER))
                return " This mount needs the kernel's own filesystem driver (for idmap "
                       "'namespace' or an option only it has), and here such "
                       "media go to a sandboxed userspace driver unless an administrator allows "
                       "otherwise; idmap 'user' can do without it.";
        return "";
}

/* Whether the details of a "no" say that the user dismissed the agent's dialog (polkitd
 * sets "polkit.dismissed"). */
static int read_dismissed(sd_bus_message *reply, bool *ret) {
        const char *key, *value;
        int r;

        *ret = false;
        r = sd_bus_message_enter_container(reply, 'a', "{ss}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "{ss}", &key, &value)) > 0)
                if (streq(key, "polkit.dismissed"))
                        *ret = true;
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(reply);
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        AuthorizeCall *call = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        UmError error = {};
        int authorized, challenge;
        bool dismissed = false;
        int r;

        if (e) {
                r = um_error_set(&error, UM_ERROR_KIND_FAILED, sd_bus_error_get_errno(e),
                                 "Could not ask polkit for authorization: %s", e->message ?: e->name);
                goto finish;
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r >= 0 && !authorized)
                r = read_dismissed(reply, &dismissed);
        if (r < 0) {
                r = um_error_set(&error, UM_ERROR_KIND_FAILED, r,
                                 "polkit sent a malformed authorization reply.");
                goto finish;
        }

        if (authorized)
                r = 0;
        else if (dismissed)
                /* ECANCELED: the UDisks2 front's NotAuthorizedDismissed, which desktops show
                 * no error dialog for (the user said no). */
                r = um_error_set(&error, UM_ERROR_KIND_NOT_AUTHORIZED, ECANCELED,
                                 "The authentication dialog for %s was dismissed.",
                                 call->action);
        else if (challenge)
                r = um_error_set(&error, UM_ERROR_KIND_NOT_AUTHORIZED_CAN_OBTAIN, EACCES,
                                 "Authentication is required for %s; retry with interactive "
                                 "authorization allowed.", call->action);
        else
                r = um_error_set(&error, UM_ERROR_KIND_NOT_AUTHORIZED, EACCES,
                                 "Not authorized by polkit for %s.%s", call->action,
                                 action_why(call->action));
finish:
        call->done(r, &error, call->userdata);
        return 0;
}

static int append_details(sd_bus_message *m, const char *const *details) {
        int r = sd_bus_message_open_container(m, 'a', "{ss}");
        if (r < 0)
                return r;
        for (size_t i = 0; details && details[i] && details[i + 1]; i += 2) {
                char buf[1024];

                r = sd_bus_message_append(m, "{ss}", details[i],
                                          um_escape(details[i + 1], buf, sizeof(buf)));
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

/*
 * polkit 122 (Debian 12) reads "pid", "start-time" and "uid" of a unix-process subject
 * and ignores any other key (polkit_subject_new_for_gvariant() looks keys up by name), so
 * "pidfd" is harmless there: it checks the start time and uid against /proc/<pid> itself.
 * polkit 124 and later use the pidfd when it is given (with "uid"), which pins the
 * process. So the pidfd is sent whenever there is one.
 */
int authorize_append_process_subject(sd_bus_message *m, const AuthorizeSubject *subject) {
        int r;

        r = sd_bus_message_open_container(m, 'r', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "unix-process");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}{sv}{sv}", "pid", "u", (uint32_t) subject->pid,
                                          "start-time", "t", subject->start_time,
                                          "uid", "i", (int32_t) subject->uid);
        if (r >= 0 && subject->pidfd >= 0)
                r = sd_bus_message_append(m, "{sv}", "pidfd", "h", subject->pidfd);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int new_check(sd_bus *bus, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(bus, ret, "org.freedesktop.PolicyKit1",
                                              "/org/freedesktop/PolicyKit1/Authority",
                                              "org.freedesktop.PolicyKit1.Authority",
                                              "CheckAuthorization");
}

/* Completes call (the subject is in it already) and sends it. */
static int send_check(sd_bus *bus, sd_bus_message *call, const char *action,
                      const char *const *details, bool interactive, AuthorizeDone done,
                      void *userdata, sd_bus_slot **ret_slot) {
        sd_bus_slot *slot = NULL;
        AuthorizeCall *c;
        int r;

        r = sd_bus_message_append(call, "s", action);
        if (r < 0)
                return r;
        r = append_details(call, details);
        if (r < 0)
                return r;
        r = sd_bus_message_append(call, "us",
                                  interactive ? POLKIT_CHECK_FLAG_ALLOW_USER_INTERACTION : 0u, "");
        if (r < 0)
                return r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->done = done;
        c->userdata = userdata;
        snprintf(c->action, sizeof(c->action), "%s", action);

        r = sd_bus_call_async(bus, &slot, call, on_polkit_reply, c,
                              interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : POLKIT_TIMEOUT_USEC);
        if (r < 0) {
                free(c);
                return r;
        }
        /* The slot owns the call state: unreffing the slot (request cancelled) frees it. */
        sd_bus_slot_set_destroy_callback(slot, free);
        *ret_slot = slot;
        return 0;
}

int authorize_check_async(sd_bus *bus, const AuthorizeSubject *subject, const char *action,
                          const char *const *details, bool interactive, AuthorizeDone done,
                          void *userdata, sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r;

        r = new_check(bus, &call);
        if (r >= 0)
                r = authorize_append_process_subject(call, subject);
        if (r < 0)
                return r;
        return send_check(bus, call, action, details, interactive, done, userdata, ret_slot);
}

AuthorizeSubject authorize_subject_of(const Caller *caller) {
        return (AuthorizeSubject) {
                .pid = caller->pid,
                .start_time = caller->start_time,
                .uid = caller->uid,
                .pidfd = caller->pidfd,
        };
}
