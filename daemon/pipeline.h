/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The request pipeline (docs/architecture.md, "Request flow"): what happens to a call once
 * it is parsed and its caller known, from the limits through the probe, the policy,
 * polkit, the build and the attach to the reply; Unmount, ListMounts and Subscribe on
 * their own shorter ways; the UDisks2 front's LoopSetup and Eject/PowerOff too.
 * pipeline.c has the stages top-down, pipeline-udisks.c those two.
 */
#pragma once

#include "request.h"

/*
 * Takes a parsed request whose caller is known (manager-dbus.c), checks the limits and
 * starts it. From here on the pipeline owns it: it is answered and freed when it ends,
 * or at once with the error when it is refused.
 */
void pipeline_start(Request *req);
