/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel lets a process attach a mount when it has CAP_SYS_ADMIN in the user namespace
 * that owns its mount namespace (may_mount()). Two situations are certain and common: an
 * ordinary user in the host's namespaces (owner is our user namespace, no capability), and
 * 'unshare --user' without '--mount' (owner is an ancestor of our user namespace, where we
 * never hold capabilities). Everything else is left to move_mount() to decide.
 *
 * Whether we are in a user namespace at all comes from uid_map, as in systemd's
 * running_in_userns(): only the initial user namespace maps every id onto itself.
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

bool namespace_uid_map_is_initial(const char *contents) {
        unsigned long long inside, outside, count;
        int consumed = 0;

        if (!contents)
                return false;
        /* One line, and nothing after it: a second mapping line means a namespace. */
        if (sscanf(contents, " %llu %llu %llu %n", &inside, &outside, &count, &consumed) != 3)
                return false;
        if (contents[consumed] != 0)
                return false;
        return inside == 0 && outside == 0 && count == UINT32_MAX;
}

int namespace_in_user_namespace(void) {
        _cleanup_(fclosep) FILE *f = NULL;
        /* At most 340 lines of three numbers (the kernel's limit); one line says enough. */
        char buf[4096];
        size_t n;

        f = fopen("/proc/self/uid_map", "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        if (ferror(f))
                return -EIO;
        buf[n] = 0;
        return !namespace_uid_map_is_initial(buf);
}
