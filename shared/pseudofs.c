/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of kernel pseudo filesystems (see pseudofs.h). */
#include <linux/magic.h>
#include <stddef.h>

#include "kernel-compat.h"
#include "macro.h"
#include "pseudofs.h"

static const struct {
        uint64_t magic;
        const char *name;
} pseudo_filesystems[] = {
        { PROC_SUPER_MAGIC, "proc" },
        { SYSFS_MAGIC, "sysfs" },
        { DEBUGFS_MAGIC, "debugfs" },
        { TRACEFS_MAGIC, "tracefs" },
        { SECURITYFS_MAGIC, "securityfs" },
        { SELINUX_MAGIC, "selinuxfs" },
        { SMACK_MAGIC, "smackfs" },
        { CGROUP_SUPER_MAGIC, "cgroup" },
        { CGROUP2_SUPER_MAGIC, "cgroup2" },
        { RDTGROUP_SUPER_MAGIC, "resctrl" },
        { BPF_FS_MAGIC, "bpf" },
        { CONFIGFS_MAGIC, "configfs" },
        { NSFS_MAGIC, "nsfs" },
        { PID_FS_MAGIC, "pidfs" },
        { PSTOREFS_MAGIC, "pstore" },
        { EFIVARFS_MAGIC, "efivarfs" },
        { FUSECTL_SUPER_MAGIC, "fusectl" },
        { MQUEUE_MAGIC, "mqueue" },
        { HUGETLBFS_MAGIC, "hugetlbfs" },
        { DEVPTS_SUPER_MAGIC, "devpts" },
        { BINFMTFS_MAGIC, "binfmt_misc" },
        { BINDERFS_SUPER_MAGIC, "binder" },
        { AUTOFS_SUPER_MAGIC, "autofs" },
        { USBDEVICE_SUPER_MAGIC, "usbdevfs" },
        { ANON_INODE_FS_MAGIC, "anon_inodefs" },
        { SOCKFS_MAGIC, "sockfs" },
        { PIPEFS_MAGIC, "pipefs" },
        { BDEVFS_MAGIC, "bdev" },
        { SECRETMEM_MAGIC, "secretmem" },
};

/* Pseudo filesystems that share a magic with a real one (devtmpfs is a tmpfs). */
static const char *const pseudo_type_names[] = { "devtmpfs" };

const char *pseudofs_name(uint64_t magic) {
        for (size_t i = 0; i < ELEMENTSOF(pseudo_filesystems); i++)
                if (pseudo_filesystems[i].magic == magic)
                        return pseudo_filesystems[i].name;
        return NULL;
}

const char *pseudofs_name_by_type(const char *fstype) {
        if (isempty(fstype))
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(pseudo_filesystems); i++)
                if (streq(fstype, pseudo_filesystems[i].name))
                        return pseudo_filesystems[i].name;
        for (size_t i = 0; i < ELEMENTSOF(pseudo_type_names); i++)
                if (streq(fstype, pseudo_type_names[i]))
                        return pseudo_type_names[i];
        return NULL;
}
