/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jobs of usermount-worker for the UDisks2 front (jobs-udisks.c): Manager.LoopSetup,
 * Drive.Eject and Drive.PowerOff.
 */
#pragma once

#include "jobproto.h"
#include "um-error.h"

/* LOOP_SETUP: a marked, auto-clearing loop device of backing_fd (a regular file) for the
 * byte range and mode of job, the image's claim taken (kept for LOOP_CLAIM); *ret_fd the
 * loop device (the daemon keeps it open for as long as the device is to stay), *reply its
 * name, numbers and contents. */
int job_loop_setup(const LoopSetupJob *job, int backing_fd, LoopSetupReply *reply,
                   UmError *error, int *ret_fd);

/* LOOP_CLAIM: the claim of the image LOOP_SETUP took, as *ret_fd. */
int job_loop_claim(UmError *error, int *ret_fd);

/* DRIVE_EJECT: every device of the drive flushed (DeviceBusy if anything holds one), then
 * the medium ejected (SCSI START STOP UNIT), or the drive stopped and its USB port powered
 * off (sysfs "remove" of the USB device); Failed with the reason otherwise. */
int job_drive_eject(const DriveEjectJob *job, UmError *error);
