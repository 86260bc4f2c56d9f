#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sources completion/usermount.bash in a plain bash and checks what it offers for a few
# command lines (COMP_WORDS/COMP_CWORD, as bash sets them). TAP.
# $1: the completion script. Needs no daemon: a stand-in usermount prints the JSON of
# "usermount list --json".
set -u

script=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# shellcheck source=/dev/null
source "$script" || { echo "Bail out! cannot source $script"; exit 1; }

cat > "$tmp/usermount" <<'STANDIN'
#!/bin/sh
[ "$*" = "--no-ask-password list --json" ] || exit 1
printf '[ { "mount-point": "/run/media/alice/STICK", "device": "/dev/sdb1" },\n'
printf '  { "mount-point": "/run/media/alice/with \\"quote\\"", "fstype": "ext4" },\n'
printf '  { "mount-point": "/home/alice/disk", "owner-uid": 1000 } ]\n'
STANDIN
chmod +x "$tmp/usermount"
mkdir "$tmp/files" "$tmp/files/dir1" "$tmp/files/dir2"
: > "$tmp/files/disk.img"
# A /dev/disk of the test's own, named as udev names its links.
mkdir -p "$tmp/disk/by-label" "$tmp/disk/by-uuid"
ln -s ../../sdb1 "$tmp/disk/by-label/STICK"
ln -s ../../sdc1 "$tmp/disk/by-label/My\\x20Photos"
ln -s ../../sdb1 "$tmp/disk/by-uuid/1234-ABCD"
export USERMOUNT_DISK_DIR=$tmp/disk

# check NAME EXPECTED WORD...: completes the last WORD (COMP_CWORD = last) and
# compares the sorted replies, one per line joined by '|', with EXPECTED.
check() {
        local name=$1 expected=$2 got
        shift 2
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _usermount "$tmp/usermount" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | paste -sd '|')
        n=$((n + 1))
        if [ "$got" = "$expected" ]; then
                echo "ok $n - $name"
        else
                echo "not ok $n - $name"
                echo "# expected: $expected"
                echo "# got:      $got"
                failed=1
        fi
}

check "commands" "automount|list|monitor|mount|probe|unmount" usermount ""
check "command prefix" "monitor|mount" usermount mo
check "global options" "--help|--no-ask-password|--version" usermount --
check "command after a global option" "unmount" usermount --no-ask-password u
check "mount options" "--container=|--driver=|--exec|--help|--idmap=|--no-ask-password|--options=|--partition=|--read-only|--type=|--userns=" usermount mount --
check "unmount options" "--all-targets|--container=|--force|--help|--no-ask-password" usermount unmount --
check "list options" "--help|--json|-h" usermount list -
check "fstype after -t" "erofs|exfat|ext2|ext3|ext4" usermount mount -t e
check "fstype after --type" "squashfs" usermount mount --type sq
check "fstype in --type=" "--type=xfs" usermount mount --type=x
check "fstype after a split '='" "btrfs" usermount mount --type = b
check "fstype right after a split '='" \
        "btrfs|erofs|exfat|ext2|ext3|ext4|iso9660|ntfs3|squashfs|udf|vfat|xfs" \
        usermount mount --type =
check "idmap values" "--idmap=namespace|--idmap=none" usermount mount --idmap=n
check "driver values" "--driver=kernel" usermount mount --driver=k
check "userns is a file" "--userns=$tmp/files/disk.img" usermount mount "--userns=$tmp/files/disk"
check "userns is not an operand" "$tmp/files/dir1|$tmp/files/dir2" \
        usermount mount --userns "$tmp/files/disk.img" "$tmp/files/disk.img" "$tmp/files/"
check "no values for -o" "" usermount mount -o ""
check "partition kinds" "--partition=label:|--partition=type:|--partition=uuid:" usermount mount --partition=
check "partition is not an operand" "$tmp/files/dir1|$tmp/files/dir2" \
        usermount mount --partition 2 "$tmp/files/disk.img" "$tmp/files/"
check "probe options" "--help|--json" usermount probe --
check "probe takes a file" "$tmp/files/disk.img" usermount probe --json "$tmp/files/disk"
check "probe takes one" "" usermount probe "$tmp/files/disk.img" ""
check "source is any file" "$tmp/files/dir1|$tmp/files/dir2|$tmp/files/disk.img" \
        usermount mount "$tmp/files/"
check "target is a directory" "$tmp/files/dir1|$tmp/files/dir2" \
        usermount mount -r "$tmp/files/disk.img" "$tmp/files/"
check "no third operand" "" usermount mount a b ""
check "unmount offers usermountd's mount points" \
        "/run/media/alice/STICK|/run/media/alice/with \"quote\"" \
        usermount unmount /run/media/
check "unmount offers files" "$tmp/files/disk.img" \
        usermount unmount --force "$tmp/files/disk"
check "automount options" "--config=|--help|--idmap=|--ignore-fstype=|--ignore-label=|--ignore-uuid=|--no-ask-password|--no-notify|--once|--read-only" usermount automount --
check "automount idmap values" "--idmap=none|--idmap=user" usermount automount --idmap=
check "automount ignores a type" "erofs|exfat|ext2|ext3|ext4" usermount automount --ignore-fstype e
check "automount ignores a label of /dev/disk/by-label" "--ignore-label=My Photos|--ignore-label=STICK" \
        usermount automount --ignore-label=
check "automount ignores a UUID of /dev/disk/by-uuid" "1234-ABCD" usermount automount --once --ignore-uuid 1
check "automount's --config is a file" "--config=$tmp/files/disk.img" usermount automount "--config=$tmp/files/disk"
check "unmount offers a mount point outside /run/media" "/home/alice/disk" usermount unmount /home/alice/d

# --container: the PIDs of processes of ours in another user namespace, such as this one.
unshare --user sleep 60 &
container=$!
while [ "$(readlink /proc/$container/ns/user)" = "$(readlink /proc/$$/ns/user)" ]; do sleep 0.05; done
check "container PIDs" "--container=$container" usermount mount "--container=$container"
check "container PID after unmount" "$container" usermount unmount --container "$container"
check "no PID of ours outside a container" "" usermount mount "--container=$$"
check "container is not an operand" "" usermount unmount --container "$container" /mn
kill $container

echo "1..$n"
exit $failed
