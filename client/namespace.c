/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel lets a process attach a mount when it has CAP_SYS_ADMIN in the user namespace
 * that owns its mount namespace (may_mount()). Two situations are certain and common: an
 * ordinary user in the host's namespaces (owner is our user namespace, no capability), and
 * 'unshare --user' without '--mount' (owner is an ancestor of our user namespace, where we
 * never hold capabilities). Everything else is left to move_mount() to decide.
 *
 * Whether we are in a user namespace at all is userns_detect()'s (shared/userns.h).
 */
#include <fcntl.h>
#include <stdint.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "macro.h"
#include "namespace.h"

/* 1 if cap is in this thread's effective set; libcap would be a dependency for one call. */
static int have_effective_capability(unsigned cap) {
        struct __user_cap_header_struct header = {
                .version = _LINUX_CAPABILITY_VERSION_3,
                .pid = 0,
        };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

        if (syscall(SYS_capget, &header, data) < 0)
                return -errno;
        return !!(data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap));
}

int namespace_can_attach_mounts(void) {
        _cleanup_close_ int mnt_ns = -EBADF, owner = -EBADF;
        struct stat owner_st, user_st;

        mnt_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        if (mnt_ns < 0)
                return -errno;

        /* The returned fd is O_CLOEXEC (the kernel's open_related_ns()). */
        owner = ioctl(mnt_ns, NS_GET_USERNS);
        if (owner < 0)
                /*
                 * EPERM: the owner is neither our user namespace nor one nested in it, so it
                 * is an ancestor (or unrelated), where we hold no capabilities at all.
                 */
                return errno == EPERM ? 0 : -errno;

        if (fstat(owner, &owner_st) < 0)
                return -errno;
        if (stat("/proc/self/ns/user", &user_st) < 0)
                return -errno;
        if (owner_st.st_dev != user_st.st_dev || owner_st.st_ino != user_st.st_ino)
                /* Owned by a nested user namespace: the rules there are move_mount()'s. */
                return -ENODATA;

        return have_effective_capability(CAP_SYS_ADMIN);
}
