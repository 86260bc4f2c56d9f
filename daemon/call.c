/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The life of a MountCall (call.h): made empty, filled by the bus edge and the caller
 * stage, released with its request.
 */
#include <stdlib.h>

#include "call.h"
#include "macro.h"

void call_init(MountCall *call, CallMethod method, sd_bus_message *message) {
        *call = (MountCall) {
                .method = method,
                .message = sd_bus_message_ref(message),
                .caller.pidfd = -EBADF,
                .source_fd = -EBADF,
                .params.userns_fd = -EBADF,
                .params.driver = -1,
        };
}

void caller_done(Caller *c) {
        safe_close(c->pidfd);
        free(c->user_name);
        free(c->label);
        *c = (Caller) { .pidfd = -EBADF };
}

void call_done(MountCall *call) {
        sd_bus_message_unref(call->message);
        caller_done(&call->caller);
        free(call->device_path);
        free(call->source_path);
        free(call->fstype);
        free(call->options);
        free(call->params.target);
        if (!call->params.userns_given)
                safe_close(call->params.userns_fd);
        free(call->unmount_point);
        call_init(call, call->method, NULL);
}
