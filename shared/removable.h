/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a block device is removable media, the one fact that makes a device mount
 * org.freedesktop.usermount1.mount-removable (allowed to active sessions without a
 * password) rather than mount-system. Decided from sysfs alone, by walking the device's
 * parents and reading their attributes; never from the text of a sysfs path.
 *
 * The rules, in order (a partition is judged by its whole disk):
 *
 *   1. On the MMC bus (the nearest parent device whose "subsystem" link names "mmc" is the
 *      card), the card's "type" attribute alone decides: "SD", "SDIO" and "SDcombo" are
 *      cards in a slot, removable; "MMC" is eMMC, soldered to the board, and so is
 *      anything else or an unreadable type: not removable. The kernel never sets
 *      "removable" on an mmcblk disk, so rule 2 could not tell the two apart.
 *   2. The whole disk's "removable" attribute is "1": the kernel's flag for removable
 *      media (optical drives, card readers, most USB sticks).
 *   3. A parent device's "removable" attribute is exactly "removable": the kernel's
 *      dev_removable() (the attribute that says "removable", "fixed" or "unknown"), which
 *      USB sets for a device on a port that the hub descriptor or the firmware (ACPI
 *      _UPC/_PLD) reports as user-visible and hot-pluggable, and PCI for a device behind a
 *      Thunderbolt or other external-facing port. Any parent counts: a disk on a hub that
 *      is itself plugged into a removable port can be unplugged with the hub.
 *   4. Nothing else is removable: internal SATA, SAS, NVMe and virtio disks, and a USB or
 *      FireWire disk that reports fixed media on a port marked "fixed" or "unknown" (a
 *      disk wired inside the machine, a USB boot disk), and virtual devices (loop, zram,
 *      device-mapper, md).
 *
 * How this compares with udisks2, which made the same call first:
 *   - Its MediaRemovable is rule 2 for most disks and rule 3 for NVMe (find_removable()),
 *     with udev's 80-udisks2.rules overriding both for MMC by the card type (MMC_TYPE
 *     "MMC" forces non-removable; "SD", "SDIO", "SDcombo" force removable): rules 1-3 here
 *     are the same, applied to every disk.
 *   - Its HintSystem is false also for every disk on a USB or FireWire bus, whatever
 *     the port. That is too wide for a password-less mount: an internal disk on USB would
 *     count. Here such a disk is removable only by rule 2 or 3, so a USB disk enclosure on
 *     a port whose removability the kernel does not know needs mount-system.
 *   - udisks2 takes a missing MMC type for SD; here it is not removable (fail closed).
 *   Legacy MMC cards (the removable card format before SD) also say "MMC": they are
 *   treated as eMMC, the safe side.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef enum RemovableWhy {
        REMOVABLE_WHY_SD_CARD, /* removable: an SD, SDIO or SDcombo card (rule 1) */
        REMOVABLE_WHY_MEDIA,   /* removable: the disk's "removable" attribute is 1 (rule 2) */
        REMOVABLE_WHY_PARENT,  /* removable: a parent device is marked "removable" (rule 3) */
        REMOVABLE_WHY_MMC,     /* fixed: an MMC (eMMC) card, or of unknown type (rule 1) */
        REMOVABLE_WHY_FIXED,   /* fixed: none of the above (rule 4) */
        _REMOVABLE_WHY_MAX,
} RemovableWhy;

/*
 * Judges the block device devnum (a whole disk or a partition) by the rules above.
 * sysfs_fd: a directory fd of the sysfs root ("/sys", or a fake tree in tests); the device
 * is found as dev/block/MAJOR:MINOR below it. Returns 1 if removable, 0 if not, and sets
 * *ret_why (may be NULL) to the rule that decided; -errno if the device cannot be found or
 * its parents cannot be walked (-ENOENT: no such device), with *ret_why untouched.
 */
int removable_check(int sysfs_fd, dev_t devnum, RemovableWhy *ret_why);

/* A phrase for the log: "an SD card", "an eMMC or MMC card", ... (static storage). */
const char *removable_why_to_string(RemovableWhy why);
