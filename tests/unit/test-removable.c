/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Table-driven tests of the removable-media decision (shared/removable.c), which picks
 * mount-removable (no password for active sessions) over mount-system. Each row builds a
 * fake sysfs tree in a temporary directory, laid out as the kernel lays out the real one
 * (dev/block/MAJOR:MINOR links into devices/..., "subsystem" links, "removable", "type"
 * and "partition" attributes), and states the verdict and the rule that must decide it:
 * USB sticks and disk enclosures on ports marked removable, fixed or unknown, internal
 * SATA, eMMC against SD cards, NVMe (internal and behind Thunderbolt), virtio, loop and
 * zram, a partition of each, and paths that only look like USB or MMC. The last tests
 * judge every virtual block device of this machine (loop, zram...) through the real /sys.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "macro.h"
#include "removable.h"

/* ---- Fake sysfs trees ------------------------------------------------------------------- */

/*
 * A tree is a NULL-terminated list of lines: "path=value" writes an attribute file holding
 * value and a newline, "path->target" makes a symbolic link. Parent directories are made
 * as needed. DEV() is the dev/block link the kernel makes for each disk and partition.
 */
#define DEV(majmin, path) "dev/block/" majmin "->../../" path

/* A USB mass-storage disk sdb (8:16, partition sdb1 8:17) on port 1 of root hub usb2;
 * port: the USB device's "removable" attribute, media: the disk's. */
#define USB "devices/pci0000:00/0000:00:14.0/usb2"
#define USB_SDB USB "/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sdb"
#define USB_DISK(port, media)                                                     \
        USB "/subsystem->../../../bus/usb", USB "/removable=unknown",             \
        USB "/2-1/subsystem->../../../../bus/usb", USB "/2-1/removable=" port,    \
        USB "/2-1/2-1:1.0/subsystem->../../../../../bus/usb",                     \
        USB "/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/subsystem->../../../../bus/scsi", \
        USB_SDB "/subsystem->../../../../../../class/block", USB_SDB "/removable=" media, \
        USB_SDB "/sdb1/partition=1", DEV("8:16", USB_SDB), DEV("8:17", USB_SDB "/sdb1")

/* A disk sdc (8:32) on port 4 of an external hub 2-1 (hub_port: the disk's "removable",
 * the hub's own port: hub). */
#define HUB_SDC USB "/2-1/2-1.4/2-1.4:1.0/host5/target5:0:0/5:0:0:0/block/sdc"
#define USB_HUB_DISK(hub, hub_port)                                                       \
        USB "/subsystem->../../../bus/usb", USB "/removable=unknown",                     \
        USB "/2-1/subsystem->../../../../bus/usb", USB "/2-1/removable=" hub,             \
        USB "/2-1/2-1.4/subsystem->../../../../../bus/usb",                               \
        USB "/2-1/2-1.4/removable=" hub_port, HUB_SDC "/removable=0", DEV("8:32", HUB_SDC)

/* An internal SATA disk sda (8:0, partition sda2 8:2) and optical drive sr0 (11:0). */
#define ATA "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0"
#define ATA_SDA ATA "/0:0:0:0/block/sda"
#define ATA_SR0 ATA "/0:0:1:0/block/sr0"
#define SATA                                                                          \
        ATA "/0:0:0:0/subsystem->../../../../../../bus/scsi", ATA_SDA "/removable=0",  \
        ATA_SDA "/sda2/partition=2", DEV("8:0", ATA_SDA), DEV("8:2", ATA_SDA "/sda2"), \
        ATA_SR0 "/removable=1", DEV("11:0", ATA_SR0)

/* An MMC card (type: its "type" attribute, NULL for none) with disk mmcblkN (179:0,
 * partition p1 179:1, boot partition disk boot0 179:8) on host mmc0 of a controller. */
#define MMC_HOST "devices/platform/soc/fe340000.mmc/mmc_host/mmc0"
#define MMC_CARD MMC_HOST "/mmc0:0001"
#define MMC_BLK MMC_CARD "/block/mmcblk0"
#define MMC_COMMON(media)                                                                 \
        MMC_HOST "/subsystem->../../../../../../class/mmc_host",                          \
        MMC_CARD "/subsystem->../../../../../../bus/mmc", MMC_BLK "/removable=" media,    \
        MMC_BLK "/mmcblk0p1/partition=1", MMC_CARD "/block/mmcblk0boot0/removable=0",     \
        DEV("179:0", MMC_BLK), DEV("179:1", MMC_BLK "/mmcblk0p1"),                        \
        DEV("179:8", MMC_CARD "/block/mmcblk0boot0")
#define MMC_CARD_OF(type, media) MMC_COMMON(media), MMC_CARD "/type=" type

/* NVMe namespaces: nvme0n1 (259:0, partition p1 259:1) on an internal PCIe port, nvme1n1
 * (259:2) behind a Thunderbolt bridge (PCI marks the port and everything below it). */
#define NVME0 "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
#define TBT "devices/pci0000:00/0000:00:07.0/0000:05:00.0/0000:06:01.0"
#define NVME1 TBT "/0000:07:00.0/nvme/nvme1/nvme1n1"
#define NVME                                                                           \
        "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/subsystem->../../../bus/pci",    \
        NVME0 "/removable=0", NVME0 "/nvme0n1p1/partition=1", DEV("259:0", NVME0),     \
        DEV("259:1", NVME0 "/nvme0n1p1"), TBT "/removable=removable",                  \
        TBT "/0000:07:00.0/removable=removable", NVME1 "/removable=0", DEV("259:2", NVME1)

/* A virtio disk vda (254:0, partition vda1 254:1), loop0 (7:0, partition loop0p1 259:9)
 * and zram0 (252:0), as on this machine. */
#define VDA "devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
#define LOOP0 "devices/virtual/block/loop0"
#define ZRAM0 "devices/virtual/block/zram0"
#define VIRTUAL                                                                          \
        "devices/pci0000:00/0000:00:02.0/virtio1/subsystem->../../../../bus/virtio",     \
        VDA "/removable=0", VDA "/vda1/partition=1", DEV("254:0", VDA),                  \
        DEV("254:1", VDA "/vda1"), LOOP0 "/removable=0", LOOP0 "/loop0p1/partition=1",   \
        DEV("7:0", LOOP0), DEV("259:9", LOOP0 "/loop0p1"), ZRAM0 "/removable=0",         \
        DEV("252:0", ZRAM0)

/* Paths that only look like USB or MMC, which the old substring test took as removable:
 * a virtual disk named mmcblk9, a platform device named usb-sim, and a disk below an MMC
 * host (class mmc_host) that is not on the MMC bus. */
#define LOOKALIKE_MMC "devices/virtual/block/mmcblk9"
#define LOOKALIKE_USB "devices/platform/usb-sim/host9/target9:0:0/9:0:0:0/block/sdz"
#define LOOKALIKE_HOST "devices/platform/x.mmc/mmc_host/mmc3/mmc3:sim/block/sdy"
#define LOOKALIKES                                                                    \
        LOOKALIKE_MMC "/removable=0", DEV("179:90", LOOKALIKE_MMC),                   \
        LOOKALIKE_USB "/removable=0", DEV("65:144", LOOKALIKE_USB),                   \
        "devices/platform/x.mmc/mmc_host/mmc3/subsystem->../../../../class/mmc_host", \
        LOOKALIKE_HOST "/removable=0", DEV("65:128", LOOKALIKE_HOST)

/* "removable" attributes that do not say what the rules read: a parent's "1" (what a memory
 * block says) and "fixed"; a disk without the attribute, and a disk whose attribute says
 * "removable" (a disk's media flag is "1"). */
#define ODD_SDX "devices/platform/odd/block/sdx"
#define ODD_SDW "devices/platform/fixed/block/sdw"
#define ODD_SDV "devices/platform/bare/block/sdv"
#define ODD_SDU "devices/platform/word/block/sdu"
#define ODD_ATTRIBUTES                                                                        \
        "devices/platform/odd/removable=1", ODD_SDX "/removable=0", DEV("65:112", ODD_SDX),    \
        "devices/platform/fixed/removable=fixed", ODD_SDW "/removable=0",                      \
        DEV("65:96", ODD_SDW), ODD_SDV "/size=0", DEV("65:80", ODD_SDV),                       \
        ODD_SDU "/removable=removable", DEV("65:64", ODD_SDU)

static const char *const tree_usb_stick[] = { USB_DISK("unknown", "1"), NULL };
static const char *const tree_usb_reader_fixed_port[] = { USB_DISK("fixed", "1"), NULL };
static const char *const tree_usb_enclosure_fixed[] = { USB_DISK("fixed", "0"), NULL };
static const char *const tree_usb_enclosure_unknown[] = { USB_DISK("unknown", "0"), NULL };
static const char *const tree_usb_enclosure_removable[] = { USB_DISK("removable", "0"), NULL };
static const char *const tree_usb_hub_removable[] = { USB_HUB_DISK("removable", "fixed"), NULL };
static const char *const tree_usb_hub_fixed[] = { USB_HUB_DISK("fixed", "unknown"), NULL };
static const char *const tree_sata[] = { SATA, NULL };
static const char *const tree_emmc[] = { MMC_CARD_OF("MMC", "0"), NULL };
static const char *const tree_emmc_flagged[] = { MMC_CARD_OF("MMC", "1"), NULL };
static const char *const tree_emmc_removable_parent[] = {
        MMC_CARD_OF("MMC", "0"), "devices/platform/soc/removable=removable", NULL
};
static const char *const tree_sd[] = { MMC_CARD_OF("SD", "0"), NULL };
static const char *const tree_sdio[] = { MMC_CARD_OF("SDIO", "0"), NULL };
static const char *const tree_sdcombo[] = { MMC_CARD_OF("SDcombo", "0"), NULL };
static const char *const tree_mmc_type_empty[] = { MMC_CARD_OF("", "0"), NULL };
static const char *const tree_mmc_type_other[] = { MMC_CARD_OF("sd", "1"), NULL };
static const char *const tree_mmc_type_missing[] = { MMC_COMMON("0"), NULL };
static const char *const tree_nvme[] = { NVME, NULL };
static const char *const tree_virtual[] = { VIRTUAL, NULL };
static const char *const tree_lookalikes[] = { LOOKALIKES, NULL };
static const char *const tree_odd[] = { ODD_ATTRIBUTES, NULL };

static int remove_entry(const char *path, _unused_ const struct stat *st, _unused_ int flag,
                        _unused_ struct FTW *ftw) {
        return remove(path) < 0 ? -errno : 0;
}

/* Builds tree in a new temporary directory; returns its path (g_free()). */
static char *tree_build(const char *const *tree) {
        g_autoptr(GError) error = NULL;
        char *root = g_dir_make_tmp("test-removable-XXXXXX", &error);

        g_assert_no_error(error);
        for (size_t i = 0; tree[i]; i++) {
                const char *arrow = strstr(tree[i], "->"), *eq = strchr(tree[i], '=');
                size_t n = arrow ? (size_t) (arrow - tree[i]) : (size_t) (eq - tree[i]);
                g_autofree char *rel = g_strndup(tree[i], n);
                g_autofree char *path = g_build_filename(root, rel, NULL);
                g_autofree char *dir = g_path_get_dirname(path);

                g_assert_true(arrow || eq);
                g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
                if (arrow) {
                        g_assert_cmpint(symlink(arrow + 2, path), ==, 0);
                } else {
                        g_autofree char *value = g_strconcat(eq + 1, "\n", NULL);

                        g_assert_true(g_file_set_contents(path, value, -1, &error));
                }
        }
        return root;
}

static void tree_remove(const char *root) {
        g_assert_cmpint(nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS), ==, 0);
}

/* ---- The table -------------------------------------------------------------------------- */

#define NOT_FOUND (-ENOENT)

typedef struct Case {
        const char *name;
        const char *const *tree;
        unsigned major, minor;
        int want; /* 1 removable, 0 not, or -errno */
        RemovableWhy why;
} Case;

static const Case cases[] = {
        /* USB: the media flag, then the port. */
        { "usb-stick", tree_usb_stick, 8, 16, 1, REMOVABLE_WHY_MEDIA },
        { "usb-stick-partition", tree_usb_stick, 8, 17, 1, REMOVABLE_WHY_MEDIA },
        { "usb-reader-on-fixed-port", tree_usb_reader_fixed_port, 8, 16, 1, REMOVABLE_WHY_MEDIA },
        { "usb-enclosure-fixed-port", tree_usb_enclosure_fixed, 8, 16, 0, REMOVABLE_WHY_FIXED },
        { "usb-enclosure-fixed-port-partition", tree_usb_enclosure_fixed, 8, 17, 0,
          REMOVABLE_WHY_FIXED },
        { "usb-enclosure-unknown-port", tree_usb_enclosure_unknown, 8, 16, 0,
          REMOVABLE_WHY_FIXED },
        { "usb-enclosure-removable-port", tree_usb_enclosure_removable, 8, 16, 1,
          REMOVABLE_WHY_PARENT },
        { "usb-enclosure-removable-port-partition", tree_usb_enclosure_removable, 8, 17, 1,
          REMOVABLE_WHY_PARENT },
        { "usb-hub-on-removable-port", tree_usb_hub_removable, 8, 32, 1, REMOVABLE_WHY_PARENT },
        { "usb-hub-on-fixed-port", tree_usb_hub_fixed, 8, 32, 0, REMOVABLE_WHY_FIXED },
        /* Internal SATA. */
        { "sata-disk", tree_sata, 8, 0, 0, REMOVABLE_WHY_FIXED },
        { "sata-disk-partition", tree_sata, 8, 2, 0, REMOVABLE_WHY_FIXED },
        { "sata-optical", tree_sata, 11, 0, 1, REMOVABLE_WHY_MEDIA },
        /* MMC: the card's type alone. */
        { "emmc", tree_emmc, 179, 0, 0, REMOVABLE_WHY_MMC },
        { "emmc-partition", tree_emmc, 179, 1, 0, REMOVABLE_WHY_MMC },
        { "emmc-boot-partition", tree_emmc, 179, 8, 0, REMOVABLE_WHY_MMC },
        { "emmc-media-flag", tree_emmc_flagged, 179, 0, 0, REMOVABLE_WHY_MMC },
        { "emmc-removable-parent", tree_emmc_removable_parent, 179, 0, 0, REMOVABLE_WHY_MMC },
        { "sd-card", tree_sd, 179, 0, 1, REMOVABLE_WHY_SD_CARD },
        { "sd-card-partition", tree_sd, 179, 1, 1, REMOVABLE_WHY_SD_CARD },
        { "sdio-card", tree_sdio, 179, 0, 1, REMOVABLE_WHY_SD_CARD },
        { "sdcombo-card", tree_sdcombo, 179, 1, 1, REMOVABLE_WHY_SD_CARD },
        { "mmc-type-empty", tree_mmc_type_empty, 179, 0, 0, REMOVABLE_WHY_MMC },
        { "mmc-type-lowercase", tree_mmc_type_other, 179, 0, 0, REMOVABLE_WHY_MMC },
        { "mmc-type-missing", tree_mmc_type_missing, 179, 1, 0, REMOVABLE_WHY_MMC },
        /* NVMe: internal, and behind Thunderbolt (udisks2's find_removable()). */
        { "nvme", tree_nvme, 259, 0, 0, REMOVABLE_WHY_FIXED },
        { "nvme-partition", tree_nvme, 259, 1, 0, REMOVABLE_WHY_FIXED },
        { "nvme-thunderbolt", tree_nvme, 259, 2, 1, REMOVABLE_WHY_PARENT },
        /* Virtual and paravirtual disks. */
        { "virtio", tree_virtual, 254, 0, 0, REMOVABLE_WHY_FIXED },
        { "virtio-partition", tree_virtual, 254, 1, 0, REMOVABLE_WHY_FIXED },
        { "loop", tree_virtual, 7, 0, 0, REMOVABLE_WHY_FIXED },
        { "loop-partition", tree_virtual, 259, 9, 0, REMOVABLE_WHY_FIXED },
        { "zram", tree_virtual, 252, 0, 0, REMOVABLE_WHY_FIXED },
        /* Names are not attributes. */
        { "lookalike-mmcblk-name", tree_lookalikes, 179, 90, 0, REMOVABLE_WHY_FIXED },
        { "lookalike-usb-path", tree_lookalikes, 65, 144, 0, REMOVABLE_WHY_FIXED },
        { "lookalike-mmc-host", tree_lookalikes, 65, 128, 0, REMOVABLE_WHY_FIXED },
        /* Only the exact words count. */
        { "parent-removable-1", tree_odd, 65, 112, 0, REMOVABLE_WHY_FIXED },
        { "parent-fixed", tree_odd, 65, 96, 0, REMOVABLE_WHY_FIXED },
        { "disk-without-attribute", tree_odd, 65, 80, 0, REMOVABLE_WHY_FIXED },
        { "disk-removable-word", tree_odd, 65, 64, 0, REMOVABLE_WHY_FIXED },
        /* No such device. */
        { "not-found", tree_sata, 8, 99, NOT_FOUND, _REMOVABLE_WHY_MAX },
};

static void test_case(const void *data) {
        const Case *c = data;
        g_autofree char *root = tree_build(c->tree);
        _cleanup_close_ int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        RemovableWhy why = _REMOVABLE_WHY_MAX;
        int r, r_without_why;

        g_assert_cmpint(fd, >=, 0);
        r = removable_check(fd, makedev(c->major, c->minor), &why);
        r_without_why = removable_check(fd, makedev(c->major, c->minor), NULL);
        tree_remove(root); /* before any assertion, so that a failure leaves nothing behind */
        if (r >= 0)
                g_test_message("%u:%u: %s", c->major, c->minor, removable_why_to_string(why));
        g_assert_cmpint(r, ==, c->want);
        g_assert_cmpint(why, ==, c->why); /* untouched on failure */
        g_assert_cmpint(r_without_why, ==, c->want);
}

/* ---- The walk's limits and the phrases -------------------------------------------------- */

/* A tree without a "devices" directory ends the walk at the sysfs root. */
static void test_no_devices_directory(void) {
        static const char *const tree[] = { "usbstuff/sdb/removable=0", "removable=removable",
                                            "dev/block/8:16->../../usbstuff/sdb", NULL };
        g_autofree char *root = tree_build(tree);
        _cleanup_close_ int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        RemovableWhy why = _REMOVABLE_WHY_MAX;
        int r;

        /* The root's own "removable" is never read: it is not a parent device. */
        r = removable_check(fd, makedev(8, 16), &why);
        tree_remove(root);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(why, ==, REMOVABLE_WHY_FIXED);
}

/* A tree deeper than any device tree fails (-ELOOP) rather than walking on. */
static void test_too_deep(void) {
        g_autoptr(GString) path = g_string_new("devices");
        g_autofree char *link = NULL;
        const char *tree[3];
        g_autofree char *root = NULL;
        _cleanup_close_ int fd = -EBADF;
        RemovableWhy why = _REMOVABLE_WHY_MAX;
        int r;

        for (int i = 0; i < 70; i++)
                g_string_append_printf(path, "/d%d", i);
        g_string_append(path, "/block/sdb");
        tree[0] = g_strconcat(path->str, "/removable=0", NULL);
        link = g_strconcat("dev/block/8:16->../../", path->str, NULL);
        tree[1] = link;
        tree[2] = NULL;
        root = tree_build(tree);
        fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = removable_check(fd, makedev(8, 16), &why);
        tree_remove(root);
        g_free((char *) tree[0]);
        g_assert_cmpint(r, ==, -ELOOP);
        g_assert_cmpint(why, ==, _REMOVABLE_WHY_MAX);
}

static void test_why_strings(void) {
        for (RemovableWhy a = 0; a < _REMOVABLE_WHY_MAX; a++) {
                g_assert_nonnull(removable_why_to_string(a));
                g_assert_cmpstr(removable_why_to_string(a), !=, "unknown");
                for (RemovableWhy b = a + 1; b < _REMOVABLE_WHY_MAX; b++)
                        g_assert_cmpstr(removable_why_to_string(a), !=,
                                        removable_why_to_string(b));
        }
        g_assert_cmpstr(removable_why_to_string(_REMOVABLE_WHY_MAX), ==, "unknown");
        g_assert_cmpstr(removable_why_to_string((RemovableWhy) -1), ==, "unknown");
}

/* ---- The real /sys ----------------------------------------------------------------------- */

/*
 * Judges each block device in the real /sys whose name starts with prefix ("" for all) and
 * whose device lives under /sys/devices/virtual (loop, zram, device-mapper...): none is
 * removable. Returns how many were judged.
 */
static unsigned judge_real_virtual(const char *prefix) {
        _cleanup_(closedirp) DIR *d = opendir("/sys/class/block");
        _cleanup_close_ int sysfs_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
        unsigned n = 0;
        struct dirent *de;

        g_assert_nonnull(d);
        g_assert_cmpint(sysfs_fd, >=, 0);
        while ((de = readdir(d))) {
                g_autofree char *link = NULL, *dev_path = NULL, *dev = NULL;
                unsigned major, minor;
                RemovableWhy why;

                if (de->d_name[0] == '.' || !g_str_has_prefix(de->d_name, prefix))
                        continue;
                link = g_strconcat("/sys/class/block/", de->d_name, NULL);
                dev_path = realpath(link, NULL);
                if (!dev_path || !g_str_has_prefix(dev_path, "/sys/devices/virtual/"))
                        continue;
                g_free(link);
                link = g_strconcat(dev_path, "/dev", NULL);
                g_assert_true(g_file_get_contents(link, &dev, NULL, NULL));
                g_assert_cmpint(sscanf(dev, "%u:%u", &major, &minor), ==, 2);
                g_assert_cmpint(removable_check(sysfs_fd, makedev(major, minor), &why), ==, 0);
                g_assert_cmpint(why, ==, REMOVABLE_WHY_FIXED);
                g_test_message("%s (%u:%u): %s", de->d_name, major, minor,
                               removable_why_to_string(why));
                n++;
        }
        return n;
}

static void test_real_zram(void) {
        if (judge_real_virtual("zram") == 0)
                g_test_skip("no zram device on this machine");
}

static void test_real_virtual(void) {
        if (judge_real_virtual("") == 0)
                g_test_skip("no virtual block device on this machine");
}

/* Every block device of this machine can be judged (the walk ends on the real /sys). */
static void test_real_all(void) {
        _cleanup_(closedirp) DIR *d = opendir("/sys/class/block");
        _cleanup_close_ int sysfs_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;

        g_assert_nonnull(d);
        while ((de = readdir(d))) {
                g_autofree char *path = NULL, *dev = NULL;
                unsigned major, minor;
                RemovableWhy why;
                int r;

                if (de->d_name[0] == '.')
                        continue;
                path = g_strconcat("/sys/class/block/", de->d_name, "/dev", NULL);
                g_assert_true(g_file_get_contents(path, &dev, NULL, NULL));
                g_assert_cmpint(sscanf(dev, "%u:%u", &major, &minor), ==, 2);
                r = removable_check(sysfs_fd, makedev(major, minor), &why);
                g_assert_cmpint(r, >=, 0);
                g_test_message("%s: %s", de->d_name, removable_why_to_string(why));
        }
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                g_autofree char *path = g_strconcat("/removable/sysfs/", cases[i].name, NULL);

                g_test_add_data_func(path, &cases[i], test_case);
        }
        g_test_add_func("/removable/walk/no-devices-directory", test_no_devices_directory);
        g_test_add_func("/removable/walk/too-deep", test_too_deep);
        g_test_add_func("/removable/why/strings", test_why_strings);
        g_test_add_func("/removable/real-sysfs/zram", test_real_zram);
        g_test_add_func("/removable/real-sysfs/virtual", test_real_virtual);
        g_test_add_func("/removable/real-sysfs/all", test_real_all);

        return g_test_run();
}
