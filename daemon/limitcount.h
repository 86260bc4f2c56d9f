/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A request's limits (usermount.conf(5), [Limits]) counted where the pipeline needs them:
 * requests in flight, registered and coming mounts, loop devices, userspace drivers and
 * workers, each per owner and overall. The comparison with the configured limits, and
 * the messages, are admission.h's (pure); the counting is here.
 */
#pragma once

#include <stdbool.h>

#include "request.h"
#include "um-error.h"

/* LimitExceeded when req would pass one of the limits on requests and mounts: checked
 * once, when the pipeline takes it. */
int limitcount_check_request(Request *req, UmError *error);

/* Whether req is charged to MaxUnauthorizedRequests= from its start: a mount request (they
 * probe before polkit is asked) of anybody but root whose owner polkit has not said yes to
 * since the daemon started. */
bool limitcount_charges_unauthorized(const Request *req);

/* LimitExceeded when one more loop device for req (an image) would pass the loop device
 * limits. Called once the probe worker has found that the source is an image. */
int limitcount_check_loops(Request *req, UmError *error);

/* LimitExceeded when one more userspace driver for req would pass the driver limits. */
int limitcount_check_drivers(Request *req, UmError *error);

/* LimitExceeded when giving req's worker one more job would pass a worker limit. */
int limitcount_check_workers(Request *req, UmError *error);
