#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Checks that the integration harness leaves the machine exactly as it found it, however
# the test process ends: test-harness-smoke (argument 1) in crash mode mounts an image,
# holds a loop device, runs dbus-daemon, polkitd, a stand-in daemon and a caller in a user
# namespace, and then aborts, is SIGKILLed, or hangs until its process group gets SIGTERM
# or SIGKILL (what meson does on a timeout). After each, this compares the host's loop
# devices, mount table, processes and directories with a snapshot from before.

set -u
smoke=$1

if [ "$(id -u)" != 0 ]; then
        echo "skipped: the harness needs root"
        exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What only the harness can have made: loop devices and mounts of its images, processes
# started in its environment, its directories. The machine is shared with other work, so
# only these decide; the full picture is printed for information.
harness_state() {
        losetup --list --noheadings --output NAME,BACK-FILE 2> /dev/null | grep usermount-harness
        grep usermount-harness /proc/self/mountinfo
        for p in /proc/[0-9]*; do
                comm=$(cat "$p/comm" 2> /dev/null) || continue
                if [ "$comm" = test-harness-sm ] ||
                        grep -qz '^UM_HARNESS_TMPDIR=' "$p/environ" 2> /dev/null; then
                        echo "process ${p#/proc/} $comm"
                fi
        done
        ls -d /run/usermount-harness.* /tmp/usermount-harness.* /run/dbus/system_bus_socket \
                /run/usermount /run/media 2> /dev/null
        # The harness's udevd writes below these, on tmpfs mounts of its own over them;
        # where the host has none, the harness makes the directories and removes them.
        ls -d /dev/disk /dev/block /dev/char 2> /dev/null
}

# The harness's janitor, which cleans up after a kill of the whole process group, ends
# once it has; one of the test run before this one may still be at it.
janitors() {
        pgrep -x um-harness-jan
}

wait_for_janitors() {
        i=0
        while janitors > /dev/null && [ $i -lt 50 ]; do
                sleep 0.1
                i=$((i + 1))
        done
        ! janitors > /dev/null
}

machine_state() {
        losetup --list --noheadings --output NAME,BACK-FILE 2> /dev/null | sort
        awk '{ print $5 }' /proc/self/mountinfo | sort
        ls -a /run /tmp | grep -v "^$(basename "$work")\$"
}

# Waits (bounded) for the kernel to let go of loop devices after the namespace died.
settle() {
        i=0
        while [ $i -lt 50 ]; do
                harness_state > "$work/after"
                janitors >> "$work/after"
                cmp -s "$work/before" "$work/after" && return 0
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}

failed=0
leaks=
for mode in abort sigkill group-sigterm group-sigkill; do
        wait_for_janitors || echo "# note: a janitor of an earlier run is still there"
        harness_state > "$work/before"
        machine_state > "$work/machine-before"
        case $mode in
        abort | sigkill)
                UM_HARNESS_SMOKE_CRASH=$mode "$smoke" > "$work/out" 2> "$work/err"
                status=$?
                ;;
        group-*)
                # Emptied here, not by the redirection in the child: the loop below must
                # not find the previous run's READY before the child has started.
                : > "$work/out"
                UM_HARNESS_SMOKE_CRASH=hang setsid "$smoke" > "$work/out" 2> "$work/err" &
                pid=$!
                i=0
                until grep -q '^READY' "$work/out" || ! kill -0 "$pid" 2> /dev/null ||
                        [ $i -ge 600 ]; do
                        sleep 0.1
                        i=$((i + 1))
                done
                # While it runs, nothing of it is visible here.
                leaks=
                read -r _ tmpdir device mountpoint < <(grep '^READY' "$work/out")
                [ -n "${tmpdir:-}" ] && leaks=$(ls -d "$tmpdir" 2> /dev/null
                        readlink /run/dbus/system_bus_socket | grep -F "$tmpdir"
                        grep -lx '\[crash\]' /etc/usermount/usermount.conf 2> /dev/null
                        grep -l '^umtest1:' /etc/passwd /etc/group
                        grep -F " $mountpoint " /proc/self/mountinfo
                        grep -F "$tmpdir" /proc/self/mountinfo)
                if [ -n "${leaks:-}" ]; then
                        echo "not ok: $mode: the host sees the harness while it runs: $leaks"
                        failed=1
                fi
                if [ "$mode" = group-sigterm ]; then
                        kill -TERM -- "-$pid"
                else
                        kill -KILL -- "-$pid"
                fi
                wait "$pid"
                status=$?
                ;;
        esac
        if ! grep -q '^READY' "$work/out"; then
                echo "not ok: $mode: the environment was never set up (status $status)"
                cat "$work/err"
                failed=1
                continue
        fi
        if settle; then
                echo "ok: $mode (status $status): nothing left behind"
                machine_state > "$work/machine-after"
                if ! cmp -s "$work/machine-before" "$work/machine-after"; then
                        echo "# note: the machine changed meanwhile (other work?):"
                        diff "$work/machine-before" "$work/machine-after" | sed 's/^/#   /'
                fi
        else
                echo "not ok: $mode (status $status): the machine changed:"
                diff "$work/before" "$work/after"
                cat "$work/err"
                failed=1
        fi
done
exit $failed
