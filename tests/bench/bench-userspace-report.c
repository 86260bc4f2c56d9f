/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The userspace drivers' benchmark: its tables and targets (see bench-userspace.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench-userspace.h"
#include "macro.h"

const char *const medium_names[_MEDIUM_MAX] = {
        [MEDIUM_MEMORY] = "memory: the image in the harness's tmpfs",
        [MEDIUM_BLOCKDEV] = "block device: the filesystem on a zram disk, its page cache dropped "
                            "before each job",
};

static const char *verdict(bool met) {
        return met ? "met" : "MISSED";
}

/* The kernel's row for row's medium and type; where this kernel has no driver for the
 * type, ext4's kernel row of the medium stands in (*ret_standin set). */
static const UsRow *baseline(const UsReport *rep, const UsRow *row, bool *ret_standin) {
        const UsRow *ext4 = NULL;

        for (unsigned i = 0; i < rep->n_rows; i++) {
                const UsRow *k = &rep->rows[i];

                if (k->medium != row->medium || k->userspace || k->skipped)
                        continue;
                if (streq(k->fstype, row->fstype)) {
                        *ret_standin = false;
                        return k;
                }
                if (streq(k->fstype, "ext4"))
                        ext4 = k;
        }
        *ret_standin = ext4 != NULL;
        return ext4;
}

/* "1.23x" (or "1.23x*" against ext4's kernel row), "-" where either side is missing. */
static const char *ratio(char *buf, size_t size, double v, double base, bool standin) {
        if (v < 0 || base <= 0)
                return "-";
        snprintf(buf, size, "%.2fx%s", v / base, standin ? "*" : "");
        return buf;
}

/* v with decimals places, "-" when not measured. */
static const char *fig(char *buf, size_t size, double v, int decimals) {
        if (v < 0)
                return "-";
        snprintf(buf, size, "%.*f", decimals, v);
        return buf;
}

static void print_mount_table(const UsReport *rep, Medium m) {
        printf("  type      driver      open p50  open p99  x kernel   cpu ms  x kernel  "
               "1st byte ms  x kernel  driver MiB\n");
        for (unsigned i = 0; i < rep->n_rows; i++) {
                const UsRow *r = &rep->rows[i];
                char a[16], b[16], c[16], d[16], e[16], f[16];
                bool standin = false;
                const UsRow *k = r->userspace ? baseline(rep, r, &standin) : NULL;

                if (r->medium != m)
                        continue;
                if (r->skipped) {
                        printf("  %-9s %-10s  n/a (%s)\n", r->fstype, r->driver, r->skipped);
                        continue;
                }
                printf("  %-9s %-10s %9.2f %9.2f %9s %8s %9s %12s %9s %11s\n", r->fstype,
                       r->driver, stats_ms(r->mount.p50_ns), stats_ms(r->mount.p99_ns),
                       k ? ratio(a, sizeof(a), (double) r->mount.p50_ns,
                                 (double) k->mount.p50_ns, standin) : "-",
                       fig(b, sizeof(b), r->cpu_ms, 2),
                       k ? ratio(c, sizeof(c), r->cpu_ms, k->cpu_ms, standin) : "-",
                       fig(d, sizeof(d), r->first_byte_ms, 2),
                       k ? ratio(e, sizeof(e), r->first_byte_ms, k->first_byte_ms, standin)
                         : "-",
                       r->userspace ? fig(f, sizeof(f), r->driver_hwm_mib, 1) : "-");
        }
}

static void print_data_table(const UsReport *rep, Medium m) {
        printf("  type      driver      read MiB/s        write MiB/s       random IOPS        "
               "small files s      unpack s\n");
        for (unsigned i = 0; i < rep->n_rows; i++) {
                const UsRow *r = &rep->rows[i];
                char v[5][16], x[5][16];
                bool standin = false;
                const UsRow *k = r->userspace ? baseline(rep, r, &standin) : NULL;

                if (r->medium != m || r->skipped)
                        continue;
                /* Throughput: the driver's over the kernel's; time: the other way round,
                 * so that every ratio says "times the kernel's". */
                printf("  %-9s %-10s %8s %7s %9s %7s %9s %7s %11s %7s %9s %7s\n", r->fstype,
                       r->driver, fig(v[0], 16, r->read_mibs, 0),
                       k ? ratio(x[0], 16, r->read_mibs, k->read_mibs, standin) : "",
                       fig(v[1], 16, r->write_mibs, 0),
                       k ? ratio(x[1], 16, r->write_mibs, k->write_mibs, standin) : "",
                       fig(v[2], 16, r->random_iops, 0),
                       k ? ratio(x[2], 16, r->random_iops, k->random_iops, standin) : "",
                       fig(v[3], 16, r->meta_s, 2),
                       k ? ratio(x[3], 16, r->meta_s, k->meta_s, standin) : "",
                       fig(v[4], 16, r->unpack_s, 2),
                       k ? ratio(x[4], 16, r->unpack_s, k->unpack_s, standin) : "");
        }
}

/* The rows whose write or small-files job ran out of its time budget. */
static void print_budget_notes(const UsReport *rep, Medium m) {
        for (unsigned i = 0; i < rep->n_rows; i++) {
                const UsRow *r = &rep->rows[i];

                if (r->medium != m || r->skipped)
                        continue;
                if (r->file_bytes < rep->file_size)
                        printf("  (%s %s: a file of %" PRIu64 " MiB: the driver breaks the "
                               "filesystem past 2 GiB of data)\n", r->fstype, r->driver,
                               r->file_bytes >> 20);
                if (r->write_mibs >= 0 && r->written < r->file_bytes)
                        printf("  (%s %s: the write stopped after %u s, at %" PRIu64 " MiB; "
                               "the reads read that file)\n", r->fstype, r->driver,
                               rep->budget_s, r->written >> 20);
                if (r->meta_s >= 0 && r->meta_files < rep->files)
                        printf("  (%s %s: %u of the %u small files made within %u s; its "
                               "times are scaled up to all of them)\n", r->fstype, r->driver,
                               r->meta_files, rep->files, rep->budget_s);
        }
}

static void print_meta_phases(const UsReport *rep, Medium m) {
        printf("  small files by phase (s): create+write+syncfs, stat, open+read, "
               "unlink+rmdir+syncfs\n");
        for (unsigned i = 0; i < rep->n_rows; i++) {
                const UsRow *r = &rep->rows[i];

                if (r->medium != m || r->skipped || r->meta_s < 0)
                        continue;
                printf("  %-9s %-10s %8.3f %8.3f %8.3f %8.3f\n", r->fstype, r->driver,
                       r->meta_phase_s[META_CREATE], r->meta_phase_s[META_STAT],
                       r->meta_phase_s[META_READ], r->meta_phase_s[META_DELETE]);
        }
}

static void print_sizes(const UsReport *rep) {
        if (rep->n_sizes == 0)
                return;
        printf("\n  read-write OpenMount of an empty ext4 by its size (sparse image in memory; "
               "p50/p99 ms)\n");
        printf("  size        kernel p50  kernel p99   fuse2fs p50  fuse2fs p99  x kernel\n");
        for (unsigned i = 0; i < rep->n_sizes; i++) {
                const SizeRow *s = &rep->sizes[i];

                printf("  %-10s %11.2f %11.2f %13.2f %12.2f %8.2fx\n", s->name,
                       stats_ms(s->kernel.p50_ns), stats_ms(s->kernel.p99_ns),
                       stats_ms(s->fuse.p50_ns), stats_ms(s->fuse.p99_ns),
                       s->kernel.p50_ns ? (double) s->fuse.p50_ns / (double) s->kernel.p50_ns : 0);
        }
}

/* ---- targets --------------------------------------------------------------------------------- */

static void target_ratio(const char *what, double v, double base, double limit, bool at_most,
                         bool standin) {
        double x;

        if (v < 0 || base <= 0)
                return;
        x = v / base;
        printf("  %s: %.2fx (%s %.1fx)%s: %s\n", what, x, at_most ? "<=" : ">=", limit,
               standin ? " [* against ext4's kernel driver: this kernel has none for the type]"
                       : "",
               verdict(at_most ? x <= limit : x >= limit));
}

static void print_row_targets(const UsReport *rep, const UsRow *r) {
        const char *medium = r->medium == MEDIUM_MEMORY ? "memory" : "block device";
        double io_limit = r->medium == MEDIUM_MEMORY ? 0.7 : 0.9;
        bool standin = false;
        const UsRow *k = baseline(rep, r, &standin);
        char what[160];

        if (!k)
                return;
        if (!standin) {
                snprintf(what, sizeof(what), "%s, %s %s: OpenMount p50 over the kernel's",
                         medium, r->fstype, r->driver);
                target_ratio(what, (double) r->mount.p50_ns, (double) k->mount.p50_ns, 1.5,
                             true, false);
                snprintf(what, sizeof(what), "%s, %s %s: CPU per mount over the kernel's",
                         medium, r->fstype, r->driver);
                target_ratio(what, r->cpu_ms, k->cpu_ms, 2.0, true, false);
                snprintf(what, sizeof(what), "%s, %s %s: sequential read over the kernel's",
                         medium, r->fstype, r->driver);
                target_ratio(what, r->read_mibs, k->read_mibs, io_limit, false, false);
                snprintf(what, sizeof(what), "%s, %s %s: sequential write over the kernel's",
                         medium, r->fstype, r->driver);
                target_ratio(what, r->write_mibs, k->write_mibs, io_limit, false, false);
        }
        if (!streq(r->fstype, "ext4") && !streq(r->fstype, "vfat") && !streq(r->fstype, "exfat"))
                return;
        snprintf(what, sizeof(what), "%s, %s %s: small-files job over the kernel's", medium,
                 r->fstype, r->driver);
        target_ratio(what, r->meta_s, k->meta_s, 3.0, true, standin);
        snprintf(what, sizeof(what), "%s, %s %s: archive unpack over the kernel's", medium,
                 r->fstype, r->driver);
        target_ratio(what, r->unpack_s, k->unpack_s, 3.0, true, standin);
}

static void print_targets(const UsReport *rep) {
        printf("\n  targets (issue 25; the UDisks2 line is bench-udisks2's)\n");
        for (unsigned i = 0; i < rep->n_rows; i++)
                if (rep->rows[i].userspace && !rep->rows[i].skipped)
                        print_row_targets(rep, &rep->rows[i]);
        if (rep->n_sizes == US_SIZES) {
                const SizeRow *small = &rep->sizes[0], *big = &rep->sizes[US_SIZES - 1];

                target_ratio("fuse2fs: read-write OpenMount p50 at 512 GiB over 64 MiB",
                             (double) big->fuse.p50_ns, (double) small->fuse.p50_ns, 1.3, true,
                             false);
                printf("  (the kernel's driver: %.2fx)\n",
                       small->kernel.p50_ns ? (double) big->kernel.p50_ns /
                                                      (double) small->kernel.p50_ns
                                            : 0);
        }
}

void us_report_print(const UsReport *rep) {
        printf("userspace drivers against the kernel's (issue 25): a %" PRIu64 " MiB file "
               "(written, then read on a fresh mount), %u random 4 KiB reads, %u small files "
               "in %u directories, an archive of %u files (%.1f MiB), %u OpenMount cycles per "
               "row; every job on a fresh mount, as an unprivileged caller in its own user and "
               "mount namespace; write, read and random reads: the median of %u runs\n",
               rep->file_size >> 20, rep->random_reads, rep->files, (rep->files + 99) / 100,
               rep->tar_files, (double) rep->tar_bytes / (1 << 20), rep->iterations, rep->reps);
        for (Medium m = 0; m < _MEDIUM_MAX; m++) {
                bool any = false;

                for (unsigned i = 0; i < rep->n_rows; i++)
                        any = any || rep->rows[i].medium == m;
                if (!any)
                        continue;
                printf("\n  %s\n", medium_names[m]);
                print_mount_table(rep, m);
                printf("\n");
                print_data_table(rep, m);
                print_budget_notes(rep, m);
                printf("\n");
                print_meta_phases(rep, m);
        }
        printf("  (x kernel: the driver's figure over the kernel driver's on the same filesystem "
               "and medium, times for latency, CPU and jobs, rates for read, write and IOPS;\n"
               "   *: this kernel has no driver for the type, ext4's kernel driver on the same "
               "medium stands in. driver MiB: the driver's peak RSS)\n");
        print_sizes(rep);
        print_targets(rep);
}
