/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of the D-Bus contract (org.freedesktop.UserMount1(5)) and of the polkit actions
 * (docs/architecture.md), shared by the daemon, the client and the tests.
 */
#pragma once

#define UM_BUS_NAME "org.freedesktop.UserMount1"
#define UM_OBJECT_PATH "/org/freedesktop/UserMount1"
#define UM_MANAGER_INTERFACE "org.freedesktop.UserMount1.Manager"

#define UM_ERROR_PREFIX "org.freedesktop.UserMount1.Error."
#define UM_ERROR_NOT_AUTHORIZED UM_ERROR_PREFIX "NotAuthorized"
#define UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN UM_ERROR_PREFIX "NotAuthorizedCanObtain"
#define UM_ERROR_INVALID_ARGUMENT UM_ERROR_PREFIX "InvalidArgument"
#define UM_ERROR_INVALID_SOURCE UM_ERROR_PREFIX "InvalidSource"
#define UM_ERROR_FILESYSTEM_NOT_ALLOWED UM_ERROR_PREFIX "FilesystemNotAllowed"
#define UM_ERROR_OPTION_NOT_ALLOWED UM_ERROR_PREFIX "OptionNotAllowed"
#define UM_ERROR_DEVICE_BUSY UM_ERROR_PREFIX "DeviceBusy"
#define UM_ERROR_INVALID_TARGET UM_ERROR_PREFIX "InvalidTarget"
#define UM_ERROR_NOT_MOUNTED UM_ERROR_PREFIX "NotMounted"
#define UM_ERROR_LIMIT_EXCEEDED UM_ERROR_PREFIX "LimitExceeded"
#define UM_ERROR_FAILED UM_ERROR_PREFIX "Failed"

#define UM_ACTION_PREFIX "org.freedesktop.usermount1."
#define UM_ACTION_MOUNT_REMOVABLE UM_ACTION_PREFIX "mount-removable"
#define UM_ACTION_MOUNT_SYSTEM UM_ACTION_PREFIX "mount-system"
#define UM_ACTION_MOUNT_IMAGE UM_ACTION_PREFIX "mount-image"
#define UM_ACTION_MOUNT_EXEC UM_ACTION_PREFIX "mount-exec"
#define UM_ACTION_MOUNT_KERNEL_DRIVER UM_ACTION_PREFIX "mount-kernel-driver"
#define UM_ACTION_UNMOUNT_OTHERS UM_ACTION_PREFIX "unmount-others"

/* Subscribe(): the most subscriptions one uid may hold at a time (one per connection). */
#define UM_SUBSCRIPTIONS_MAX_PER_UID 64

/* usermount-worker's process name (comm) while it waits for its first job (a ready worker
 * of the daemon's pool), and while it waits for the next after replying; while it works,
 * "umw-" and the job's name ("umw-build"). */
#define WORKER_NAME_READY "umw-ready"
#define WORKER_NAME_WAITING "umw-waiting"
