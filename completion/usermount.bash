# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for usermount(1): commands and options as client/*.c parse them, filesystem
# types, id mappings and the kinds of --partition, files where a path goes, for unmount
# the mount points that "usermount list" shows, and for automount's --ignore-label and
# --ignore-uuid the labels and UUIDs of /dev/disk/by-label and by-uuid (the tests point
# $USERMOUNT_DISK_DIR at a /dev/disk of their own). Needs nothing from the bash-completion package.

_usermount_mount_points() {
        # $1: the usermount being completed. The JSON is read line by line without a parser:
        # each "mount-point" value, with JSON's \" and \\ undone.
        local json line
        json=$(timeout 5 "$1" --no-ask-password list --json 2>/dev/null) || return 0
        while IFS= read -r line; do
                line=${line#*\"mount-point\"*:*\"}
                line=${line%\"*}
                line=${line//\\\"/\"}
                line=${line//\\\\/\\}
                printf '%s\n' "$line"
        done < <(grep -o '"mount-point" *: *"\([^"\\]\|\\.\)*"' <<<"$json")
}

# The names in a /dev/disk/by-* directory ($1), with udev's \xNN escapes undone.
_usermount_disk_names() {
        local f
        for f in "$1"/*; do
                [[ -e $f || -L $f ]] || continue
                printf '%b\n' "${f##*/}"
        done
}

_usermount_container_pids() {
        # The PIDs for --container: processes of yours in another user namespace than this
        # shell's, as a rootless container's are. find reads the links without a fork each.
        local own ns dir
        own=$(readlink /proc/$$/ns/user 2>/dev/null) || return 0
        while read -r ns dir; do
                [[ $ns != "$own" ]] && printf '%s\n' "${dir#/proc/}"
        done < <(find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/user' -uid "$EUID" \
                -printf '%l %h\n' 2>/dev/null | sed 's|/ns$||')
}

_usermount() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
        local verb="" opt="" prefix="" i w n_operands=0
        local -r global_opts="-h --help --version --no-ask-password"
        local -r verbs="mount unmount list monitor probe automount"
        local -r fstypes="ext2 ext3 ext4 xfs btrfs squashfs erofs vfat exfat ntfs3 iso9660 udf"
        local -r idmaps="none user namespace"
        local -r mount_opts="-t --type= -o --options= -r --read-only --exec --idmap= --userns= --container= --partition= --driver= --no-ask-password -h --help"
        local -r partition_kinds="label: uuid: type:"
        local -r drivers="kernel userspace"
        local -r probe_opts="--json -h --help"
        local -r unmount_opts="-f --force -A --all-targets --container= --no-ask-password -h --help"
        local -r list_opts="--json -h --help"
        local -r automount_opts="--once -r --read-only --idmap= --ignore-label= --ignore-uuid= --ignore-fstype= --no-notify --config= --no-ask-password -h --help"
        local -r automount_idmaps="none user"
        COMPREPLY=()

        # The option whose value is being completed: "-t X", "--type X", "--type=X", and
        # "--type" "=" "X" when COMP_WORDBREAKS splits at '='.
        if [[ $cur == "=" ]]; then
                opt=$prev
                cur=""
        elif [[ $prev == "=" ]]; then
                opt=${COMP_WORDS[COMP_CWORD-2]}
        elif [[ $cur == --*=* ]]; then
                opt=${cur%%=*}
                prefix=$opt=
                cur=${cur#*=}
        elif [[ $prev == -t || $prev == --type || $prev == -o || $prev == --options ||
                $prev == --idmap || $prev == --userns || $prev == --partition ||
                $prev == --driver || $prev == --ignore-label || $prev == --ignore-uuid ||
                $prev == --ignore-fstype || $prev == --config || $prev == --container ]]; then
                opt=$prev
        fi

        # The command, and how many operands it has before the current word.
        for ((i = 1; i < COMP_CWORD; i++)); do
                w=${COMP_WORDS[i]}
                if [[ -z $verb ]]; then
                        [[ $w != -* ]] && verb=$w
                        continue
                fi
                case $w in
                -t | --type | -o | --options | --idmap | --userns | --partition | --driver | \
                --ignore-label | --ignore-uuid | --ignore-fstype | --config | --container) ((i++)) ;;
                = | -*) ;;
                *) [[ ${COMP_WORDS[i-1]} != "=" ]] && ((n_operands++)) ;;
                esac
        done

        if [[ -z $verb ]]; then
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "$global_opts" -- "$cur")
                else
                        mapfile -t COMPREPLY < <(compgen -W "$verbs" -- "$cur")
                fi
                return 0
        fi

        case $verb in
        mount | unmount)
                if [[ $opt == --container ]]; then
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$(_usermount_container_pids)" -- "$cur")
                        return 0
                fi
                ;;
        esac

        case $verb in
        mount)
                case $opt in
                -t | --type)
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$fstypes" -- "$cur")
                        return 0 ;;
                --idmap)
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$idmaps" -- "$cur")
                        return 0 ;;
                --driver)
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$drivers" -- "$cur")
                        return 0 ;;
                -o | --options)
                        return 0 ;;
                --partition)
                        # A number, or how to name one; the names are the image's own.
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$partition_kinds" -- "$cur")
                        compopt -o nospace 2>/dev/null
                        return 0 ;;
                --userns)
                        # A user namespace file, e.g. /proc/PID/ns/user.
                        compopt -o filenames 2>/dev/null
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$cur")
                        return 0 ;;
                esac
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "$mount_opts" -- "$cur")
                        [[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
                        return 0
                fi
                compopt -o filenames 2>/dev/null
                if ((n_operands == 0)); then
                        # SOURCE: an image file or a block device.
                        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                elif ((n_operands == 1)); then
                        # TARGET: a directory.
                        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
                fi
                ;;
        unmount)
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "$unmount_opts" -- "$cur")
                        return 0
                fi
                ((n_operands == 0)) || return 0
                # With --container, MOUNTPOINT is a path inside the container: nothing to offer.
                [[ " ${COMP_WORDS[*]} " == *" --container"* ]] && return 0
                compopt -o filenames 2>/dev/null
                # Mount points usermountd keeps, then devices and images (any file).
                local mp
                while IFS= read -r mp; do
                        [[ $mp == "$cur"* ]] && COMPREPLY+=("$mp")
                done < <(_usermount_mount_points "${1:-usermount}")
                mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
                ;;
        list | monitor)
                mapfile -t COMPREPLY < <(compgen -W "$list_opts" -- "$cur")
                ;;
        automount)
                local -a names
                case $opt in
                --idmap)
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$automount_idmaps" -- "$cur")
                        return 0 ;;
                --ignore-fstype)
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$fstypes" -- "$cur")
                        return 0 ;;
                --ignore-label | --ignore-uuid)
                        # What the disks here are called; labels may have spaces.
                        if [[ $opt == --ignore-label ]]; then
                                mapfile -t names < <(_usermount_disk_names "${USERMOUNT_DISK_DIR:-/dev/disk}/by-label")
                        else
                                mapfile -t names < <(_usermount_disk_names "${USERMOUNT_DISK_DIR:-/dev/disk}/by-uuid")
                        fi
                        local name
                        for name in "${names[@]}"; do
                                [[ $name == "$cur"* ]] && COMPREPLY+=("$prefix$name")
                        done
                        return 0 ;;
                --config)
                        compopt -o filenames 2>/dev/null
                        mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$cur")
                        return 0 ;;
                esac
                mapfile -t COMPREPLY < <(compgen -W "$automount_opts" -- "$cur")
                [[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
                ;;
        probe)
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W "$probe_opts" -- "$cur")
                        return 0
                fi
                ((n_operands == 0)) || return 0
                # IMAGE or DEVICE: any file.
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                ;;
        esac
        return 0
}

complete -F _usermount usermount
