/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Interactive authentication in the usermount CLI, end to end: the real CLI as umtest1 on
 * a pseudo-terminal (its controlling terminal), the real pkttyagent it starts, the real
 * polkitd and its setuid agent helper authenticating against the harness's private
 * /etc/shadow, and the real daemon. The test plays the person at the terminal: it reads
 * the prompt from the pty master and types a password.
 *
 * /usr/bin/pkttyagent is replaced, in the harness's private mount namespace only, by a
 * script that logs its arguments and runs the real agent: that proves when an agent was
 * started (and with which arguments) and when none was.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define ACTION_MOUNT_IMAGE "org.freedesktop.usermount1.mount-image"
#define EXIT_AUTH_FAILED 10
#define EXIT_NOT_AUTHORIZED 3
#define PROMPT_TIMEOUT_MS 30000

/*
 * polkitd 122 without logind does not hand the request to pkttyagent registered with
 * --process for our process when usermountd asks about our bus name (see the report).
 * The CLI then says so and fails with exit status 3; the tests that need a prompt check
 * exactly that and skip, rather than pass without one.
 */
#define NO_DELIVERY "polkitd did not deliver the authentication request to the agent " \
                    "registered for the caller's process (polkit 122 without logind)"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image;     /* ext4 labelled "agentfs", owned by umtest1 */
static char *agent_log; /* one line per pkttyagent start: its arguments */

static const char rules_auth_self[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == '" ACTION_MOUNT_IMAGE "')\n"
        "                return polkit.Result.AUTH_SELF;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

static const char rules_auth_admin[] =
        "polkit.addAdminRule(function(action, subject) {\n"
        "        return ['unix-user:" HARNESS_ADMIN "'];\n"
        "});\n"
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id == '" ACTION_MOUNT_IMAGE "')\n"
        "                return polkit.Result.AUTH_ADMIN;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- The CLI as a caller --------------------------------------------------------------- */

typedef enum Stdin {
        STDIN_TTY,  /* stdin, stdout and stderr on the pty */
        STDIN_PIPE, /* stdin an empty pipe; stdout and stderr on the pty */
} Stdin;

typedef struct Cli {
        const char *pty;      /* slave path */
        Stdin stdin_kind;
        const char *const *argv;
} Cli;

static int cli_main(void *userdata) {
        const Cli *cli = userdata;
        int fd, p[2];

        /* A session of its own, with the pty as its controlling terminal, as after login. */
        if (setsid() < 0)
                return 120;
        fd = open(cli->pty, O_RDWR | O_NOCTTY);
        if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0)
                return 121;
        if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                return 122;
        if (cli->stdin_kind == STDIN_TTY) {
                if (dup2(fd, STDIN_FILENO) < 0)
                        return 122;
        } else {
                if (pipe(p) < 0 || dup2(p[0], STDIN_FILENO) < 0)
                        return 122;
                close(p[0]);
                close(p[1]);
        }
        if (fd > STDERR_FILENO)
                close(fd);

        execv(g_getenv("UM_USERMOUNT"), (char *const *) cli->argv);
        return 127;
}

typedef struct Terminal {
        int master;
        int slave_fd; /* keeps the master readable before the CLI opens the slave */
        char *slave;
        GString *output;
} Terminal;

static void terminal_open(Terminal *t) {
        t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        g_assert_cmpint(t->master, >=, 0);
        g_assert_cmpint(grantpt(t->master), ==, 0);
        g_assert_cmpint(unlockpt(t->master), ==, 0);
        t->slave = g_strdup(ptsname(t->master));
        g_assert_nonnull(t->slave);
        g_assert_cmpint(chown(t->slave, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(fcntl(t->master, F_SETFL, O_NONBLOCK), ==, 0);
        t->slave_fd = open(t->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
        g_assert_cmpint(t->slave_fd, >=, 0);
        t->output = g_string_new(NULL);
}

static void terminal_close(Terminal *t) {
        safe_close(t->master);
        safe_close(t->slave_fd);
        g_free(t->slave);
        g_string_free(t->output, TRUE);
}

/* Reads what is there; returns false once the slave side is closed and drained. */
static bool terminal_read(Terminal *t, int timeout_ms) {
        struct pollfd p = { .fd = t->master, .events = POLLIN };
        char buf[4096];
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
                return true;
        n = read(t->master, buf, sizeof(buf));
        if (n < 0)
                return errno == EAGAIN || errno == EINTR;
        if (n == 0)
                return false;
        g_string_append_len(t->output, buf, n);
        return true;
}

/* Whether our child pid has exited (it stays a zombie for harness_caller_wait()). */
static bool child_exited(pid_t pid) {
        siginfo_t si = {};

        return waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* Waits until the terminal shows text (after the first `from` bytes), or pid exits. */
static bool terminal_wait_for(Terminal *t, pid_t pid, size_t from, const char *text) {
        gint64 deadline = g_get_monotonic_time() + PROMPT_TIMEOUT_MS * 1000;

        while (g_get_monotonic_time() < deadline) {
                if (t->output->len > from && strstr(t->output->str + from, text))
                        return true;
                if (!terminal_read(t, 100) || child_exited(pid))
                        break;
        }
        terminal_read(t, 10);
        return t->output->len > from && strstr(t->output->str + from, text);
}

/*
 * Types a password and Enter. The agent prints its prompt before it turns echo off, and
 * turning it off (TCSAFLUSH) throws away what was typed until then, as a person typing
 * fast would see: so this waits until echo is off (tcgetattr() on the master reads the
 * terminal's settings).
 */
static void terminal_type_password(Terminal *t, const char *password) {
        g_autofree char *s = g_strconcat(password, "\n", NULL);
        gint64 deadline = g_get_monotonic_time() + PROMPT_TIMEOUT_MS * 1000;
        struct termios ts;

        for (;;) {
                g_assert_cmpint(tcgetattr(t->master, &ts), ==, 0);
                if (!(ts.c_lflag & ECHO))
                        break;
                g_assert_cmpint(g_get_monotonic_time(), <, deadline);
                g_usleep(10 * 1000);
        }
        g_assert_cmpint(write(t->master, s, strlen(s)), ==, (ssize_t) strlen(s));
}

/* ---- Checks ---------------------------------------------------------------------------- */

/* Processes running pkttyagent for the process pid (its "--process PID" argument). */
static int count_agents_for(pid_t pid) {
        g_autoptr(GDir) dir = g_dir_open("/proc", 0, NULL);
        g_autofree char *want = g_strdup_printf("%d", (int) pid);
        const char *name;
        int n = 0;

        g_assert_nonnull(dir);
        while ((name = g_dir_read_name(dir))) {
                g_autofree char *path = g_build_filename("/proc", name, "cmdline", NULL);
                g_autofree char *cmdline = NULL;
                gsize len = 0;
                bool agent = false;

                if (!g_ascii_isdigit(name[0]) ||
                    !g_file_get_contents(path, &cmdline, &len, NULL))
                        continue;
                for (gsize i = 0; i < len; i += strlen(cmdline + i) + 1) {
                        if (strstr(cmdline + i, "pkttyagent"))
                                agent = true;
                        if (agent && streq(cmdline + i, "--process") && i + 10 < len &&
                            streq(cmdline + i + strlen(cmdline + i) + 1, want))
                                n++;
                }
        }
        return n;
}

static void assert_no_agent_for(pid_t pid) {
        /* The agent gets SIGTERM when the CLI dies; give it the time to go. */
        for (int i = 0; i < 200 && count_agents_for(pid) > 0; i++)
                g_usleep(50 * 1000);
        g_assert_cmpint(count_agents_for(pid), ==, 0);
}

static char *read_agent_log(void) {
        char *s = NULL;

        g_assert_true(g_file_get_contents(agent_log, &s, NULL, NULL));
        return s;
}

static void reset_agent_log(void) {
        g_assert_true(g_file_set_contents(agent_log, "", 0, NULL));
        g_assert_cmpint(chmod(agent_log, 0666), ==, 0);
}

static void assert_clean(void) {
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);
}

/* Unmounts the image as root would not: through the CLI as umtest1, without a terminal. */
static int unmount_as_user1_main(void *userdata) {
        const char *argv[] = { "usermount", "unmount", "--no-ask-password", image, NULL };

        execv(g_getenv("UM_USERMOUNT"), (char *const *) argv);
        return 127;
}

typedef struct Result {
        int status;
        bool prompted;
        pid_t pid;
        char *output;
} Result;

static void result_done(Result *r) {
        g_free(r->output);
}

/*
 * Runs the CLI as umtest1 with argv on a new terminal. password: typed when the prompt
 * shows (NULL: the test expects no prompt). The result's output is the terminal's.
 */
static void run_cli(Stdin stdin_kind, const char *const *argv, const char *password,
                    Result *ret) {
        g_autoptr(HarnessCaller) caller = NULL;
        Terminal t = {};
        Cli cli;

        terminal_open(&t);
        cli = (Cli) { .pty = t.slave, .stdin_kind = stdin_kind, .argv = argv };
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, cli_main,
                                             &cli, &caller), ==, 0);
        ret->pid = harness_caller_pid(caller);

        ret->prompted = false;
        if (password && terminal_wait_for(&t, ret->pid, 0, "Password: ")) {
                ret->prompted = true;
                terminal_type_password(&t, password);
        }
        /* Drain the terminal until the CLI has exited. */
        while (terminal_read(&t, 100) && !child_exited(ret->pid))
                ;
        ret->status = harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        while (terminal_read(&t, 10) && t.output->len < 1 << 20)
                if (count_agents_for(ret->pid) == 0)
                        break;
        terminal_read(&t, 10);
        ret->output = g_strdup(t.output->str);
        g_test_message("terminal (exit status %d):\n%s", ret->status, ret->output);
        terminal_close(&t);
        assert_no_agent_for(ret->pid);
}


/* When polkitd did not ask the agent: checks the CLI's account of it and returns true. */
static bool prompt_not_delivered(const Result *r) {
        if (r->prompted)
                return false;
        g_assert_cmpint(r->status, ==, EXIT_NOT_AUTHORIZED);
        g_assert_nonnull(strstr(r->output, "did not find the authentication agent"));
        g_assert_null(strstr(r->output, "Mounted"));
        g_test_skip(NO_DELIVERY);
        return true;
}

static const char *const *mount_args(const char *extra) {
        static const char *argv[5];

        argv[0] = "usermount";
        argv[1] = "mount";
        argv[2] = extra ? extra : image;
        argv[3] = extra ? image : NULL;
        argv[4] = NULL;
        return argv;
}

static void assert_unmounted_by_cli(void) {
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                       unmount_as_user1_main, NULL, NULL), ==, 0);
}

/* ---- Tests ----------------------------------------------------------------------------- */

static void test_auth_self_right_password(void) {
        g_autofree char *log = NULL, *want = NULL;
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, mount_args(NULL), HARNESS_PASSWORD_USER1, &r);
        /* Exactly one agent, registered for the CLI's own process, by absolute path. */
        log = read_agent_log();
        want = g_strdup_printf("--notify-fd 3 --fallback --process %d\n", (int) r.pid);
        g_assert_cmpstr(log, ==, want);
        if (prompt_not_delivered(&r)) {
                assert_clean();
                result_done(&r);
                return;
        }

        g_assert_cmpint(r.status, ==, 0);
        g_assert_nonnull(strstr(r.output, HARNESS_USER1));
        g_assert_nonnull(strstr(r.output, "Mounted"));
        g_assert_cmpint(harness_count_mounts(0), ==, baseline.mounts + 1);

        assert_unmounted_by_cli();
        assert_clean();
        result_done(&r);
}

static void test_auth_self_wrong_password(void) {
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, mount_args(NULL), "not-the-password", &r);
        if (prompt_not_delivered(&r)) {
                assert_clean();
                result_done(&r);
                return;
        }

        g_assert_cmpint(r.status, ==, EXIT_AUTH_FAILED);
        g_assert_nonnull(strstr(r.output, "Authentication failed"));
        g_assert_null(strstr(r.output, "Mounted"));
        assert_clean();
        result_done(&r);
}

static void test_auth_admin(void) {
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_admin), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, mount_args(NULL), HARNESS_PASSWORD_ADMIN, &r);
        if (prompt_not_delivered(&r)) {
                assert_clean();
                result_done(&r);
                return;
        }

        g_assert_cmpint(r.status, ==, 0);
        /* The agent says whose password it wants. */
        g_assert_nonnull(strstr(r.output, HARNESS_ADMIN));
        g_assert_nonnull(strstr(r.output, "Mounted"));

        assert_unmounted_by_cli();
        assert_clean();
        result_done(&r);
}

static void test_no_ask_password(void) {
        g_autofree char *log = NULL;
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, mount_args("--no-ask-password"), NULL, &r);

        g_assert_cmpint(r.status, ==, EXIT_NOT_AUTHORIZED);
        g_assert_null(strstr(r.output, "Password"));
        g_assert_nonnull(strstr(r.output, "--no-ask-password"));
        g_assert_nonnull(strstr(r.output, "Authentication is required"));
        g_assert_nonnull(strstr(r.output, "polkit rule"));
        log = read_agent_log();
        g_assert_cmpstr(log, ==, "");
        assert_clean();
        result_done(&r);
}

static void test_no_terminal(void) {
        g_autofree char *log = NULL;
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_PIPE, mount_args(NULL), NULL, &r);

        g_assert_cmpint(r.status, ==, EXIT_NOT_AUTHORIZED);
        g_assert_null(strstr(r.output, "Password"));
        g_assert_nonnull(strstr(r.output, "not a terminal"));
        g_assert_nonnull(strstr(r.output, "Authentication is required"));
        g_assert_nonnull(strstr(r.output, "polkit rule"));
        /* No agent was started at all. */
        log = read_agent_log();
        g_assert_cmpstr(log, ==, "");
        assert_clean();
        result_done(&r);
}

/* The CLI killed while the agent prompts: the agent goes with it, nothing is mounted. */
static void test_killed_while_prompting(void) {
        g_autoptr(HarnessCaller) caller = NULL;
        Terminal t = {};
        Cli cli;
        pid_t pid;
        int status;

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        terminal_open(&t);
        cli = (Cli) { .pty = t.slave, .stdin_kind = STDIN_TTY, .argv = mount_args(NULL) };
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, cli_main,
                                             &cli, &caller), ==, 0);
        pid = harness_caller_pid(caller);
        if (!terminal_wait_for(&t, pid, 0, "Password: ")) {
                g_assert_cmpint(harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL), ==,
                                EXIT_NOT_AUTHORIZED);
                terminal_close(&t);
                assert_no_agent_for(pid);
                g_test_skip(NO_DELIVERY);
                return;
        }
        g_assert_cmpint(count_agents_for(pid), ==, 1);

        g_assert_cmpint(kill(pid, SIGTERM), ==, 0);
        status = harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        g_assert_cmpint(status, ==, 128 + SIGTERM);
        assert_no_agent_for(pid);
        terminal_close(&t);
        assert_clean();
}

/*
 * The probe behind NO_DELIVERY: the same pkttyagent, polkitd, helper and shadow entry do
 * work when polkitd is asked about the agent's process itself (unix-process subject), so
 * what fails for the CLI is only polkitd's step from usermountd's system-bus-name subject
 * to the agent registered for that name's process.
 */
static int agent_self_main(void *userdata) {
        const Cli *cli = userdata;
        char pid[32];
        int fd;

        if (setsid() < 0)
                return 120;
        fd = open(cli->pty, O_RDWR | O_NOCTTY);
        if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 ||
            dup2(fd, 2) < 0)
                return 121;
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        execl("/usr/bin/pkttyagent", "pkttyagent", "--process", pid, NULL);
        return 127;
}

static uint64_t process_start_time(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int) pid), *stat = NULL;
        g_auto(GStrv) fields = NULL;

        g_assert_true(g_file_get_contents(path, &stat, NULL, NULL));
        fields = g_strsplit(strrchr(stat, ')') + 2, " ", -1);
        g_assert_cmpuint(g_strv_length(fields), >, 19);
        return g_ascii_strtoull(fields[19], NULL, 10);
}

static int on_check_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        int *authorized = userdata;
        int a = 0, c = 0;

        if (sd_bus_message_is_method_error(m, NULL) ||
            sd_bus_message_enter_container(m, 'r', "bba{ss}") < 0 ||
            sd_bus_message_read(m, "bb", &a, &c) < 0)
                *authorized = -EIO;
        else
                *authorized = a ? 1 : 0;
        return 0;
}

static void test_probe_unix_process_subject(void) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        g_autoptr(HarnessCaller) caller = NULL;
        sd_bus *bus = harness_bus();
        Terminal t = {};
        int authorized = -1;
        gint64 deadline;
        bool typed = false;
        Cli cli;
        pid_t pid;

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        terminal_open(&t);
        cli = (Cli) { .pty = t.slave };
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             agent_self_main, &cli, &caller), ==, 0);
        pid = harness_caller_pid(caller);

        g_assert_cmpint(sd_bus_message_new_method_call(bus, &m, "org.freedesktop.PolicyKit1",
                                "/org/freedesktop/PolicyKit1/Authority",
                                "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization"),
                        >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "(sa{sv})s", "unix-process", 3,
                                "pid", "u", (uint32_t) pid,
                                "start-time", "t", process_start_time(pid),
                                "uid", "i", (int32_t) HARNESS_UID_USER1,
                                ACTION_MOUNT_IMAGE), >=, 0);
        g_assert_cmpint(sd_bus_message_append(m, "a{ss}us", 0, 1u, ""), >=, 0);

        /* The agent may still be registering: ask again while polkitd answers "no" before
         * any prompt, which is its answer when it has no agent for the subject. */
        deadline = g_get_monotonic_time() + PROMPT_TIMEOUT_MS * 1000;
        while (authorized != 1 && g_get_monotonic_time() < deadline) {
                if (!slot || (authorized == 0 && !typed)) {
                        authorized = -1;
                        slot = sd_bus_slot_unref(slot);
                        g_assert_cmpint(sd_bus_call_async(bus, &slot, m, on_check_reply,
                                                          &authorized, 120 * 1000000ULL), >=, 0);
                }
                while (sd_bus_process(bus, NULL) > 0)
                        ;
                if (authorized == 1 || (authorized == 0 && typed))
                        break;
                terminal_read(&t, 20);
                if (!typed && strstr(t.output->str, "Password: ")) {
                        terminal_type_password(&t, HARNESS_PASSWORD_USER1);
                        typed = true;
                }
                sd_bus_wait(bus, 20 * 1000);
        }
        g_test_message("terminal:\n%s", t.output->str);
        g_assert_true(typed);
        g_assert_cmpint(authorized, ==, 1);

        kill(pid, SIGTERM);
        harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        terminal_close(&t);
        assert_no_agent_for(pid);
}

/* ---- Setup ----------------------------------------------------------------------------- */

/* Puts the logging wrapper over /usr/bin/pkttyagent in the private mount namespace. */
static void install_agent_wrapper(void) {
        g_autofree char *real = g_build_filename(harness_tmpdir(), "pkttyagent.real", NULL);
        g_autofree char *wrapper = g_build_filename(harness_tmpdir(), "pkttyagent.wrapper",
                                                    NULL);
        g_autofree char *script = NULL, *contents = NULL;
        gsize len;

        agent_log = g_build_filename(harness_tmpdir(), "pkttyagent.log", NULL);
        g_assert_true(g_file_get_contents("/usr/bin/pkttyagent", &contents, &len, NULL));
        g_assert_true(g_file_set_contents(real, contents, len, NULL));
        g_assert_cmpint(chmod(real, 0755), ==, 0);
        script = g_strdup_printf("#!/bin/sh\necho \"$*\" >> %s\nexec %s \"$@\"\n", agent_log,
                                 real);
        g_assert_true(g_file_set_contents(wrapper, script, -1, NULL));
        g_assert_cmpint(chmod(wrapper, 0755), ==, 0);
        g_assert_cmpint(mount(wrapper, "/usr/bin/pkttyagent", NULL, MS_BIND, NULL), ==, 0);
        reset_agent_log();
}

int main(int argc, char *argv[]) {
        static const HarnessImageSpec spec = { .label = "agentfs", .root_uid = HARNESS_UID_USER1,
                                               .root_gid = HARNESS_GID_USER1 };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);

        if (!harness_daemon_path() || !g_getenv("UM_USERMOUNT") ||
            access("/usr/bin/pkttyagent", X_OK) < 0) {
                g_test_skip("usermountd, usermount or pkttyagent missing");
                return 0;
        }
        install_agent_wrapper();
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/agent/auth-self/right-password", test_auth_self_right_password);
        g_test_add_func("/agent/auth-self/wrong-password", test_auth_self_wrong_password);
        g_test_add_func("/agent/auth-admin", test_auth_admin);
        g_test_add_func("/agent/no-ask-password", test_no_ask_password);
        g_test_add_func("/agent/no-terminal", test_no_terminal);
        g_test_add_func("/agent/killed-while-prompting", test_killed_while_prompting);
        g_test_add_func("/agent/probe/unix-process-subject", test_probe_unix_process_subject);
        return g_test_run();
}
