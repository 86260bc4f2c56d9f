/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a program under a seccomp filter that answers ENOSYS for statmount() and
 * listmount(), as the filters of systemd 252's nspawn and of other container runtimes do
 * for calls newer than they know:
 *
 *         um-deny-statmount PROGRAM [ARGUMENT...]
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#define NR_STATMOUNT 457 /* the same number on every architecture */
#define NR_LISTMOUNT 458

int main(int argc, char **argv) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_STATMOUNT, 1, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_LISTMOUNT, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        if (argc < 2) {
                fprintf(stderr, "usage: um-deny-statmount PROGRAM [ARGUMENT...]\n");
                return 2;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                perror("um-deny-statmount: seccomp");
                return 2;
        }
        execv(argv[1], argv + 1);
        perror("um-deny-statmount: exec");
        return 127;
}
