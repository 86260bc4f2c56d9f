/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CheckAuthorization with both subjects (see bench-polkit.h). */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench-polkit.h"
#include "macro.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_OBJECT "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define BENCH_ACTION "org.freedesktop.usermount1.mount-image"

/* Who is asked about: a bus name, or a process (pid 0: no "pid" key; pidfd < 0: none). */
typedef struct Subject {
        const char *bus_name;
        uint32_t pid;
        uint64_t start_time;
        int32_t uid;
        int pidfd;
        bool unknown_key; /* add a key no polkit knows */
} Subject;

static int append_subject(sd_bus_message *m, const Subject *s) {
        int r;

        if (s->bus_name)
                return sd_bus_message_append(m, "(sa{sv})", "system-bus-name", 1, "name", "s",
                                             s->bus_name);
        r = sd_bus_message_open_container(m, 'r', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "unix-process");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && s->pid > 0)
                r = sd_bus_message_append(m, "{sv}", "pid", "u", s->pid);
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}{sv}", "start-time", "t", s->start_time, "uid",
                                          "i", s->uid);
        if (r >= 0 && s->pidfd >= 0)
                r = sd_bus_message_append(m, "{sv}", "pidfd", "h", s->pidfd);
        if (r >= 0 && s->unknown_key)
                r = sd_bus_message_append(m, "{sv}", "x-usermount-bench", "s", "ignore me");
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

/* CheckAuthorization(subject, BENCH_ACTION, details, no interaction): 1 authorized, 0 not,
 * -errno when polkitd answered with an error (it refused the subject). */
static int check(const Subject *s, const char *const *details) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        sd_bus *bus = harness_bus();
        int authorized, challenge, r;

        r = sd_bus_message_new_method_call(bus, &m, POLKIT_BUS_NAME, POLKIT_OBJECT,
                                           POLKIT_INTERFACE, "CheckAuthorization");
        if (r >= 0)
                r = append_subject(m, s);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", BENCH_ACTION);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{ss}");
        for (size_t i = 0; r >= 0 && details[i] && details[i + 1]; i += 2)
                r = sd_bus_message_append(m, "{ss}", details[i], details[i + 1]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "us", (uint32_t) 0, "");
        if (r < 0)
                return r;
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0)
                return r;
        return authorized ? 1 : 0;
}

static int time_checks(Bench *b, const Subject *s, const char *const *details, const char *name,
                       Row *row) {
        g_autofree uint64_t *ns = g_new0(uint64_t, b->opt.iterations);
        unsigned warm = bench_warmup(&b->opt);

        for (unsigned i = 0; i < warm + b->opt.iterations; i++) {
                uint64_t t0 = stats_now_ns();
                int r = check(s, details);

                if (r == 0)
                        r = -EACCES;
                if (r < 0)
                        return bench_step_failed(b, name, r);
                if (i >= warm)
                        ns[i - warm] = stats_now_ns() - t0;
        }
        row->name = name;
        stats_summarize(ns, b->opt.iterations, &row->s);
        return 0;
}

/* What this polkitd makes of the extras, asked once each, untimed: does it find the
 * process from the pidfd alone (no "pid" key; a polkit without pidfd support refuses
 * that subject), and does it ignore a key it does not know. */
static void probe_keys(Bench *b, const Subject *process, const char *const *details) {
        Subject s = *process;

        s.pid = 0;
        b->report.polkit.pidfd_used = s.pidfd >= 0 && check(&s, details) > 0;
        s = *process;
        s.pidfd = -EBADF;
        s.unknown_key = true;
        b->report.polkit.unknown_key_ok = check(&s, details) > 0;
}

/* The subjects are a held client: connected to the bus, unprivileged, waiting. */
static int measure_with(Bench *b, HarnessCaller *caller, const char *bus_name) {
        PolkitReport *rep = &b->report.polkit;
        const char *const details[] = {
                "device", b->images[0], "fstype", b->opt.fstype, "label", "bench", "uuid", "",
                "read-only", "true", "exec", "false", "idmap", "none", "target", "",
                "options", "", NULL,
        };
        const Subject by_name = { .bus_name = bus_name, .pidfd = -EBADF };
        pid_t pid = harness_caller_pid(caller);
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        HarnessProcessStat st;
        Subject process;
        int r;

        r = harness_process_stat(pid, &st);
        if (r < 0)
                return bench_step_failed(b, "the polkit subject's /proc/PID/stat", r);
        if (pidfd < 0)
                return bench_step_failed(b, "pidfd_open of the polkit subject", -errno);
        process = (Subject) { .pid = (uint32_t) pid, .start_time = st.start_time,
                              .uid = HARNESS_UID_USER1, .pidfd = pidfd };
        probe_keys(b, &process, details);
        /* The pidfd goes along only when polkitd uses it: it ignores keys it does not know,
         * and the figure should be that of the subject the daemon would send. */
        if (!rep->pidfd_used)
                process.pidfd = -EBADF;

        r = time_checks(b, &by_name, details, "polkit, subject system-bus-name", &rep->bus_name);
        if (r < 0)
                return r;
        return time_checks(b, &process, details,
                           rep->pidfd_used ? "polkit, subject unix-process + pidfd" :
                                             "polkit, subject unix-process",
                           &rep->process);
}

int polkit_measure(Bench *b) {
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL;
        ClientResult *res = bench_shared_alloc(sizeof(ClientResult));
        ClientJob job = { .mode = CLIENT_HOLD, .result = res };
        int r;

        if (!res)
                return bench_step_failed(b, "mmap", -errno);
        r = harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, client_main, &job,
                                 &caller);
        if (r >= 0)
                r = harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line);
        if (r < 0 || !g_str_has_prefix(line, "name="))
                r = bench_step_failed(b, "starting the polkit subject", r < 0 ? r : -EPROTO);
        else
                r = measure_with(b, caller, line + 5);
        if (caller) {
                (void) harness_caller_release(caller);
                (void) harness_caller_wait(caller, HARNESS_TIMEOUT_MS, NULL);
        }
        (void) munmap(res, sizeof(ClientResult));
        return r;
}
