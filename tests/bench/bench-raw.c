/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The in-process paths the broker is compared with (see bench-raw.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-raw.h"
#include "fd-util.h"
#include "bench-stats.h"
#include "kernel-compat.h"
#include "loop.h"
#include "macro.h"
#include "mountbuild.h"
#include "policy.h"
#include "source.h"

static int fail(const char *what, const char **ret_what) {
        int r = -errno;

        if (ret_what)
                *ret_what = what;
        return r;
}

/* fsopen() .. fsmount() of device, read-only, nodev, nosuid, noexec: the detached mount. */
static int fsmount_device(const char *fstype, const char *device, int *ret_fd,
                          const char **ret_what) {
        _cleanup_close_ int fsfd = -EBADF;
        int mfd;

        fsfd = fsopen(fstype, FSOPEN_CLOEXEC);
        if (fsfd < 0)
                return fail("fsopen", ret_what);
        if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", device, 0) < 0)
                return fail("fsconfig source", ret_what);
        if (fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0)
                return fail("fsconfig ro", ret_what);
        if (fsconfig(fsfd, FSCONFIG_CMD_CREATE_EXCL, NULL, NULL, 0) < 0)
                return fail("FSCONFIG_CMD_CREATE_EXCL", ret_what);
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (mfd < 0)
                return fail("fsmount", ret_what);
        *ret_fd = mfd;
        return 0;
}

int raw_mount_device(const char *fstype, const char *device, const char **ret_what) {
        _cleanup_close_ int mfd = -EBADF;

        return fsmount_device(fstype, device, &mfd, ret_what);
}

int raw_mount_image_on(const char *fstype, int image_fd, const char *dir, const char **ret_what) {
        _cleanup_close_ int loop_fd = -EBADF, mfd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        UmError error = {};
        int r;

        r = loop_attach(image_fd, true, &loop_fd, &loop_path, &error);
        if (r < 0) {
                if (ret_what)
                        *ret_what = "loop_attach";
                return r;
        }
        r = fsmount_device(fstype, loop_path, &mfd, ret_what);
        if (r < 0)
                return r;
        if (move_mount(mfd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return fail("move_mount", ret_what);
        return 0;
}

int raw_umount(const char *dir, uint64_t *ret_ns) {
        uint64_t t0 = stats_now_ns();

        if (umount2(dir, UMOUNT_NOFOLLOW) < 0)
                return -errno;
        *ret_ns = stats_now_ns() - t0;
        return 0;
}

int raw_mount_image(const char *fstype, int image_fd, RawTimes *ret, const char **ret_what) {
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        UmError error = {};
        uint64_t t0, t1;
        int r;

        t0 = stats_now_ns();
        r = loop_attach(image_fd, true, &loop_fd, &loop_path, &error);
        if (r < 0) {
                if (ret_what)
                        *ret_what = "loop_attach";
                return r;
        }
        t1 = stats_now_ns();
        r = raw_mount_device(fstype, loop_path, ret_what);
        if (r < 0)
                return r;
        *ret = (RawTimes) { .loop_ns = t1 - t0, .mount_ns = stats_now_ns() - t1 };
        return 0;
}

static int send_fd(int sock, int fd) {
        char byte = 0;
        const struct iovec iov = { .iov_base = &byte, .iov_len = 1 };

        return fdpass_send(sock, &iov, 1, &fd, 1);
}

/* The fd sent by send_fd(); -EPROTO when the child sent none (it failed). */
static int recv_fd(int sock, int *ret_fd) {
        char byte;
        size_t n_fds;
        ssize_t n;

        n = fdpass_recv(sock, &byte, 1, ret_fd, 1, &n_fds, 0);
        if (n < 0)
                return (int) n;
        return n == 1 && n_fds == 1 ? 0 : -EPROTO;
}

/* The child of raw_build_worker(): returns its exit status. */
static int build_worker_child(const char *fstype, int image_fd, const char *stage_dir, int sock) {
        _cleanup_close_ int loop_fd = -EBADF, mount_fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        MountOptions options = {};
        UmError error = {};
        const PolicyInput in = {
                .fstype = fstype,
                .read_only = true,
                .source_read_only = true,
                .umask = 022,
        };
        int r;

        r = policy_build_options(&in, &options, &error);
        if (r >= 0)
                r = loop_attach(image_fd, true, &loop_fd, &loop_path, &error);
        if (r >= 0) {
                const MountSpec spec = { .fstype = fstype, .source = loop_path, .options = &options };

                r = mountbuild_locked(&spec, stage_dir, &mount_fd, &error);
        }
        mount_options_done(&options);
        if (r >= 0)
                r = send_fd(sock, mount_fd);
        return r < 0 ? 1 : 0;
}

int raw_build_worker(const char *fstype, int image_fd, const char *stage_dir,
                     const char **ret_what) {
        _cleanup_close_ int mount_fd = -EBADF;
        _cleanup_close_ int parent_sock = -EBADF, child_sock = -EBADF;
        int sv[2], status, r;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return fail("socketpair", ret_what);
        parent_sock = sv[0];
        child_sock = sv[1];
        pid = fork();
        if (pid < 0)
                return fail("fork", ret_what);
        if (pid == 0) {
                parent_sock = safe_close(parent_sock);
                _exit(build_worker_child(fstype, image_fd, stage_dir, child_sock));
        }
        /* Without the child's end here, a child that dies unsent ends recvmsg() with 0. */
        child_sock = safe_close(child_sock);
        r = recv_fd(parent_sock, &mount_fd);
        if (waitpid(pid, &status, 0) < 0 && r >= 0)
                return fail("waitpid", ret_what);
        if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (ret_what)
                        *ret_what = "the build worker (loop_attach, mountbuild_locked)";
                return r < 0 ? r : -EIO;
        }
        return 0;
}

/* The child of raw_probe_worker(): returns its exit status. */
static int probe_worker_child(const char *fstype, int image_fd, int sock) {
        _cleanup_free_ char *loop = NULL;
        SourceProbe probe = {};
        SourceInfo info = {};
        UmError error = {};
        int r;

        r = source_inspect_fd(image_fd, &info, &error);
        if (r >= 0)
                r = loop_find_backing(image_fd, &loop);
        if (r == 0)
                r = source_probe(image_fd, &probe, &error);
        if (r < 0 || !streq(probe.fstype, fstype))
                return 1;
        return send(sock, &probe, sizeof(probe), MSG_NOSIGNAL) < 0 ? 1 : 0;
}

int raw_probe_worker(const char *fstype, int image_fd, const char **ret_what) {
        _cleanup_close_ int parent_sock = -EBADF, child_sock = -EBADF;
        SourceProbe probe;
        int sv[2], status;
        ssize_t n;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return fail("socketpair", ret_what);
        parent_sock = sv[0];
        child_sock = sv[1];
        pid = fork();
        if (pid < 0)
                return fail("fork", ret_what);
        if (pid == 0) {
                parent_sock = safe_close(parent_sock);
                _exit(probe_worker_child(fstype, image_fd, child_sock));
        }
        child_sock = safe_close(child_sock);
        n = recv(parent_sock, &probe, sizeof(probe), 0);
        if (waitpid(pid, &status, 0) < 0)
                return fail("waitpid", ret_what);
        if (n != (ssize_t) sizeof(probe) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (ret_what)
                        *ret_what = "the probe worker (source_inspect_fd, loop_find_backing, "
                                    "source_probe)";
                return -EIO;
        }
        return 0;
}

int raw_find_backing(int image_fd) {
        _cleanup_free_ char *loop = NULL;
        int r;

        r = loop_find_backing(image_fd, &loop);
        if (r < 0)
                return r;
        return r > 0 ? -EBUSY : 0;
}

int raw_fork_exit(void) {
        int status;
        pid_t pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                _exit(0);
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return 0;
}

int raw_probe(int image_fd, const char *fstype) {
        SourceProbe probe = {};
        UmError error = {};
        int r;

        r = source_probe(image_fd, &probe, &error);
        if (r < 0)
                return r;
        return streq(probe.fstype, fstype) ? 0 : -EMEDIUMTYPE;
}
