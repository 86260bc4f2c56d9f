/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source of a BUILD, for the kernel's drivers (jobs.c) and the userspace ones
 * (jobs-userspace.c) alike: the /dev node of a block device for the record, and the
 * re-check of the probe right before the mount (the caller could rewrite its image or
 * device while polkit was asked).
 */
#pragma once

#include <sys/types.h>

#include "jobproto.h"
#include "um-error.h"

/* Where the build stages its mount inside the stage namespace (the daemon's stagens_make()). */
#define STAGE_DIR "/" JOB_STAGE_DIR

/* The /dev node of a block device, found through sysfs and checked to be that very device;
 * else /proc/self/fd/<fd>. */
void block_device_node(dev_t rdev, int fd, char *buf, size_t n);

/* The prober of the type polkit was asked about, on fd, must find that type with the same
 * uuid and label; InvalidSource (EBUSY) if the filesystem changed meanwhile. */
int job_recheck_probe(const BuildJob *job, int fd, SourceProbe *ret, UmError *error);
