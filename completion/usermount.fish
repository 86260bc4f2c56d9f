# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion of usermount(1), offering what completion/usermount.bash offers: commands
# and options as client/*.c parse them, filesystem types, id mappings, drivers and the kinds
# of --partition, files where a path goes, for unmount the mount points that "usermount
# list" shows, and for automount's --ignore-label and --ignore-uuid the labels and UUIDs of
# /dev/disk/by-label and by-uuid (the tests point $USERMOUNT_DISK_DIR elsewhere).

# Prints the command (mount, unmount...) and, on a second line, how many operands follow it
# before the word being completed; fails before the command.
function __usermount_position
        # The options of mount that take their value in the next word ("-t ext4"): that
        # word is no operand.
        set -l value_options -t --type -o --options --idmap --userns --partition --driver \
                --ignore-label --ignore-uuid --ignore-fstype --config --container
        set -l command
        set -l operands 0
        set -l skip 0
        for w in (commandline -opc)[2..-1]
                if test $skip = 1
                        set skip 0
                else if test -z "$command"
                        string match -q -- '-*' $w; or set command $w
                else if contains -- $w $value_options
                        set skip 1
                else if not string match -q -- '-*' $w
                        set operands (math $operands + 1)
                end
        end
        test -n "$command"; or return 1
        printf '%s\n' $command $operands
end

# __usermount_is COMMAND... : the command is one of COMMAND.
function __usermount_is
        set -l p (__usermount_position); or return 1
        contains -- $p[1] $argv
end

# __usermount_operand COMMAND N : the word being completed is operand N (from 0) of COMMAND;
# "N+" means N or later.
function __usermount_operand
        set -l p (__usermount_position); or return 1
        test $p[1] = $argv[1]; or return 1
        set -l n (string trim -r -c + -- $argv[2])
        if string match -q -- '*+' $argv[2]
                test $p[2] -ge $n
        else
                test $p[2] -eq $n
        end
end

# The mount points usermountd keeps, from "usermount list --json" of the usermount being
# completed. As in usermount.bash, the JSON is read without a parser: each "mount-point"
# value, with JSON's \" and \\ undone.
function __usermount_mount_points
        set -l json (timeout 5 (commandline -opc)[1] --no-ask-password list --json 2>/dev/null)
        or return 0
        string match -rag -- '"mount-point" *: *"((?:[^"\\\\]|\\\\.)*)"' $json |
                string replace -a -- '\\"' '"' | string replace -a -- '\\\\' '\\'
end

# The names in /dev/disk/$argv[1] (by-label, by-uuid), with udev's \xNN escapes undone.
function __usermount_disk_names
        set -l dir /dev/disk
        set -q USERMOUNT_DISK_DIR; and set dir $USERMOUNT_DISK_DIR
        for f in $dir/$argv[1]/*
                printf '%b\n' (string replace -r '.*/' '' -- $f)
        end
end

# The PIDs for --container: processes of yours in another user namespace than this shell's,
# as a rootless container's are (as in usermount.bash).
function __usermount_container_pids
        set -l own (readlink /proc/$fish_pid/ns/user 2>/dev/null); or return 0
        find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/user' -uid (id -u) \
                ! -lname $own -printf '%h\n' 2>/dev/null | string replace -r '^/proc/(\d+)/ns$' '$1'
end

set -l fstypes ext2 ext3 ext4 xfs btrfs squashfs erofs vfat exfat ntfs3 iso9660 udf
set -l start 'not __usermount_position'
set -l mount '__usermount_is mount'
set -l unmount '__usermount_is unmount'

# Before the command: the commands and the global options.
complete -c usermount -n $start -f
complete -c usermount -n $start -a mount -d 'Mount a block device or image file'
complete -c usermount -n $start -a unmount -d 'Unmount a filesystem that usermountd mounted'
complete -c usermount -n $start -a list -d 'List the mounts usermountd keeps track of'
complete -c usermount -n $start -a monitor -d 'Print mounts and unmounts as they happen'
complete -c usermount -n $start -a probe -d 'Show the partition table of an image or device'
complete -c usermount -n $start -a automount -d 'Mount filesystems as their devices appear'
complete -c usermount -n $start -s h -l help -d 'Show help'
complete -c usermount -n $start -l version -d 'Show the version of usermount'
complete -c usermount -n $start -l no-ask-password -d 'Do not ask for a password'

# mount [OPTIONS] SOURCE [TARGET]: SOURCE any file (an image or a block device), TARGET a
# directory.
complete -c usermount -n $mount -s t -l type -x -a "$fstypes" -d 'Filesystem type'
complete -c usermount -n $mount -s o -l options -x -d 'Comma-separated filesystem options'
complete -c usermount -n $mount -s r -l read-only -d 'Mount read-only'
complete -c usermount -n $mount -l exec -d 'Allow running programs from the mount'
complete -c usermount -n $mount -l idmap -x -a 'none user namespace' -d 'How file owners appear'
complete -c usermount -n $mount -l userns -r -F -d 'Map ids as this user namespace file does'
complete -c usermount -n '__usermount_is mount unmount' -l container -x \
        -a '(__usermount_container_pids)' -d 'PID of a process in the container'
# A number, or how to name one; the names are the image's own.
complete -c usermount -n $mount -l partition -x -a 'label: uuid: type:' -d 'Partition to mount'
complete -c usermount -n $mount -l driver -x -a 'kernel userspace' -d 'Driver of the filesystem'
complete -c usermount -n '__usermount_operand mount 1' -f -a '(__fish_complete_directories)'
complete -c usermount -n '__usermount_operand mount 2+' -f

# unmount [OPTIONS] MOUNTPOINT|DEVICE|IMAGE: the mount points usermountd keeps, and any file.
complete -c usermount -n $unmount -s f -l force -d 'Detach the mount even if it is busy'
complete -c usermount -n $unmount -s A -l all-targets -d 'Unmount all places it is mounted'
complete -c usermount -n '__usermount_operand unmount 0' -a '(__usermount_mount_points)' \
        -d 'Mount point'
complete -c usermount -n '__usermount_operand unmount 1+' -f

complete -c usermount -n '__usermount_is mount unmount' -l no-ask-password \
        -d 'Do not ask for a password'

# list, monitor: no operand. probe [--json] IMAGE|DEVICE: any file.
complete -c usermount -n '__usermount_is list monitor' -f
complete -c usermount -n '__usermount_is list monitor probe' -l json -d 'Print JSON'
complete -c usermount -n '__usermount_operand probe 1+' -f

# automount [OPTIONS]: no operand.
set -l automount '__usermount_is automount'
complete -c usermount -n $automount -f
complete -c usermount -n $automount -l once -d 'Mount what is there now and exit'
complete -c usermount -n $automount -s r -l read-only -d 'Mount read-only'
complete -c usermount -n $automount -l idmap -x -a 'none user' -d 'How file owners appear'
complete -c usermount -n $automount -l ignore-label -x -a '(__usermount_disk_names by-label)' \
        -d 'Leave filesystems with this label alone'
complete -c usermount -n $automount -l ignore-uuid -x -a '(__usermount_disk_names by-uuid)' \
        -d 'Leave the filesystem with this UUID alone'
complete -c usermount -n $automount -l ignore-fstype -x -a "$fstypes" \
        -d 'Leave filesystems of this type alone'
complete -c usermount -n $automount -l no-notify -d 'No desktop notifications'
complete -c usermount -n $automount -l config -r -F -d 'Read the settings from this file'
complete -c usermount -n $automount -l no-ask-password -d 'Accepted; automount never asks'

complete -c usermount -n __usermount_position -s h -l help -d 'Show help'
