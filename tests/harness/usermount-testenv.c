/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermount-testenv: runs a command inside the test harness's private world (a private
 * mount namespace with its own system bus, the real polkitd with the given rules, and
 * usermountd from the build tree), then tears it all down. tools/demo uses it, so the
 * demo runs on exactly the machinery the integration tests use.
 *
 *   usermount-testenv [--rules FILE] [--daemon PATH] -- COMMAND [ARGS...]
 *
 * The command runs as root with DBUS_SYSTEM_BUS_ADDRESS pointing at the private bus and
 * UM_TESTENV_TMPDIR at a scratch directory; the test users of harness.h exist. What the
 * services (dbus-daemon, polkitd, usermountd) write to stderr goes to the file named by
 * UM_TESTENV_LOG, so it does not interleave with the command's output. The exit status
 * is the command's.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void help(void) {
        printf("Usage: usermount-testenv [--rules FILE] [--daemon PATH] -- COMMAND [ARGS...]\n"
               "\n"
               "Runs COMMAND as root in a private mount namespace with a private system bus,\n"
               "polkitd (with the polkit rules in FILE, if given) and usermountd, and removes\n"
               "all of it afterwards. For the demo and for trying usermount by hand.\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "rules", required_argument, NULL, 'r' },
                { "daemon", required_argument, NULL, 'd' },
                {},
        };
        g_autofree char *rules = NULL;
        const char *daemon = NULL;
        g_autofree char *log = NULL;
        pid_t daemon_pid, pid;
        int c, r, status = 0, saved_stderr, log_fd;

        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'r':
                        if (!g_file_get_contents(optarg, &rules, NULL, NULL)) {
                                fprintf(stderr, "usermount-testenv: cannot read %s\n", optarg);
                                return 1;
                        }
                        break;
                case 'd':
                        daemon = optarg;
                        break;
                default:
                        return 2;
                }
        }
        if (optind >= argc) {
                fprintf(stderr, "usermount-testenv: no command given; see --help\n");
                return 2;
        }
        daemon = daemon ?: harness_daemon_path();
        if (!daemon) {
                fprintf(stderr, "usermount-testenv: no daemon: pass --daemon or set UM_USERMOUNTD\n");
                return 2;
        }

        /* The services inherit stderr when they start: point it at a log file meanwhile. */
        saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        log_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (saved_stderr < 0 || log_fd < 0)
                return 1;
        dup2(log_fd, STDERR_FILENO);
        r = harness_init(NULL);
        if (r == -EBUSY) {
                dup2(saved_stderr, STDERR_FILENO);
                fprintf(stderr, "usermount-testenv: another usermount test run (or demo) holds "
                                "this machine; run again once it has finished\n");
                return 1;
        }
        if (r < 0) {
                dup2(saved_stderr, STDERR_FILENO);
                fprintf(stderr, "usermount-testenv: could not set up the environment; run "
                                "with UM_HARNESS_DEBUG=1 for details\n");
                return 1;
        }
        log = g_build_filename(harness_tmpdir(), "services.log", NULL);
        close(log_fd);
        log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0)
                return 1;
        dup2(log_fd, STDERR_FILENO);
        if (rules && harness_set_rules(rules) < 0) {
                dup2(saved_stderr, STDERR_FILENO);
                fprintf(stderr, "usermount-testenv: polkitd did not load the rules\n");
                return 1;
        }
        if (harness_start_daemon(daemon, NULL, &daemon_pid) < 0) {
                dup2(saved_stderr, STDERR_FILENO);
                fprintf(stderr, "usermount-testenv: usermountd did not start; see %s\n", log);
                return 1;
        }
        dup2(saved_stderr, STDERR_FILENO);
        close(log_fd);

        g_setenv("UM_TESTENV_TMPDIR", harness_tmpdir(), TRUE);
        g_setenv("UM_TESTENV_LOG", log, TRUE);
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                execvp(argv[optind], argv + optind);
                fprintf(stderr, "usermount-testenv: cannot run %s: %m\n", argv[optind]);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) < 0)
                return 1;
        harness_stop_daemon(daemon_pid, NULL);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
