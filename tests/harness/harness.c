/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The harness's lifecycle: the private mount namespace and /run, the supervisor that
 * cleans up after the test process however it ends, the test identities in /etc, the
 * private dbus-daemon and polkitd, the daemon under test, and teardown. See harness.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/sockios.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "macro.h"
#include "usermount-names.h"

#include "harness-private.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKITD_USER "polkitd"
#define POLKITD_FALLBACK_ID 61090
#define SERVICE_STOP_TIMEOUT_MS 10000

Harness harness = {
        .bus_fd = -EBADF,
        .host_mntns_fd = -EBADF,
        .machine_fd = -EBADF,
};

/* A process the harness started and must stop at teardown. */
typedef struct Service {
        pid_t pid;
        int pidfd;
        char *name;
} Service;

static GArray *services; /* of Service, in start order */

void harness_log(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        fputs("harness: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        va_end(ap);
}

int64_t harness_now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *harness_tmpdir(void) {
        return harness.tmpdir;
}

const char *harness_bus_address(void) {
        return harness.bus_address;
}

sd_bus *harness_bus(void) {
        return harness.bus;
}

const char *harness_source_root(void) {
        return HARNESS_SOURCE_ROOT;
}

const char *harness_daemon_path(void) {
        return g_getenv("UM_USERMOUNTD");
}

const char *harness_standin_path(void) {
        return g_getenv("UM_HARNESS_STANDIN");
}

static int pidfd_open_(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? -errno : fd;
}

int harness_spawn(const char *const *argv, int keep_fd, pid_t *ret_pid, int *ret_pidfd) {
        pid_t parent = getpid(), pid;
        int pidfd;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                sigset_t none;

                /* Die with the test process; never write to its TAP stream. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(127);
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGPIPE, SIG_DFL);
                if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                        _exit(127);
                if (keep_fd >= 0 && fcntl(keep_fd, F_SETFD, 0) < 0)
                        _exit(127);
                execv(argv[0], (char *const *) argv);
                fprintf(stderr, "harness: cannot execute %s: %m\n", argv[0]);
                _exit(127);
        }

        pidfd = pidfd_open_(pid);
        if (pidfd < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return pidfd;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

int harness_reap(pid_t pid, int pidfd, int timeout_ms, int *ret_wait_status) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int status = 0, killed = 0, r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        if (r == 0) {
                kill(pid, SIGKILL);
                killed = 1;
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (ret_wait_status)
                *ret_wait_status = status;
        return killed;
}

int harness_write_attribute(const char *path, const char *value) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (write(fd, value, strlen(value)) != (ssize_t) strlen(value))
                return -errno;
        return 0;
}

static char *find_program(const char *name) {
        static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
        char *p = g_find_program_in_path(name);

        for (size_t i = 0; !p && i < ELEMENTSOF(dirs); i++) {
                p = g_build_filename(dirs[i], name, NULL);
                if (access(p, X_OK) < 0)
                        g_clear_pointer(&p, g_free);
        }
        return p;
}

int harness_run_command(const char *const *argv) {
        g_autofree char *program = find_program(argv[0]);
        g_autofree char *out = NULL, *err = NULL;
        g_autoptr(GError) error = NULL;
        g_auto(GStrv) copy = g_strdupv((char **) argv);
        int status;

        if (!program) {
                harness_log("%s not found", argv[0]);
                return -ENOENT;
        }
        g_free(copy[0]);
        copy[0] = g_steal_pointer(&program);
        if (!g_spawn_sync(NULL, copy, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                    &error)) {
                harness_log("cannot run %s: %s", argv[0], error->message);
                return -EIO;
        }
        if (!g_spawn_check_wait_status(status, NULL)) {
                g_autofree char *cmdline = g_strjoinv(" ", copy);

                harness_log("'%s' failed (wait status %d):\n%s%s", cmdline, status, out, err);
                return -EIO;
        }
        return 0;
}

static int service_start(const char *name, const char *const *argv, const char *bus_name,
        pid_t *ret_pid) {
        Service s = { .name = g_strdup(name) };
        int r;

        r = harness_spawn(argv, -1, &s.pid, &s.pidfd);
        if (r < 0) {
                harness_log("cannot start %s: %s", name, g_strerror(-r));
                g_free(s.name);
                return r;
        }
        r = harness_bus_wait_for_name(bus_name, s.pid, s.pidfd, HARNESS_TIMEOUT_MS);
        if (r < 0) {
                int status = 0;

                harness_log("%s (pid %d) %s", name, (int) s.pid,
                        r == -ESRCH       ? "exited before it owned its bus name"
                        : r == -ETIMEDOUT ? "did not appear on the bus in time"
                                          : g_strerror(-r));
                harness_reap(s.pid, s.pidfd, 0, &status);
                if (r == -ESRCH)
                        harness_log("%s wait status: %d", name, status);
                close(s.pidfd);
                g_free(s.name);
                return r;
        }
        g_array_append_val(services, s);
        if (ret_pid)
                *ret_pid = s.pid;
        return 0;
}

static int service_stop_at(guint index, int timeout_ms, int *ret_wait_status) {
        Service *s = &g_array_index(services, Service, index);
        int r;

        kill(s->pid, SIGTERM);
        r = harness_reap(s->pid, s->pidfd, timeout_ms, ret_wait_status);
        if (r > 0)
                harness_log("%s (pid %d) did not stop on SIGTERM, killed", s->name, (int) s->pid);
        close(s->pidfd);
        g_free(s->name);
        g_array_remove_index(services, index);
        return r;
}

/*
 * Returns once the daemon has answered a call: its name on the bus is not enough. Between
 * taking the name and its first event loop iteration it still starts up (arms its idle
 * timer, and sd-event reads the boot id through a passing fd), and a test that counts its
 * fds or stops it right away must not see that.
 */
static int daemon_wait_serving(pid_t pid) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(harness.bus, UM_BUS_NAME, UM_OBJECT_PATH,
                               "org.freedesktop.DBus.Peer", "Ping", &error, &reply, NULL);
        if (r < 0)
                harness_log("usermountd (pid %d) did not answer a Ping: %s", (int) pid,
                            error.message ?: g_strerror(-r));
        return r;
}

int harness_start_daemon(const char *path, const char *const *extra_args, pid_t *ret_pid) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        pid_t pid;
        int r;

        if (!harness.initialized || !path)
                return -EINVAL;
        g_ptr_array_add(argv, (char *) path);
        for (size_t i = 0; extra_args && extra_args[i]; i++)
                g_ptr_array_add(argv, (char *) extra_args[i]);
        g_ptr_array_add(argv, NULL);
        r = service_start(path, (const char *const *) argv->pdata, UM_BUS_NAME, &pid);
        if (r < 0)
                return r;
        r = daemon_wait_serving(pid);
        if (r < 0) {
                (void) harness_stop_daemon(pid, NULL);
                return r;
        }
        if (ret_pid)
                *ret_pid = pid;
        return 0;
}

int harness_stop_daemon(pid_t pid, int *ret_wait_status) {
        for (guint i = 0; services && i < services->len; i++)
                if (g_array_index(services, Service, i).pid == pid)
                        return service_stop_at(i, SERVICE_STOP_TIMEOUT_MS, ret_wait_status);
        return -ESRCH;
}

/* ---------------------------------------------------------------------------------- */

static int write_file(const char *path, const char *contents, mode_t mode) {
        g_autoptr(GError) error = NULL;

        if (!g_file_set_contents_full(path, contents, -1, G_FILE_SET_CONTENTS_CONSISTENT, mode,
                    &error)) {
                harness_log("cannot write %s: %s", path, error->message);
                return -EIO;
        }
        return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode) {
        g_autofree char *contents = NULL;
        g_autoptr(GError) error = NULL;

        if (!g_file_get_contents(from, &contents, NULL, &error)) {
                harness_log("cannot read %s: %s", from, error->message);
                return -EIO;
        }
        return write_file(to, contents, mode);
}

static int make_dir(const char *path, mode_t mode) {
        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return -errno;
        if (chmod(path, mode) < 0)
                return -errno;
        return 0;
}

static int bind_mount(const char *from, const char *to) {
        if (mount(from, to, NULL, MS_BIND, NULL) < 0) {
                int r = -errno;

                harness_log("cannot bind-mount %s on %s: %s", from, to, g_strerror(-r));
                return r;
        }
        return 0;
}

/* The private mount namespace, with a tmpfs on /run holding the temporary directory: no
 * file the harness or the daemon creates there can outlive the namespace. */
static int setup_namespace(bool private_network) {
        static const char *const subdirs[] = { "bus", "images", "mnt", "etc", "etc/upper",
                "etc/work", "etc/files", "polkit", "polkit/actions", "polkit/rules-etc",
                "polkit/rules-usr", "tmp" };
        struct stat st;
        int r;

        /* A network namespace keeps the harness's udevd's events among the harness's
         * processes (unix sockets by path, the bus's among them, work across it). */
        if (unshare(CLONE_NEWNS | (private_network ? CLONE_NEWNET : 0)) < 0)
                return -errno;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        if (mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
                return -errno;
        if (stat("/run", &st) < 0)
                return -errno;
        harness.run_dev = st.st_dev;

        harness.tmpdir = g_strdup("/run/usermount-harness.XXXXXX");
        if (!mkdtemp(harness.tmpdir))
                return -errno;
        /* Callers must reach the bus socket and images; polkitd (as its own user) the
         * rules and actions. */
        if (chmod(harness.tmpdir, 0755) < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                g_autofree char *p = g_build_filename(harness.tmpdir, subdirs[i], NULL);

                r = make_dir(p, streq(subdirs[i], "tmp") ? 01777 : 0755);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The supervisor                                                                      */

static volatile sig_atomic_t supervised_pid;

static void supervisor_forward_signal(int sig) {
        if (supervised_pid > 0)
                kill(supervised_pid, sig);
}

int harness_process_stat(pid_t pid, HarnessProcessStat *ret) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid), *stat = NULL;
        const char *open_paren, *close_paren;
        HarnessProcessStat st = {};
        int ppid;

        if (!g_file_get_contents(path, &stat, NULL, NULL))
                return -ESRCH;
        /* "pid (comm) state ppid ... starttime(22) ...": comm may hold anything. */
        open_paren = strchr(stat, '(');
        close_paren = strrchr(stat, ')');
        if (!open_paren || !close_paren || close_paren < open_paren ||
            sscanf(close_paren + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                                    "%*d %*d %*d %*d %llu", &st.state, &ppid, &st.start_time) != 3)
                return -EBADMSG;
        st.ppid = (pid_t) ppid;
        g_strlcpy(st.comm, open_paren + 1,
                  MIN(sizeof(st.comm), (size_t) (close_paren - open_paren)));
        *ret = st;
        return 0;
}

static pid_t proc_parent_of(const char *pid) {
        HarnessProcessStat st;

        return harness_process_stat((pid_t) atoi(pid), &st) < 0 ? -1 : st.ppid;
}

/* Kills every process below the supervisor. It is a child subreaper, so orphans of the
 * test process (polkitd, dbus-daemon, the daemon and its workers, callers) become its
 * children; repeat until none is left. */
static int supervisor_kill_descendants(void) {
        pid_t self = getpid();
        int killed = 0;

        for (;;) {
                g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
                const char *name;
                int found = 0;

                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                while (dir && (name = g_dir_read_name(dir)))
                        if (g_ascii_isdigit(name[0]) && proc_parent_of(name) == self) {
                                kill((pid_t) atoi(name), SIGKILL);
                                found++;
                        }
                killed += found;
                if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
                        return killed;
        }
}

/* ---- the lists of what to release ---- */

static GHashTable *kept_lists; /* the janitor's copy: name -> text */

static const char *const list_names[] = {
        HARNESS_LIST_KILL, HARNESS_LIST_ZRAM, HARNESS_LIST_CGROUPS, HARNESS_LIST_DEV_DIRS,
        HARNESS_LIST_LOOPS_BEFORE,
};

char *harness_list_read(const char *name) {
        g_autofree char *path = NULL;
        char *contents = NULL;

        if (kept_lists)
                return g_strdup(g_hash_table_lookup(kept_lists, name));
        if (!harness.tmpdir)
                return NULL;
        path = g_build_filename(harness.tmpdir, name, NULL);
        if (!g_file_get_contents(path, &contents, NULL, NULL))
                return NULL;
        return contents;
}

int harness_list_write(const char *name, const char *contents) {
        g_autofree char *path = NULL;

        if (kept_lists) {
                g_hash_table_insert(kept_lists, g_strdup(name), g_strdup(contents));
                return 0;
        }
        if (!harness.tmpdir)
                return -EINVAL;
        path = g_build_filename(harness.tmpdir, name, NULL);
        return g_file_set_contents(path, contents, -1, NULL) ? 0 : -EIO;
}

int harness_list_append(const char *name, const char *line) {
        g_autofree char *old = harness_list_read(name), *all = NULL;

        all = g_strdup_printf("%s%s\n", strempty(old), line);
        return harness_list_write(name, all);
}

void harness_list_remove(const char *name) {
        g_autofree char *path = NULL;

        if (kept_lists) {
                g_hash_table_remove(kept_lists, name);
                return;
        }
        if (!harness.tmpdir)
                return;
        path = g_build_filename(harness.tmpdir, name, NULL);
        (void) unlink(path);
}

void harness_lists_keep(void) {
        GHashTable *lists = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        for (size_t i = 0; i < ELEMENTSOF(list_names); i++) {
                char *contents = harness_list_read(list_names[i]);

                if (contents)
                        g_hash_table_insert(lists, g_strdup(list_names[i]), contents);
        }
        kept_lists = lists;
}

/* ---- processes to kill at the end ---- */

/* The start time of pid (/proc/PID/stat field 22), or 0. */
static unsigned long long process_start_time(pid_t pid) {
        HarnessProcessStat st;

        return harness_process_stat(pid, &st) < 0 ? 0 : st.start_time;
}

int harness_kill_at_exit(pid_t pid) {
        g_autofree char *line = NULL;
        unsigned long long start = process_start_time(pid);

        if (!harness.tmpdir || pid <= 0)
                return -EINVAL;
        if (start == 0)
                return -ESRCH;
        line = g_strdup_printf("%d %llu", (int) pid, start);
        return harness_list_append(HARNESS_LIST_KILL, line);
}

/* Kills what harness_kill_at_exit() listed and still runs (the same process: same start
 * time), and forgets the list. */
static void harness_kill_listed(void) {
        g_autofree char *contents = harness_list_read(HARNESS_LIST_KILL);
        g_auto(GStrv) lines = NULL;

        if (!contents)
                return;
        lines = g_strsplit(contents, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                unsigned long long start;
                int pid;

                if (sscanf(lines[i], "%d %llu", &pid, &start) == 2 && pid > 0 &&
                    process_start_time(pid) == start)
                        kill(pid, SIGKILL);
        }
        harness_list_remove(HARNESS_LIST_KILL);
}

/* What only code can undo, after the processes are gone: devices, cgroups, directories.
 * wait_ms: how long devices still being released (unmounted lazily, detached) may take. */
static int release_leftovers(int wait_ms) {
        int n;

        harness_kill_listed();
        n = harness_detach_leftover_loops() + harness_release_leftover_zrams();
        /* A container's cgroups empty a moment after its processes died. */
        for (int i = 0; i < 100 && harness_cgroup_remove() == -EBUSY; i++)
                usleep(20 * 1000);
        n += harness_release_new_loops(wait_ms);
        harness_udev_release();
        return n;
}

static _noreturn_ void supervisor_run(pid_t child) {
        struct sigaction sa = { .sa_handler = supervisor_forward_signal, .sa_flags = SA_RESTART };
        static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
        int status = 0, killed, detached;

        supervised_pid = child;
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                sigaction(forwarded[i], &sa, NULL);

        /* A subreaper adopts the orphans below it (a daemon's userspace drivers, once the
         * worker that started them has exited): each is reaped as it exits, as init would,
         * so that none lingers as a zombie that keeps its uid and its /proc entry. */
        for (;;) {
                int st = 0;
                pid_t pid = waitpid(-1, &st, 0);

                if (pid == child) {
                        status = st;
                        break;
                }
                if (pid < 0 && errno != EINTR) {
                        status = 1 << 8;
                        break;
                }
        }
        supervised_pid = 0;

        /* A process stuck in the kernel (a hung filesystem) must not hang the test run. */
        alarm(20);
        killed = supervisor_kill_descendants();
        detached = release_leftovers(5000);
        if (killed > 0 || detached > 0)
                harness_log("supervisor: killed %d leftover process(es), removed %d loop or "
                            "zram device(s)", killed, detached);
        /* The private mount namespace, and the tmpfs on /run with everything in it, go
         * away when this process exits. */
        fflush(stderr);
        if (WIFSIGNALED(status)) {
                struct rlimit no_core = { 0, 0 };

                setrlimit(RLIMIT_CORE, &no_core);
                signal(WTERMSIG(status), SIG_DFL);
                kill(getpid(), WTERMSIG(status));
                _exit(128 + WTERMSIG(status));
        }
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/*
 * The janitor: for the one end the supervisor cannot see, a SIGKILL of the whole process
 * group (a test runner's last word on a timeout), which kills the supervisor too. The
 * kernel then undoes mounts and auto-clearing loop devices, but not the directories made
 * on the host's /dev, zram disks, cgroups or a container whose PID 1 escaped. The janitor
 * is outside the group and below nobody of ours, holds no fd of the test, waits for the
 * supervisor to go, releases what is still listed (normally nothing: the supervisor did),
 * and exits, letting the private namespaces go.
 */
static void start_janitor(pid_t supervisor) {
        pid_t pid = fork();

        if (pid != 0) {
                if (pid > 0)
                        (void) waitpid(pid, NULL, 0);
                return;
        }
        if (fork() != 0)
                _exit(0);
        /* Reparented above us; a session of its own, out of the test's process group. */
        (void) setsid();
        (void) prctl(PR_SET_NAME, "um-harness-jan");
        {
                /* Nothing of the test's but the supervisor's pidfd (3), the mount
                 * namespace the harness started in (4) and the run's claim of the machine
                 * (5), moved out of the way first. */
                int pidfd = (int) syscall(SYS_pidfd_open, supervisor, 0);
                int high_pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 100) : -1;
                int high_mntns = harness.host_mntns_fd >= 0 ?
                                         fcntl(harness.host_mntns_fd, F_DUPFD_CLOEXEC, 100) : -1;
                int high_claim = harness.machine_fd >= 0 ?
                                         fcntl(harness.machine_fd, F_DUPFD_CLOEXEC, 100) : -1;
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                struct pollfd p = { .fd = 3, .events = POLLIN };

                if (null >= 0) {
                        dup2(null, STDIN_FILENO);
                        dup2(null, STDOUT_FILENO);
                        dup2(null, STDERR_FILENO);
                }
                harness.host_mntns_fd = high_mntns >= 0 && dup2(high_mntns, 4) >= 0 ? 4 : -EBADF;
                harness.machine_fd = high_claim >= 0 && dup2(high_claim, 5) >= 0 ? 5 : -EBADF;
                if (high_pidfd < 0 || dup2(high_pidfd, 3) < 0)
                        p.fd = -1; /* the supervisor is gone already */
                close_range(6, ~0U, 0);
                while (p.fd >= 0 && poll(&p, 1, -1) < 0 && errno == EINTR)
                        ;
        }
        /* What to release, from the lists on the private /run: then out of the private
         * namespaces, which die with the last process in them (this one), and with them
         * every mount that still held a device. */
        harness_lists_keep();
        if (harness.host_mntns_fd >= 0)
                (void) setns(harness.host_mntns_fd, CLONE_NEWNS);
        (void) release_leftovers(10000);
        _exit(0);
}

/*
 * One harness at a time on a machine. Two runs at once share what no namespace makes
 * private: the host's /dev (the directories udevd writes under are made there when
 * missing), its loop devices (the janitor frees the ones made since it started), zram
 * disks and cgroups; they have left udev's links on the host. So the first harness of a
 * run holds a listening abstract Unix socket of a fixed name in the host's network
 * namespace (it vanishes with its last holder: the test, its supervisor and its janitor
 * all inherit it), and another run is refused, naming the holder, before it changes
 * anything. A g_test subprocess attaches to its parent's harness and claims nothing.
 *
 * The previous test program of a run lets go only once its janitor has cleaned up, a
 * moment after the program itself ended: a claim found held is waited for, up to
 * HARNESS_MACHINE_WAIT_MS (UM_HARNESS_CLAIM_WAIT_MS= in ms overrides it), before the run
 * is refused.
 */
#define HARNESS_MACHINE_LOCK "usermount-test-harness"
#define HARNESS_MACHINE_WAIT_MS 30000

/* Binds the claim: 0, -EADDRINUSE while another run holds it, or another -errno. */
static int claim_machine_once(const struct sockaddr_un *sa, socklen_t len) {
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *) sa, len) < 0 || listen(fd, 16) < 0)
                return -errno;
        harness.machine_fd = TAKE_FD(fd);
        return 0;
}

static int claim_machine(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const socklen_t len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 +
                                           strlen(HARNESS_MACHINE_LOCK));
        const char *wait_env = g_getenv("UM_HARNESS_CLAIM_WAIT_MS");
        const gint64 wait_ms = wait_env ? g_ascii_strtoll(wait_env, NULL, 10)
                                        : HARNESS_MACHINE_WAIT_MS;
        const gint64 deadline = g_get_monotonic_time() + wait_ms * 1000;
        _cleanup_close_ int probe = -EBADF;
        struct ucred holder = {};
        socklen_t n = sizeof(holder);
        int r;

        memcpy(sa.sun_path + 1, HARNESS_MACHINE_LOCK, strlen(HARNESS_MACHINE_LOCK));
        while ((r = claim_machine_once(&sa, len)) == -EADDRINUSE &&
               g_get_monotonic_time() < deadline)
                g_usleep(50 * 1000);
        if (r != -EADDRINUSE)
                return r;
        probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *) &sa, len) == 0)
                (void) getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &holder, &n);
        harness_log("another usermount test run holds this machine (process %d): the test "
                    "harness changes the host's /dev, loop devices and zram disks, which two "
                    "runs at once would share; wait for it to finish, then run again",
                    (int) holder.pid);
        return -EBUSY;
}

int harness_open_claim_netns(void) {
        int fd;

        if (harness.machine_fd < 0)
                return -EBADF;
        /* SIOCGSKNS: the socket's network namespace, opened (O_CLOEXEC). */
        fd = ioctl(harness.machine_fd, SIOCGSKNS);
        return fd < 0 ? -errno : fd;
}

static int supervise(void) {
        pid_t parent = getpid(), pid;

        fflush(stdout);
        fflush(stderr);
        start_janitor(parent);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0)
                supervisor_run(pid);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Identities                                                                          */

static bool identity_taken(const char *name, uid_t uid, bool group) {
        if (group)
                return getgrnam(name) || getgrgid(uid);
        return getpwnam(name) || getpwuid(uid);
}

/* /etc/shadow as Debian keeps it: root:shadow 0640, which unix_chkpwd relies on. */
static int write_shadow(const char *contents) {
        struct group *gr = getgrnam("shadow");
        int r;

        r = write_file("/etc/shadow", contents, 0640);
        if (r < 0)
                return r;
        if (chown("/etc/shadow", 0, gr ? gr->gr_gid : 0) < 0)
                return -errno;
        return 0;
}

static int setup_identities(void) {
        /* SHA-512 crypt() hashes of the HARNESS_PASSWORD_* values (salt "umharness"),
         * precomputed so that the harness needs no libcrypt; "!" locks the probe user. */
        static const struct {
                const char *name;
                uid_t id;
                const char *hash;
        } users[] = {
                { HARNESS_USER1, HARNESS_UID_USER1,
                  "$6$umharness$9V6YKdfqeLTymBYMhqyY1CQd.dnO/ORF0.k3z8hfOP0Lc.fp48kgUHyfPJ/M4SAPK"
                  "FxlNIW4tnb.xNKEUwzz31" },
                { HARNESS_USER2, HARNESS_UID_USER2,
                  "$6$umharness$PAq9DBABfgr1IC7MgrQu./HmNpHxpWobbwY0/e/dfTqrZhb82JMrWmqFSR55hJvw"
                  "Nde2CJ3E9.VgwXvysjc1a1" },
                { HARNESS_ADMIN, HARNESS_UID_ADMIN,
                  "$6$umharness$3jGuzsnMjbjHxh5UfBurX/8a4FfcfgRawgQwfqmuTDC0UdMhh5ZiN3oMLQhW1jXg8"
                  "yFU45L1dqYDMuUtlKmjn1" },
                { HARNESS_PROBE_USER, HARNESS_UID_PROBE, "!" },
        };
        g_autofree char *passwd = NULL, *group = NULL, *subuid = NULL, *subgid = NULL;
        g_autofree char *shadow = NULL;
        g_autoptr(GString) p = NULL, g = NULL, sub = NULL, sh = NULL;
        g_autofree char *upper = g_build_filename(harness.tmpdir, "etc/upper", NULL);
        g_autofree char *work = g_build_filename(harness.tmpdir, "etc/work", NULL);
        g_autofree char *options = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(users); i++)
                if (identity_taken(users[i].name, users[i].id, false) ||
                        identity_taken(users[i].name, users[i].id, true)) {
                        harness_log("user or group %s/%u already exists on this machine",
                                users[i].name, (unsigned) users[i].id);
                        return -EEXIST;
                }
        if (identity_taken(HARNESS_GROUP, HARNESS_GID_GROUP, true)) {
                harness_log("group %s/%u already exists on this machine", HARNESS_GROUP,
                        HARNESS_GID_GROUP);
                return -EEXIST;
        }

        if (!g_file_get_contents("/etc/passwd", &passwd, NULL, NULL) ||
                !g_file_get_contents("/etc/group", &group, NULL, NULL))
                return -EIO;
        p = g_string_new(passwd);
        g = g_string_new(group);
        if (p->len > 0 && p->str[p->len - 1] != '\n')
                g_string_append_c(p, '\n');
        if (g->len > 0 && g->str[g->len - 1] != '\n')
                g_string_append_c(g, '\n');
        g_file_get_contents("/etc/shadow", &shadow, NULL, NULL);
        sh = g_string_new(shadow);
        if (sh->len > 0 && sh->str[sh->len - 1] != '\n')
                g_string_append_c(sh, '\n');
        for (size_t i = 0; i < ELEMENTSOF(users); i++) {
                /* No aging: the account is valid whatever the date. */
                g_string_append_printf(sh, "%s:%s:19000:0:99999:7:::\n", users[i].name,
                        users[i].hash);
                g_string_append_printf(p, "%s:x:%u:%u:usermount test user:/nonexistent:"
                                          "/usr/sbin/nologin\n",
                        users[i].name, (unsigned) users[i].id, (unsigned) users[i].id);
                g_string_append_printf(g, "%s:x:%u:\n", users[i].name, (unsigned) users[i].id);
        }
        g_string_append_printf(g, "%s:x:%u:%s\n", HARNESS_GROUP, HARNESS_GID_GROUP,
                HARNESS_ADMIN);
        /* polkitd switches to this user; give it one if the machine has none. */
        if (!getpwnam(POLKITD_USER)) {
                g_string_append_printf(p, "%s:x:%u:%u:polkit:/:/usr/sbin/nologin\n",
                        POLKITD_USER, POLKITD_FALLBACK_ID, POLKITD_FALLBACK_ID);
                g_string_append_printf(g, "%s:x:%u:\n", POLKITD_USER, POLKITD_FALLBACK_ID);
        }

        g_file_get_contents("/etc/subuid", &subuid, NULL, NULL);
        g_file_get_contents("/etc/subgid", &subgid, NULL, NULL);
        sub = g_string_new(NULL);
        g_string_append_printf(sub, "%s:%u:%u\n%s:%u:%u\n", HARNESS_USER1,
                HARNESS_SUBID_USER1_START, HARNESS_SUBID_COUNT, HARNESS_USER2,
                HARNESS_SUBID_USER2_START, HARNESS_SUBID_COUNT);

        /* Preferably /etc becomes an overlay whose changes live on the private /run: then
         * files that do not exist on the host (subuid, usermount.conf) can be added. */
        options = g_strdup_printf("lowerdir=/etc,upperdir=%s,workdir=%s", upper, work);
        if (mount("overlay", "/etc", "overlay", 0, options) == 0) {
                g_autofree char *su = g_strconcat(strempty(subuid), sub->str, NULL);
                g_autofree char *sg = g_strconcat(strempty(subgid), sub->str, NULL);

                harness.etc_overlay = true;
                if ((r = write_file("/etc/passwd", p->str, 0644)) < 0 ||
                        (r = write_file("/etc/group", g->str, 0644)) < 0 ||
                        (r = write_file("/etc/subuid", su, 0644)) < 0 ||
                        (r = write_file("/etc/subgid", sg, 0644)) < 0 ||
                        (r = write_shadow(sh->str)) < 0)
                        return r;
                /* The tests were written for the kernel's drivers, and keep them: with the
                 * shipped Driver=auto, fuse2fs and squashfuse would serve their ext4 and
                 * squashfs images. test-userspace.c and tests that write their own
                 * configuration choose for themselves. */
                if (g_mkdir_with_parents("/etc/usermount", 0755) < 0)
                        return -errno;
                return write_file("/etc/usermount/usermount.conf", HARNESS_CONF_DEFAULT, 0644);
        }

        harness_log("overlayfs on /etc failed (%m); bind-mounting passwd and group copies");
        static const char *const files[] = { "passwd", "group", "subuid", "subgid" };
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                g_autofree char *target = g_build_filename("/etc", files[i], NULL);
                g_autofree char *copy = g_build_filename(harness.tmpdir, "etc/files", files[i],
                        NULL);
                const char *base = i == 0 ? p->str : i == 1 ? g->str : NULL;
                g_autofree char *contents = base ? g_strdup(base)
                                                 : g_strconcat(i == 2 ? strempty(subuid)
                                                                      : strempty(subgid),
                                                           sub->str, NULL);

                if (access(target, F_OK) < 0)
                        continue; /* cannot add a file to the host's /etc */
                if ((r = write_file(copy, contents, 0644)) < 0 ||
                        (r = bind_mount(copy, target)) < 0)
                        return r;
        }
        return 0;
}

char *harness_conf_kernel(const char *contents) {
        const char *general = strstr(contents, "[General]\n");

        if (!general)
                return g_strconcat("[General]\nDriver=kernel\n", contents, NULL);
        general += strlen("[General]\n");
        return g_strdup_printf("%.*sDriver=kernel\n%s", (int) (general - contents), contents,
                               general);
}

int harness_write_etc(const char *relative_path, const char *contents) {
        g_autofree char *path = g_build_filename("/etc", relative_path, NULL);
        g_autofree char *dir = g_path_get_dirname(path);

        if (!harness.etc_overlay)
                return -EOPNOTSUPP;
        if (g_mkdir_with_parents(dir, 0755) < 0)
                return -errno;
        return write_file(path, contents, 0644);
}

/* ---------------------------------------------------------------------------------- */
/* dbus-daemon                                                                         */

/* The rules of Debian's /usr/share/dbus-1/system.conf: nobody owns names or receives
 * method calls unless a policy file punches a hole. */
static const char bus_policy_system[] =
        "  <policy context=\"default\">\n"
        "    <allow user=\"*\"/>\n"
        "    <deny own=\"*\"/>\n"
        "    <deny send_type=\"method_call\"/>\n"
        "    <allow send_type=\"signal\"/>\n"
        "    <allow send_requested_reply=\"true\" send_type=\"method_return\"/>\n"
        "    <allow send_requested_reply=\"true\" send_type=\"error\"/>\n"
        "    <allow receive_type=\"method_call\"/>\n"
        "    <allow receive_type=\"method_return\"/>\n"
        "    <allow receive_type=\"error\"/>\n"
        "    <allow receive_type=\"signal\"/>\n"
        "    <allow send_destination=\"org.freedesktop.DBus\"\n"
        "           send_interface=\"org.freedesktop.DBus\"/>\n"
        "    <allow send_destination=\"org.freedesktop.DBus\"\n"
        "           send_interface=\"org.freedesktop.DBus.Introspectable\"/>\n"
        "    <allow send_destination=\"org.freedesktop.DBus\"\n"
        "           send_interface=\"org.freedesktop.DBus.Properties\"/>\n"
        "    <deny send_destination=\"org.freedesktop.DBus\"\n"
        "          send_interface=\"org.freedesktop.DBus\"\n"
        "          send_member=\"UpdateActivationEnvironment\"/>\n"
        "    <deny send_destination=\"org.freedesktop.DBus\"\n"
        "          send_interface=\"org.freedesktop.DBus.Debug.Stats\"/>\n"
        "  </policy>\n"
        "  <policy user=\"root\">\n"
        "    <allow send_destination=\"org.freedesktop.DBus\"\n"
        "           send_interface=\"org.freedesktop.DBus.Monitoring\"/>\n"
        "  </policy>\n"
        /* What Debian's system.d/org.freedesktop.PolicyKit1.conf allows. */
        "  <policy user=\"" POLKITD_USER "\">\n"
        "    <allow own=\"org.freedesktop.PolicyKit1\"/>\n"
        "    <allow send_interface=\"org.freedesktop.PolicyKit1.AuthenticationAgent\"/>\n"
        "  </policy>\n"
        "  <policy context=\"default\">\n"
        "    <allow send_destination=\"org.freedesktop.PolicyKit1\"/>\n"
        "  </policy>\n";

static const char bus_policy_allow_all[] =
        "  <policy context=\"default\">\n"
        "    <allow user=\"*\"/>\n"
        "    <allow own=\"*\"/>\n"
        "    <allow send_type=\"method_call\"/>\n"
        "    <allow send_type=\"signal\"/>\n"
        "    <allow send_requested_reply=\"true\" send_type=\"method_return\"/>\n"
        "    <allow send_requested_reply=\"true\" send_type=\"error\"/>\n"
        "    <allow receive_type=\"method_call\"/>\n"
        "    <allow receive_type=\"method_return\"/>\n"
        "    <allow receive_type=\"error\"/>\n"
        "    <allow receive_type=\"signal\"/>\n"
        "  </policy>\n";

static int read_line_from(int fd, int pidfd, int timeout_ms, char *buf, size_t size) {
        int64_t deadline = harness_now_ms() + timeout_ms;
        size_t n = 0;

        while (n + 1 < size) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
                        { .fd = pidfd, .events = POLLIN } };
                int64_t left = deadline - harness_now_ms();
                ssize_t k;

                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(p, 2, (int) left) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (!(p[0].revents & (POLLIN | POLLHUP))) {
                        if (p[1].revents)
                                return -ESRCH;
                        continue;
                }
                k = read(fd, buf + n, size - 1 - n);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k == 0)
                        return -ESRCH;
                if (k > 0)
                        n += (size_t) k;
                buf[n] = 0;
                if (strchr(buf, '\n'))
                        return 0;
        }
        return -ENOBUFS;
}

static int start_bus(const HarnessOptions *options) {
        g_autofree char *config = g_build_filename(harness.tmpdir, "bus/system.conf", NULL);
        g_autofree char *program = find_program("dbus-daemon");
        g_autofree char *contents = NULL, *config_arg = NULL, *address_arg = NULL;
        g_autofree char *service_dir = NULL;
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
        Service s = { .name = g_strdup("dbus-daemon") };
        char line[512];
        int fds[2], r;

        if (!program) {
                harness_log("dbus-daemon not found");
                return -ENOENT;
        }
        harness.bus_socket = g_build_filename(harness.tmpdir, "bus/system_bus_socket", NULL);
        harness.bus_address = g_strdup_printf("unix:path=%s", harness.bus_socket);
        service_dir = options->bus_service_dir
                ? g_markup_printf_escaped("  <servicedir>%s</servicedir>\n", options->bus_service_dir)
                : g_strdup("");
        contents = g_strdup_printf(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration "
                "1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<!-- The usermount test harness's private system bus. -->\n"
                "<busconfig>\n"
                "  <type>system</type>\n"
                "  <listen>unix:path=%s</listen>\n"
                "  <auth>EXTERNAL</auth>\n"
                "%s"
                "%s"
                "  <include ignore_missing=\"no\">%s</include>\n"
                "  <include ignore_missing=\"no\">%s</include>\n"
                "</busconfig>\n",
                harness.bus_socket, service_dir,
                options->bus_allow_all ? bus_policy_allow_all : bus_policy_system,
                HARNESS_BUS_POLICY, HARNESS_UDISKS2_BUS_POLICY);
        r = write_file(config, contents, 0644);
        if (r < 0)
                return r;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        rfd = fds[0];
        wfd = fds[1];
        config_arg = g_strdup_printf("--config-file=%s", config);
        address_arg = g_strdup_printf("--print-address=%d", wfd);
        const char *argv[] = { program, config_arg, "--nofork", "--nosyslog", address_arg,
                NULL };
        r = harness_spawn(argv, wfd, &s.pid, &s.pidfd);
        if (r < 0)
                return r;
        wfd = safe_close(wfd);
        g_array_append_val(services, s);

        /* dbus-daemon prints its address once it listens. */
        r = read_line_from(rfd, s.pidfd, HARNESS_TIMEOUT_MS, line, sizeof(line));
        if (r < 0) {
                harness_log("dbus-daemon did not start: %s", g_strerror(-r));
                return r;
        }
        if (chmod(harness.bus_socket, 0777) < 0)
                return -errno;

        /* Clients that ignore DBUS_SYSTEM_BUS_ADDRESS find the private bus too. */
        if (make_dir("/run/dbus", 0755) < 0 ||
                symlink(harness.bus_socket, "/run/dbus/system_bus_socket") < 0)
                return -errno;

        g_setenv("DBUS_SYSTEM_BUS_ADDRESS", harness.bus_address, TRUE);
        return harness_bus_open();
}

/* ---------------------------------------------------------------------------------- */
/* polkitd                                                                             */

static char *find_polkitd(void) {
        static const char *const candidates[] = { "/usr/lib/polkit-1/polkitd",
                "/usr/libexec/polkitd", "/usr/libexec/polkit-1/polkitd" };

        for (size_t i = 0; i < ELEMENTSOF(candidates); i++)
                if (access(candidates[i], X_OK) == 0)
                        return g_strdup(candidates[i]);
        return NULL;
}

static int start_polkit(const HarnessOptions *options) {
        g_autofree char *actions = g_build_filename(harness.tmpdir, "polkit/actions", NULL);
        g_autofree char *rules_etc = g_build_filename(harness.tmpdir, "polkit/rules-etc", NULL);
        g_autofree char *rules_usr = g_build_filename(harness.tmpdir, "polkit/rules-usr", NULL);
        g_autofree char *policy = g_build_filename(actions, "org.freedesktop.usermount1.policy",
                NULL);
        g_autofree char *probe = g_build_filename(actions,
                "org.freedesktop.usermount1.harness.policy", NULL);
        g_autofree char *program = find_polkitd();
        bool debug = options->polkit_debug || !isempty(g_getenv("UM_HARNESS_DEBUG"));
        int r;

        if (!program) {
                harness_log("polkitd not found");
                return -ENOENT;
        }
        if ((r = copy_file(HARNESS_POLKIT_POLICY, policy, 0644)) < 0 ||
                (r = copy_file(HARNESS_PROBE_POLICY, probe, 0644)) < 0)
                return r;
        for (size_t i = 0; options->extra_polkit_policies && options->extra_polkit_policies[i];
             i++) {
                g_autofree char *base = g_path_get_basename(options->extra_polkit_policies[i]);
                g_autofree char *to = g_build_filename(actions, base, NULL);

                r = copy_file(options->extra_polkit_policies[i], to, 0644);
                if (r < 0)
                        return r;
        }
        if (access("/etc/polkit-1/rules.d", F_OK) < 0 && harness.etc_overlay &&
                g_mkdir_with_parents("/etc/polkit-1/rules.d", 0700) < 0)
                return -errno;
        /* Only the project's actions, and no rules but the test's: the host's own policy
         * and rules (e.g. "sudo members are admins") must not decide a test. */
        if ((r = bind_mount(actions, "/usr/share/polkit-1/actions")) < 0 ||
                (r = bind_mount(rules_etc, "/etc/polkit-1/rules.d")) < 0 ||
                (r = bind_mount(rules_usr, "/usr/share/polkit-1/rules.d")) < 0)
                return r;

        const char *argv[] = { program, debug ? NULL : "--no-debug", NULL };
        return service_start("polkitd", argv, POLKIT_BUS_NAME, NULL);
}

/* ---------------------------------------------------------------------------------- */
/* systemd-udevd                                                                       */

static int start_udevd(void) {
        g_autofree char *program = harness_udevd_path();
        Service s = { .name = g_strdup("systemd-udevd") };
        int64_t deadline;
        int r;

        if (!program) {
                harness_log("systemd-udevd not found; the udev package has it "
                            "(tools/install-deps)");
                g_free(s.name);
                return -ENOENT;
        }
        r = harness_udev_prepare();
        if (r < 0) {
                g_free(s.name);
                return r;
        }
        /* Its messages go to stderr like every service's, not to a journal or kmsg. */
        g_setenv("SYSTEMD_LOG_TARGET", "console", TRUE);
        const char *argv[] = { program, NULL };
        r = harness_spawn(argv, -1, &s.pid, &s.pidfd);
        g_unsetenv("SYSTEMD_LOG_TARGET");
        if (r < 0) {
                harness_log("cannot start systemd-udevd: %s", g_strerror(-r));
                g_free(s.name);
                return r;
        }
        g_array_append_val(services, s);

        /* It serves once its control socket is there (the daemon under test looks for it). */
        deadline = harness_now_ms() + HARNESS_TIMEOUT_MS;
        while (access("/run/udev/control", F_OK) < 0) {
                struct pollfd p = { .fd = s.pidfd, .events = POLLIN };

                if (poll(&p, 1, 10) > 0) {
                        harness_log("systemd-udevd exited at start");
                        return -ESRCH;
                }
                if (harness_now_ms() > deadline) {
                        harness_log("systemd-udevd did not start listening in time");
                        return -ETIMEDOUT;
                }
        }
        harness.udevd = true;
        return 0;
}

/* ---------------------------------------------------------------------------------- */

/* The rules probe's subject: connected to the bus until released at teardown. */
static int probe_subject_main(void *userdata) {
        sd_bus *bus = NULL;
        const char *name;

        if (harness_sd_bus_connect(&bus) < 0 || sd_bus_get_unique_name(bus, &name) < 0)
                return 1;
        harness_report("%s", name);
        harness_await_release();
        sd_bus_flush_close_unref(bus);
        return 0;
}

static int start_probe_subject(void) {
        int r;

        r = harness_caller_spawn(HARNESS_UID_PROBE, HARNESS_UID_PROBE,
                HARNESS_NO_SUPPLEMENTARY_GROUPS, probe_subject_main, NULL, &harness.probe);
        if (r < 0)
                return r;
        r = harness_caller_read_line(harness.probe, HARNESS_TIMEOUT_MS, &harness.probe_name);
        if (r < 0)
                harness_log("the polkit probe subject did not connect: %s", g_strerror(-r));
        return r;
}

static void stop_probe_subject(void) {
        if (!harness.probe)
                return;
        harness_caller_release(harness.probe);
        harness_caller_wait(harness.probe, SERVICE_STOP_TIMEOUT_MS, NULL);
        harness.probe = harness_caller_free(harness.probe);
        g_clear_pointer(&harness.probe_name, g_free);
}

/* ---------------------------------------------------------------------------------- */

/* A g_test subprocess runs inside the environment its parent built. */
static int attach(const char *tmpdir) {
        struct stat st;

        if (stat("/run", &st) < 0)
                return -errno;
        harness.tmpdir = g_strdup(tmpdir);
        harness.run_dev = st.st_dev;
        harness.bus_address = g_strdup(g_getenv("DBUS_SYSTEM_BUS_ADDRESS"));
        harness.attached = true;
        harness.test_pid = getpid();
        harness.initialized = true;
        services = g_array_new(FALSE, FALSE, sizeof(Service));
        return harness_bus_open();
}

int harness_init(const HarnessOptions *options) {
        static const HarnessOptions defaults = {};
        const char *inherited = g_getenv("UM_HARNESS_TMPDIR");
        g_autofree char *tmp = NULL;
        int r;

        if (harness.initialized)
                return -EALREADY;
        if (geteuid() != 0)
                return -EPERM;
        if (!options)
                options = &defaults;
        if (inherited && g_test_subprocess())
                return attach(inherited);

        r = claim_machine();
        if (r < 0)
                return r;
        /* Where the janitor goes back to, to let the private namespaces go. */
        harness.host_mntns_fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        r = setup_namespace(!options->namespace_only && !options->without_udevd);
        if (r >= 0)
                r = harness_loops_note_existing();
        if (r < 0) {
                harness_log("cannot set up a private mount namespace: %s", g_strerror(-r));
                return r;
        }
        r = supervise();
        if (r < 0)
                return r;

        harness.test_pid = getpid();
        harness.initialized = true;
        services = g_array_new(FALSE, FALSE, sizeof(Service));
        atexit(harness_teardown);

        /* Nothing the daemon under test does may reach a host service. */
        tmp = g_build_filename(harness.tmpdir, "tmp", NULL);
        g_setenv("TMPDIR", tmp, TRUE);
        g_setenv("UM_HARNESS_TMPDIR", harness.tmpdir, TRUE);
        g_unsetenv("DBUS_SESSION_BUS_ADDRESS");
        g_unsetenv("NOTIFY_SOCKET");
        g_unsetenv("LISTEN_FDS");
        g_unsetenv("LISTEN_PID");
        g_unsetenv("LISTEN_FDNAMES");
        if (options->namespace_only)
                return 0;

        if ((r = setup_identities()) < 0 || (r = start_bus(options)) < 0 ||
                (r = start_polkit(options)) < 0 ||
                (!options->without_udevd && (r = start_udevd()) < 0) ||
                (r = start_probe_subject()) < 0)
                return r;
        /* Proves polkitd evaluates rules and the probe works before any test relies on it. */
        return harness_set_rules(NULL);
}

void harness_init_or_exit(const HarnessOptions *options) {
        int r = harness_init(options);

        if (r == -EPERM) {
                printf("1..0 # SKIP the integration harness needs root\n");
                fflush(stdout);
                exit(0);
        }
        if (r == -EBUSY) {
                printf("Bail out! another usermount test run holds this machine; run one at a "
                       "time\n");
                fflush(stdout);
                exit(1);
        }
        if (r < 0) {
                printf("Bail out! harness_init() failed: %s\n", g_strerror(-r));
                fflush(stdout);
                exit(1);
        }
}

void harness_teardown(void) {
        static bool done;

        if (!harness.initialized || harness.attached || getpid() != harness.test_pid || done)
                return;
        done = true;

        /* The daemon(s) first (they may hold mounts and talk to polkitd), then polkitd,
         * then the bus. */
        stop_probe_subject();
        while (services && services->len > 1)
                service_stop_at(services->len - 1, SERVICE_STOP_TIMEOUT_MS, NULL);
        harness.bus = sd_bus_flush_close_unref(harness.bus);
        harness.bus_fd = -EBADF;
        while (services && services->len > 0)
                service_stop_at(services->len - 1, SERVICE_STOP_TIMEOUT_MS, NULL);

        (void) harness_release_leftover_zrams();
        harness_umount_below(harness.tmpdir);
        harness_loops_release();
        if (harness_detach_leftover_loops() > 0)
                harness_log("teardown detached loop devices nobody released");
        (void) harness_release_new_loops(2000);
        (void) harness_cgroup_remove();
        harness_udev_release();
}

int harness_dgram_listen(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        g_autofree char *dir = g_path_get_dirname(path);
        int fd;

        g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        strcpy(sa.sun_path, path);
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), ==, 0);
        return fd;
}

char *harness_dgram_next(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char buf[16384];
        ssize_t len;

        g_assert_cmpint(poll(&p, 1, HARNESS_TIMEOUT_MS), ==, 1);
        len = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        g_assert_cmpint(len, >=, 0);
        buf[len] = 0;
        g_test_message("received: %s", buf);
        return g_strdup(buf);
}
