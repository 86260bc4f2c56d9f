/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UmError: the class and the human sentence of a failure, next to the -errno that core
 * functions return. Core code fills it and never logs; the bus edge maps the class to a
 * D-Bus error name in one place (shared/errors.c). The message lives in a fixed buffer so
 * that it can cross the worker socket as plain bytes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

typedef enum UmErrorKind {
        UM_ERROR_KIND_NONE = 0,
        UM_ERROR_KIND_FAILED,
        UM_ERROR_KIND_INVALID_ARGUMENT,
        UM_ERROR_KIND_INVALID_SOURCE,
        UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED,
        UM_ERROR_KIND_OPTION_NOT_ALLOWED,
        UM_ERROR_KIND_DEVICE_BUSY,
        UM_ERROR_KIND_INVALID_TARGET,
        UM_ERROR_KIND_NOT_MOUNTED,
        UM_ERROR_KIND_NOT_AUTHORIZED,
        UM_ERROR_KIND_NOT_AUTHORIZED_CAN_OBTAIN,
        UM_ERROR_KIND_LIMIT_EXCEEDED,
        _UM_ERROR_KIND_MAX,
} UmErrorKind;

#define UM_ERROR_MESSAGE_MAX 512

typedef struct UmError {
        UmErrorKind kind;
        int error; /* positive errno */
        char message[UM_ERROR_MESSAGE_MAX];
} UmError;

/*
 * Records kind, errno and a printf-style sentence in *e (e may be NULL) and returns
 * -err, so that callers can write "return um_error_set(e, KIND, EINVAL, "...", ...);".
 * Never pass data from a device or a caller as the format: use "%s".
 */
int um_error_set(UmError *e, UmErrorKind kind, int err, const char *fmt, ...) _printf_(4, 5);

/* The D-Bus error name of a kind (org.freedesktop.UserMount1.Error.*). */
const char *um_error_kind_to_name(UmErrorKind kind);

/*
 * Copies s into buf (size n) with control characters, backslashes and invalid UTF-8
 * escaped as \xNN, so that labels and paths from devices are safe in logs and messages.
 * Always NUL-terminates; returns buf.
 */
char *um_escape(const char *s, char *buf, size_t n);
