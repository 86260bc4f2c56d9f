/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bus to make sd-bus messages with, for the targets that feed real D-Bus messages to a
 * parser (fuzz-params, fuzz-udisks-options): a bus that was never connected cannot make
 * messages; one started on a socketpair can. Made once per process.
 */
#pragma once

#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "fuzz.h"

static inline sd_bus *fuzz_message_bus(void) {
        static sd_bus *bus;
        int sv[2];

        if (bus)
                return bus;
        FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        FUZZ_ASSERT(sd_bus_new(&bus) >= 0);
        FUZZ_ASSERT(sd_bus_set_fd(bus, sv[0], sv[0]) >= 0);
        FUZZ_ASSERT(sd_bus_start(bus) >= 0);
        return bus;
}
