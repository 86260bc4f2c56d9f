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
 *
 * Here the CLI must not ask (--no-ask-password, no terminal, inside a user namespace), and
 * the probe shows why polkit cannot deliver a prompt in the harness. The prompts
 * themselves (right and wrong password, an admin's password, the CLI killed while the
 * agent asks) need a logind session: tests/system runs them in one, on a booted system.
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
#define EXIT_NOT_AUTHORIZED 3
#define PROMPT_TIMEOUT_MS 30000

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

typedef struct Result {
        int status;
        pid_t pid;
        char *output;
} Result;

static void result_done(Result *r) {
        g_free(r->output);
}

/*
 * Runs the CLI as umtest1 (with flags: in a user namespace of its own) with argv on a new
 * terminal. Nobody types anything. The result's output is the terminal's.
 */
static void run_cli(Stdin stdin_kind, HarnessRunFlags flags, const char *const *argv,
                    Result *ret) {
        g_autoptr(HarnessCaller) caller = NULL;
        HarnessTerminal t = {};
        Cli cli;

        g_assert_cmpint(harness_terminal_open(&t, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        cli = (Cli) { .pty = t.slave, .stdin_kind = stdin_kind, .argv = argv };
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, flags,
                                             cli_main, &cli, &caller), ==, 0);
        ret->pid = harness_caller_pid(caller);

        /* Drain the terminal until the CLI has exited. */
        while (harness_terminal_read(&t, 100) && !harness_child_exited(ret->pid))
                ;
        ret->status = harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        while (harness_terminal_read(&t, 10) && t.output->len < 1 << 20)
                if (count_agents_for(ret->pid) == 0)
                        break;
        harness_terminal_read(&t, 10);
        ret->output = g_strdup(t.output->str);
        g_test_message("terminal (exit status %d):\n%s", ret->status, ret->output);
        harness_terminal_close(&t);
        assert_no_agent_for(ret->pid);
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


/* ---- Tests ----------------------------------------------------------------------------- */

static void test_no_ask_password(void) {
        g_autofree char *log = NULL;
        Result r = {};

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, 0, mount_args("--no-ask-password"), &r);

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
        run_cli(STDIN_PIPE, 0, mount_args(NULL), &r);

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

/*
 * Inside a user namespace polkitd refuses any agent: the CLI starts none and says what
 * works instead (a rule, such as the shipped example, or running outside).
 */
static void run_in_user_namespace(const char *extra_option) {
        g_autofree char *target = g_build_filename(harness_tmpdir(), "mnt", "agent-userns", NULL);
        const char *argv[] = { "usermount", "mount", image, target, extra_option, NULL };
        g_autofree char *log = NULL;
        Result r = {};

        g_assert_cmpint(mkdir(target, 0755), ==, 0);
        g_assert_cmpint(chown(target, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        run_cli(STDIN_TTY, HARNESS_NEW_USERNS, argv, &r);

        g_assert_cmpint(r.status, ==, EXIT_NOT_AUTHORIZED);
        g_assert_null(strstr(r.output, "Password"));
        g_assert_nonnull(strstr(r.output, "Authentication is required for this request "
                                          "(polkit action " ACTION_MOUNT_IMAGE ")"));
        g_assert_nonnull(strstr(r.output, "it runs in a user namespace"));
        g_assert_nonnull(strstr(r.output, "/polkit-rules/50-usermount-namespace-images.rules"));
        g_assert_nonnull(strstr(r.output, "usermount mount --container=PID IMAGE DIRECTORY"));
        /* Not the advice for other cases: a terminal would not help. */
        g_assert_null(strstr(r.output, "Run usermount on a terminal"));
        log = read_agent_log();
        g_assert_cmpstr(log, ==, "");
        g_assert_cmpint(rmdir(target), ==, 0);
        assert_clean();
        result_done(&r);
}

static void test_user_namespace(void) {
        run_in_user_namespace(NULL);
}

static void test_user_namespace_no_ask_password(void) {
        run_in_user_namespace("--no-ask-password");
}

/*
 * Why the harness cannot show a prompt: the same pkttyagent, polkitd, helper and shadow
 * entry do work when polkitd is asked about the agent's process itself (unix-process
 * subject); what failed for the CLI, when usermountd still asked with a system-bus-name
 * subject, was polkitd's step, without logind, from that name to the agent registered for
 * its process.
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
        HarnessProcessStat st;

        g_assert_cmpint(harness_process_stat(pid, &st), ==, 0);
        return st.start_time;
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
        HarnessTerminal t = {};
        int authorized = -1;
        gint64 deadline;
        bool typed = false;
        Cli cli;
        pid_t pid;

        g_assert_cmpint(harness_set_rules(rules_auth_self), ==, 0);
        reset_agent_log();
        g_assert_cmpint(harness_terminal_open(&t, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
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
                harness_terminal_read(&t, 20);
                if (!typed && strstr(t.output->str, "Password: ")) {
                        g_assert_cmpint(harness_terminal_type_password(&t, HARNESS_PASSWORD_USER1,
                                                                       PROMPT_TIMEOUT_MS), ==, 0);
                        typed = true;
                }
                sd_bus_wait(bus, 20 * 1000);
        }
        g_test_message("terminal:\n%s", t.output->str);
        g_assert_true(typed);
        g_assert_cmpint(authorized, ==, 1);

        kill(pid, SIGTERM);
        harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, NULL);
        harness_terminal_close(&t);
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

        g_test_add_func("/agent/no-ask-password", test_no_ask_password);
        g_test_add_func("/agent/no-terminal", test_no_terminal);
        g_test_add_func("/agent/user-namespace", test_user_namespace);
        g_test_add_func("/agent/user-namespace/no-ask-password",
                        test_user_namespace_no_ask_password);
        g_test_add_func("/agent/probe/unix-process-subject", test_probe_unix_process_subject);
        return g_test_run();
}
