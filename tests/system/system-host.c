/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The system tier's host (see system-host.h): building and installing the package, the
 * container's root directory, booting and powering off systemd in systemd-nspawn, and
 * commands and login sessions inside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "system-host.h"

#define MACHINE_NAME "usermount-system"
#define STATUS_MARK "@@um-status:"

/* Units of the host's OS that fail in a container or are not ours: they would only make
 * the boot slower or "degraded". */
static const char *const masked_units[] = {
        "postgresql.service", "postgresql@.service", "udisks2.service",
        "mariadb.service",    "mysql.service",       "redis-server.service",
        "e2scrub_reap.service", "systemd-timesyncd.service",
        "apt-daily.timer",    "apt-daily-upgrade.timer", "man-db.timer",
        "dpkg-db-backup.timer", "e2scrub_all.timer", "fstrim.timer",
        "systemd-networkd-wait-online.service",
};

static void log_host(const char *format, ...) G_GNUC_PRINTF(1, 2);
static void log_host(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        fputs("system: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        va_end(ap);
}

static int pidfd_open_(pid_t pid) {
        int fd = (int) syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? -errno : fd;
}

/* ---- running programs ---------------------------------------------------------------- */

static char **minimal_environment(void) {
        char **env = g_new0(char *, 4);

        env[0] = g_strdup("PATH=" SYSTEM_PATH);
        env[1] = g_strdup("LANG=C.UTF-8");
        env[2] = g_strdup("TERM=dumb");
        return env;
}

/*
 * Runs argv (with envp; NULL: ours) to its end within timeout_ms, dying with us, its
 * standard output and error collected in *ret_output. Returns its exit status (128 +
 * signal), -ETIMEDOUT (it was killed), or -errno.
 */
static int run_program(const char *const *argv, char *const *envp, int timeout_ms,
                       char **ret_output) {
        g_autoptr(GString) out = g_string_new(NULL);
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;
        _cleanup_close_ int rfd = -EBADF, pidfd = -EBADF;
        pid_t parent = getpid(), pid;
        int fds[2], status = 0;
        bool timed_out = false;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                        _exit(127);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
                    dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0)
                        _exit(127);
                if (envp)
                        execve(argv[0], (char *const *) argv, envp);
                else
                        execv(argv[0], (char *const *) argv);
                fprintf(stderr, "cannot execute %s: %m\n", argv[0]);
                _exit(127);
        }
        close(fds[1]);
        rfd = fds[0];
        pidfd = pidfd_open_(pid);

        /* Until the program has exited and its output is read; what it leaves running in
         * the background (with the pipe) does not hold us. */
        for (bool exited = false;;) {
                struct pollfd p[2] = { { .fd = rfd, .events = POLLIN },
                                       { .fd = pidfd, .events = POLLIN } };
                gint64 left = (deadline - g_get_monotonic_time()) / 1000;
                char buf[4096];
                ssize_t n;

                if (left <= 0) {
                        kill(pid, SIGKILL);
                        timed_out = true;
                        break;
                }
                if (poll(p, exited ? 1 : 2, exited ? 0 : (int) MIN(left, 1000)) < 0 &&
                    errno != EINTR)
                        break;
                if (p[1].revents & POLLIN)
                        exited = true;
                if (!(p[0].revents & (POLLIN | POLLHUP))) {
                        if (exited)
                                break; /* exited, and nothing more to read now */
                        continue;
                }
                n = read(rfd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                g_string_append_len(out, buf, n);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (ret_output)
                *ret_output = g_strdup(out->str);
        if (timed_out) {
                log_host("'%s' did not end within %d ms; killed. It printed:\n%s", argv[0],
                         timeout_ms, out->str);
                return -ETIMEDOUT;
        }
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WEXITSTATUS(status);
}

/* Runs argv on the host; output logged only when it fails. */
static int run_host(const char *const *argv, int timeout_ms) {
        g_autofree char *program = g_find_program_in_path(argv[0]);
        g_autofree char *output = NULL, *cmdline = NULL;
        g_auto(GStrv) copy = g_strdupv((char **) argv);
        int r;

        if (!program) {
                log_host("%s is not installed (tools/install-deps installs it)", argv[0]);
                return -ENOENT;
        }
        g_free(copy[0]);
        copy[0] = g_steal_pointer(&program);
        r = run_program((const char *const *) copy, NULL, timeout_ms, &output);
        if (r != 0) {
                cmdline = g_strjoinv(" ", copy);
                log_host("'%s' failed (%d):\n%s", cmdline, r, strempty(output));
                return r < 0 ? r : -EIO;
        }
        return 0;
}

/* ---- installing ------------------------------------------------------------------------ */

/* The version of the top entry of source_root's debian/changelog, or NULL (logged). */
static char *changelog_version(const char *source_root) {
        g_autofree char *path = g_build_filename(source_root, "debian", "changelog", NULL);
        g_autofree char *text = NULL;
        const char *open, *close;

        if (!g_file_get_contents(path, &text, NULL, NULL) || !(open = strchr(text, '(')) ||
            !(close = strchr(open, ')')) || close == open + 1) {
                log_host("cannot read the version in %s", path);
                return NULL;
        }
        return g_strndup(open + 1, (gsize) (close - open - 1));
}

int system_host_install(SystemHost *h, const char *source_root) {
        g_autofree char *package = g_build_filename(source_root, "tools", "package", NULL);
        g_autofree char *output = NULL, *older = NULL;
        int r;

        if (!h->dir) {
                h->dir = g_build_filename(harness_tmpdir(), "system", NULL);
                if (g_mkdir_with_parents(h->dir, 0755) < 0)
                        return -errno;
        }
        h->debs = g_build_filename(h->dir, "debs", NULL);
        h->version = changelog_version(source_root);
        if (!h->version)
                return -EINVAL;
        /* The same tree as an older version, for the upgrade journey. */
        h->previous_version = g_strdup_printf("%s~previous", h->version);
        output = g_strdup_printf("--output=%s", h->debs);
        older = g_strdup_printf("--version=%s", h->previous_version);

        const char *build_previous[] = { package, output, older, "--no-lintian", NULL };
        const char *build[] = { package, output, NULL };
        if ((r = run_host(build_previous, 900000)) < 0 || (r = run_host(build, 900000)) < 0)
                return r;
        return 0;
}

/* ---- the root directory ------------------------------------------------------------------ */

static int remove_enabled_units(const char *dir) {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;

        /* The admin's "systemctl enable" links of the host (.wants/, .requires/): a test
         * system starts only what the distribution wires in /usr. */
        while (d && (name = g_dir_read_name(d))) {
                g_autofree char *sub = g_build_filename(dir, name, NULL);
                g_autoptr(GDir) links = NULL;
                const char *link;

                if (!g_str_has_suffix(name, ".wants") && !g_str_has_suffix(name, ".requires"))
                        continue;
                links = g_dir_open(sub, 0, NULL);
                while (links && (link = g_dir_read_name(links))) {
                        g_autofree char *p = g_build_filename(sub, link, NULL);

                        if (unlink(p) < 0)
                                return -errno;
                }
                /* Gone too, as on a system where nothing is enabled there. */
                if (rmdir(sub) < 0)
                        return -errno;
        }
        return 0;
}

int system_host_make_root(SystemHost *h) {
        static const char *const usr_links[] = { "bin", "lib", "lib32", "lib64", "sbin" };
        static const char *const empty_dirs[] = { "usr", "var", "tmp", "run", "dev", "proc",
                                                  "sys", "home", "root" };
        g_autofree char *etc = NULL, *units = NULL, *os_release = NULL;
        int r;

        h->root = g_build_filename(h->dir, "root", NULL);
        if (mkdir(h->root, 0755) < 0)
                return -errno;
        h->usr_upper = g_build_filename(h->dir, "usr", NULL);
        if (mkdir(h->usr_upper, 0755) < 0)
                return -errno;
        etc = g_build_filename(h->root, "etc", NULL);
        const char *copy[] = { "cp", "-a", "/etc", etc, NULL };
        r = run_host(copy, 60000);
        if (r < 0)
                return r;
        /* systemd wants a real file there: the symlink would point into /usr, which is not
         * there yet when PID 1 looks. */
        os_release = g_build_filename(etc, "os-release", NULL);
        (void) unlink(os_release);
        {
                g_autofree char *contents = NULL;

                if (!g_file_get_contents("/usr/lib/os-release", &contents, NULL, NULL) ||
                    !g_file_set_contents(os_release, contents, -1, NULL))
                        return -EIO;
        }
        for (size_t i = 0; i < G_N_ELEMENTS(usr_links); i++) {
                g_autofree char *link = g_build_filename(h->root, usr_links[i], NULL);
                g_autofree char *target = g_build_filename("usr", usr_links[i], NULL);

                if (symlink(target, link) < 0)
                        return -errno;
        }
        for (size_t i = 0; i < G_N_ELEMENTS(empty_dirs); i++) {
                g_autofree char *d = g_build_filename(h->root, empty_dirs[i], NULL);

                if (mkdir(d, streq(empty_dirs[i], "tmp") ? 01777 : 0755) < 0)
                        return -errno;
        }
        {
                g_autofree char *rootdir = g_build_filename(h->root, "root", NULL);

                if (chmod(rootdir, 0700) < 0)
                        return -errno;
        }

        /* The package manager's state, so that dpkg and apt-get install, upgrade, remove
         * and purge in the container as on this host (/usr is writable there: an
         * overlay over the host's). */
        {
                g_autofree char *lib = g_build_filename(h->root, "var", "lib", NULL);
                const char *copy_dpkg[] = { "cp", "-a", "/var/lib/dpkg", lib, NULL };
                static const char *const apt_dirs[] = { "var/lib/apt/lists/partial",
                                                        "var/cache/apt/archives/partial",
                                                        "var/log/apt" };

                if (g_mkdir_with_parents(lib, 0755) < 0)
                        return -errno;
                r = run_host(copy_dpkg, 120000);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < G_N_ELEMENTS(apt_dirs); i++) {
                        g_autofree char *d = g_build_filename(h->root, apt_dirs[i], NULL);

                        if (g_mkdir_with_parents(d, 0755) < 0)
                                return -errno;
                }
        }

        units = g_build_filename(etc, "systemd", "system", NULL);
        if (g_mkdir_with_parents(units, 0755) < 0)
                return -errno;
        r = remove_enabled_units(units);
        if (r < 0)
                return r;
        for (size_t i = 0; i < G_N_ELEMENTS(masked_units); i++) {
                g_autofree char *mask = g_build_filename(units, masked_units[i], NULL);

                (void) unlink(mask);
                if (symlink("/dev/null", mask) < 0)
                        return -errno;
        }
        return 0;
}

void system_host_add_device(SystemHost *h, const char *node) {
        if (!h->binds)
                h->binds = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(h->binds, g_strdup(node));
}

/* ---- boot and power-off ---------------------------------------------------------------- */

/* The child of pid whose command is comm, or 0 (/proc has no list of children here). */
static pid_t child_named(pid_t pid, const char *comm) {
        g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
        const char *name;

        while (dir && (name = g_dir_read_name(dir))) {
                HarnessProcessStat st;

                if (g_ascii_isdigit(name[0]) &&
                    harness_process_stat((pid_t) atoi(name), &st) == 0 && st.ppid == pid &&
                    streq(st.comm, comm))
                        return (pid_t) atoi(name);
        }
        return 0;
}

static _noreturn_ void nspawn_exec(SystemHost *h, char **loops, int log_fd, pid_t parent) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *overlay = g_strdup_printf("--overlay=/usr:%s:/usr", h->usr_upper);
        g_autofree char *debs = g_strdup_printf("--bind-ro=%s:" SYSTEM_DEBS_DIR, h->debs);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(127);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(log_fd, STDOUT_FILENO) < 0 ||
            dup2(log_fd, STDERR_FILENO) < 0)
                _exit(127);
        /* nspawn makes its cgroups below the one it starts in: one of ours. */
        if (harness_cgroup_enter() < 0) {
                fprintf(stderr, "cannot enter the test's cgroup\n");
                _exit(127);
        }
        /* The legacy hierarchy never tells the container's systemd that a cgroup emptied
         * (no release agent in a container): every session would hold the power-off. */
        setenv("SYSTEMD_NSPAWN_UNIFIED_HIERARCHY", "1", 1);
        /* No seccomp filter of nspawn's own around the container: it is an allow-list of
         * the calls systemd 252 knows, which answers ENOSYS for statmount() and
         * listmount(), and a systemd host has no such filter. The container's systemd
         * still applies every filter the unit asks for (it does not see this variable). */
        setenv("SYSTEMD_SECCOMP", "0", 1);

        g_ptr_array_add(argv, (char *) "systemd-nspawn");
        g_ptr_array_add(argv, (char *) "--directory");
        g_ptr_array_add(argv, h->root);
        g_ptr_array_add(argv, overlay);
        g_ptr_array_add(argv, debs);
        g_ptr_array_add(argv, (char *) "--bind=/dev/loop-control");
        /* The userspace drivers' FUSE mounts. */
        g_ptr_array_add(argv, (char *) "--bind=/dev/fuse");
        for (size_t i = 0; loops[i]; i++)
                g_ptr_array_add(argv, g_strdup_printf("--bind=%s", loops[i]));
        for (guint i = 0; h->binds && i < h->binds->len; i++)
                g_ptr_array_add(argv, g_strdup_printf("--bind=%s", (char *) h->binds->pdata[i]));
        g_ptr_array_add(argv, (char *) "--machine=" MACHINE_NAME);
        g_ptr_array_add(argv, (char *) "--register=no");
        g_ptr_array_add(argv, (char *) "--keep-unit");
        g_ptr_array_add(argv, (char *) "--console=read-only");
        g_ptr_array_add(argv, (char *) "--boot");
        g_ptr_array_add(argv, NULL);
        execvp("systemd-nspawn", (char *const *) argv->pdata);
        fprintf(stderr, "cannot execute systemd-nspawn: %m\n");
        _exit(127);
}

static void log_console(SystemHost *h) {
        g_autofree char *console = NULL;

        if (h->console_log && g_file_get_contents(h->console_log, &console, NULL, NULL))
                log_host("systemd-nspawn and the console printed:\n%s", console);
}

/* The container's PID 1 (nspawn's child named systemd), once it is there. */
static int wait_for_init(SystemHost *h, gint64 deadline) {
        while (g_get_monotonic_time() < deadline) {
                h->init_pid = child_named(h->nspawn_pid, "systemd");
                if (h->init_pid > 0)
                        return 0;
                if (harness_child_exited(h->nspawn_pid))
                        return -ESRCH;
                g_usleep(20 * 1000);
        }
        return -ETIMEDOUT;
}

int system_host_boot(SystemHost *h) {
        g_auto(GStrv) loops = NULL;
        g_autofree char *output = NULL;
        _cleanup_close_ int log_fd = -EBADF;
        gint64 deadline = g_get_monotonic_time() + SYSTEM_BOOT_TIMEOUT_MS * 1000LL;
        pid_t parent = getpid();
        int r;

        /* Loop devices the kernel makes later would not show in the container. */
        r = harness_loop_reserve(8, &loops);
        if (r < 0) {
                log_host("cannot make free loop devices: %s", g_strerror(-r));
                return r;
        }
        r = harness_cgroup_new("usermount-system");
        if (r < 0) {
                log_host("cannot make a cgroup for the container: %s", g_strerror(-r));
                return r;
        }
        h->console_log = g_build_filename(h->dir, "console.log", NULL);
        log_fd = open(h->console_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (log_fd < 0)
                return -errno;

        fflush(stdout);
        fflush(stderr);
        h->nspawn_pid = fork();
        if (h->nspawn_pid < 0)
                return -errno;
        if (h->nspawn_pid == 0)
                nspawn_exec(h, loops, log_fd, parent);
        h->nspawn_pidfd = pidfd_open_(h->nspawn_pid);

        r = wait_for_init(h, deadline);
        if (r >= 0)
                r = harness_kill_at_exit(h->init_pid);
        if (r < 0) {
                log_host("the container's systemd did not start: %s", g_strerror(-r));
                log_console(h);
                return r;
        }
        /* "running", or "degraded" when a unit failed; --wait returns once booted. */
        for (;;) {
                r = system_host_run(h, NULL, "systemctl is-system-running --wait", &output);
                if (r >= 0 && (strstr(output, "running") || strstr(output, "degraded")))
                        break;
                /* The bus of the container's systemd may not be up yet. */
                if (g_get_monotonic_time() >= deadline) {
                        log_host("the container did not finish booting: %s", strempty(output));
                        log_console(h);
                        return -ETIMEDOUT;
                }
                g_clear_pointer(&output, g_free);
                g_usleep(100 * 1000);
        }
        if (!strstr(output, "running")) {
                g_autofree char *failed = NULL;

                /* Units of this host's OS that are not ours may fail in a container (the
                 * journeys tell whether ours work); say which, for whoever reads the log. */
                (void) system_host_run(h, NULL, "systemctl --failed --no-legend --no-pager",
                                       &failed);
                log_host("the container booted with failed units (not usermount's):\n%s",
                         strempty(failed));
        }
        return 0;
}

int system_host_shutdown(SystemHost *h) {
        struct pollfd p = { .fd = h->nspawn_pidfd, .events = POLLIN };
        int status = 0, r = 0;

        if (h->nspawn_pid <= 0)
                return 0;
        if (h->init_pid > 0 && !harness_child_exited(h->nspawn_pid)) {
                /* An open session's scope would hold the power-off until it times out. */
                (void) system_host_run(h, NULL,
                                       "for s in $(loginctl list-sessions --no-legend | "
                                       "awk '{print $1}'); do loginctl terminate-session $s; "
                                       "done",
                                       NULL);
                kill(h->init_pid, SIGRTMIN + 4);
                if (poll(&p, 1, SYSTEM_SHUTDOWN_TIMEOUT_MS) == 0) {
                        log_host("the container did not power off in time; killing it");
                        log_console(h);
                        r = -ETIMEDOUT;
                }
        }
        /* Killing nspawn alone would leave the container's systemd running. */
        if (h->init_pid > 0)
                kill(h->init_pid, SIGKILL);
        kill(h->nspawn_pid, SIGKILL);
        while (waitpid(h->nspawn_pid, &status, 0) < 0 && errno == EINTR)
                ;
        h->nspawn_pid = 0;
        h->init_pid = 0;
        h->nspawn_pidfd = safe_close(h->nspawn_pidfd);
        /* The container's processes are gone with its PID namespace; its cgroups may take a
         * moment to be released. */
        for (int i = 0; i < 100; i++) {
                int k = harness_cgroup_remove();

                if (k != -EBUSY) {
                        if (k < 0 && r == 0)
                                r = k;
                        break;
                }
                g_usleep(50 * 1000);
        }
        return r;
}

void system_host_done(SystemHost *h) {
        g_free(h->dir);
        g_free(h->debs);
        g_free(h->version);
        g_free(h->previous_version);
        g_free(h->usr_upper);
        g_free(h->root);
        g_free(h->console_log);
        if (h->binds)
                g_ptr_array_free(h->binds, TRUE);
        *h = (SystemHost) {};
}

/* ---- commands ------------------------------------------------------------------------- */

/* nsenter into every namespace of the container's PID 1 (a PID namespace takes effect for
 * the child nsenter forks), with an empty environment but PATH, LANG and TERM. */
static GPtrArray *nsenter_argv(SystemHost *h) {
        GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *nsenter = g_find_program_in_path("nsenter");

        g_ptr_array_add(argv, g_strdup(nsenter ?: "/usr/bin/nsenter"));
        g_ptr_array_add(argv, g_strdup_printf("--target=%d", (int) h->init_pid));
        g_ptr_array_add(argv, g_strdup("--mount"));
        g_ptr_array_add(argv, g_strdup("--uts"));
        g_ptr_array_add(argv, g_strdup("--ipc"));
        g_ptr_array_add(argv, g_strdup("--net"));
        g_ptr_array_add(argv, g_strdup("--pid"));
        g_ptr_array_add(argv, g_strdup("--"));
        return argv;
}

int system_host_run(SystemHost *h, const char *user, const char *script, char **ret_output) {
        g_autoptr(GPtrArray) argv = nsenter_argv(h);
        g_auto(GStrv) env = minimal_environment();
        g_autofree char *wrapped = g_strdup_printf("exec 2>&1; %s", script);

        if (h->init_pid <= 0)
                return -ESRCH;
        if (user) {
                g_ptr_array_add(argv, g_strdup("/usr/bin/su"));
                g_ptr_array_add(argv, g_strdup("--login"));
                g_ptr_array_add(argv, g_strdup(user));
                g_ptr_array_add(argv, g_strdup("--command"));
        } else {
                g_ptr_array_add(argv, g_strdup("/bin/sh"));
                g_ptr_array_add(argv, g_strdup("-c"));
        }
        g_ptr_array_add(argv, g_steal_pointer(&wrapped));
        g_ptr_array_add(argv, NULL);
        return run_program((const char *const *) argv->pdata, env, SYSTEM_COMMAND_TIMEOUT_MS,
                           ret_output);
}

char *system_host_check(SystemHost *h, const char *script) {
        char *output = NULL;
        int r = system_host_run(h, NULL, script, &output);

        if (r != 0) {
                log_host("'%s' failed (%d):\n%s", script, r, strempty(output));
                g_free(output);
                return NULL;
        }
        return output;
}

/* ---- login sessions ---------------------------------------------------------------------- */

static _noreturn_ void session_exec(SystemHost *h, const char *slave, const char *user,
                                    pid_t parent) {
        g_autoptr(GPtrArray) argv = nsenter_argv(h);
        g_auto(GStrv) env = minimal_environment();
        int fd;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(127);
        /* A session of its own with the terminal as its controlling terminal, as login
         * leaves it; su keeps it for the user's shell. */
        if (setsid() < 0)
                _exit(120);
        fd = open(slave, O_RDWR | O_NOCTTY);
        if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0 || dup2(fd, STDIN_FILENO) < 0 ||
            dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                _exit(121);
        if (close_range(STDERR_FILENO + 1, ~0U, 0) < 0)
                _exit(122);
        g_ptr_array_add(argv, g_strdup("/usr/bin/su"));
        g_ptr_array_add(argv, g_strdup("--login"));
        g_ptr_array_add(argv, g_strdup(user));
        g_ptr_array_add(argv, NULL);
        execve(argv->pdata[0], (char *const *) argv->pdata, env);
        _exit(127);
}

/* The status the marker after from reports, or -EAGAIN while there is none yet. */
static int parse_status(const GString *output, size_t from) {
        const char *p = output->len > from ? output->str + from : "";

        while ((p = strstr(p, STATUS_MARK))) {
                char *end = NULL;
                long status;

                p += strlen(STATUS_MARK);
                /* The echo of the typed line shows "$?" here, not digits. */
                if (!g_ascii_isdigit(*p))
                        continue;
                status = strtol(p, &end, 10);
                if (end && g_str_has_prefix(end, "@@"))
                        return (int) status;
        }
        return -EAGAIN;
}

int system_session_send(SystemSession *s, const char *command) {
        g_autofree char *line = g_strdup_printf("%s; echo \"" STATUS_MARK "$?@@\"\n", command);

        harness_terminal_read(&s->terminal, 0);
        s->from = s->terminal.output->len;
        return harness_terminal_type(&s->terminal, line);
}

bool system_session_wait_for(SystemSession *s, const char *text) {
        return harness_terminal_wait_for(&s->terminal, s->pid, s->from, text,
                                         SYSTEM_COMMAND_TIMEOUT_MS);
}

static int session_wait(SystemSession *s, const char *password, bool *ret_prompted,
                        char **ret_output) {
        gint64 deadline = g_get_monotonic_time() + SYSTEM_COMMAND_TIMEOUT_MS * 1000LL;
        bool prompted = false;
        int status = -EAGAIN, r;

        while (status == -EAGAIN) {
                if (g_get_monotonic_time() >= deadline || harness_child_exited(s->pid))
                        break;
                harness_terminal_read(&s->terminal, 100);
                status = parse_status(s->terminal.output, s->from);
                if (!prompted && password &&
                    strstr(s->terminal.output->str + s->from, "Password: ")) {
                        prompted = true;
                        r = harness_terminal_type_password(&s->terminal, password,
                                                           SYSTEM_COMMAND_TIMEOUT_MS);
                        if (r < 0)
                                return r;
                }
        }
        if (!prompted && strstr(s->terminal.output->str + s->from, "Password: "))
                prompted = true;
        if (ret_prompted)
                *ret_prompted = prompted;
        if (ret_output)
                *ret_output = g_strdup(s->terminal.output->str + s->from);
        if (status == -EAGAIN) {
                log_host("the session of %s did not finish the command; the terminal shows:\n%s",
                         s->user, s->terminal.output->str + s->from);
                return -ETIMEDOUT;
        }
        return status;
}

int system_session_wait_status(SystemSession *s, char **ret_output) {
        return session_wait(s, NULL, NULL, ret_output);
}

int system_session_run(SystemSession *s, const char *command, const char *password,
                       bool *ret_prompted, char **ret_output) {
        int r = system_session_send(s, command);

        if (r < 0)
                return r;
        return session_wait(s, password, ret_prompted, ret_output);
}

int system_session_open(SystemHost *h, const char *user, SystemSession *ret) {
        pid_t parent = getpid();
        int r;

        *ret = (SystemSession) { .user = g_strdup(user) };
        r = harness_terminal_open(&ret->terminal, 0, 0);
        if (r < 0)
                return r;
        fflush(stdout);
        fflush(stderr);
        ret->pid = fork();
        if (ret->pid < 0)
                return -errno;
        if (ret->pid == 0)
                session_exec(h, ret->terminal.slave, user, parent);
        /* The shell is there once it runs a command. */
        r = system_session_run(ret, "true", NULL, NULL, NULL);
        if (r != 0) {
                log_host("no shell of %s came up: %s", user, r < 0 ? g_strerror(-r) : "");
                system_session_close(ret);
                return r < 0 ? r : -EIO;
        }
        return 0;
}

int system_session_close(SystemSession *s) {
        gint64 deadline = g_get_monotonic_time() + SYSTEM_COMMAND_TIMEOUT_MS * 1000LL;
        int status = 0, r = 0;

        if (s->pid > 0) {
                (void) harness_terminal_type(&s->terminal, "exit\n");
                while (!harness_child_exited(s->pid) && g_get_monotonic_time() < deadline)
                        harness_terminal_read(&s->terminal, 100);
                if (!harness_child_exited(s->pid)) {
                        log_host("the session of %s did not end; killing it", s->user);
                        kill(s->pid, SIGKILL);
                        r = -ETIMEDOUT;
                }
                while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
                        ;
                s->pid = 0;
        }
        harness_terminal_close(&s->terminal);
        g_clear_pointer(&s->user, g_free);
        return r;
}
