#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Loads completion/usermount.fish the way fish does (from fish_complete_path, when the
# command is completed) and checks what "complete -C" offers for a few command lines, as
# test-completion.sh does for bash. TAP.
# $1: the completion file; FISH: the fish to run (default: fish from PATH). Needs no daemon:
# a stand-in usermount prints the JSON of "usermount list --json"; it is also what makes fish
# load the file, as fish loads the completion of a command only if the command exists. Needs
# no terminal and no stdin.
set -u

completion=$(realpath -- "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# The stand-in's mount points are under $tmp/media and $tmp/home, which do not exist, so that
# the files fish also offers there cannot mix with them.
mkdir "$tmp/bin" "$tmp/compl" "$tmp/files" "$tmp/files/dir1" "$tmp/files/dir2" "$tmp/home"
: > "$tmp/files/disk.img"
# A /dev/disk of the test's own, named as udev names its links.
mkdir -p "$tmp/disk/by-label" "$tmp/disk/by-uuid"
ln -s ../../sdb1 "$tmp/disk/by-label/STICK"
ln -s ../../sdc1 "$tmp/disk/by-label/My\\x20Photos"
ln -s ../../sdb1 "$tmp/disk/by-uuid/1234-ABCD"
export USERMOUNT_DISK_DIR=$tmp/disk
cp -- "$completion" "$tmp/compl/usermount.fish"
cat > "$tmp/bin/usermount" <<STANDIN
#!/bin/sh
[ "\$*" = "--no-ask-password list --json" ] || exit 1
printf '[ { "mount-point": "$tmp/media/alice/STICK", "device": "/dev/sdb1" },\n'
printf '  { "mount-point": "$tmp/media/alice/with \\\\"quote\\\\"", "fstype": "ext4" },\n'
printf '  { "mount-point": "$tmp/mnt/disk", "owner-uid": 1000 } ]\n'
STANDIN
chmod +x "$tmp/bin/usermount"

# check NAME EXPECTED LINE: completes at the end of LINE and compares the candidates (without
# their descriptions), sorted and joined by '|', with EXPECTED. fish runs without any
# configuration, in a home of its own, with only its own functions and this completion.
check() {
        local name=$1 expected=$2 line=$3 got
        # shellcheck disable=SC2016 # $argv and $__fish_data_dir are fish's.
        got=$(cd "$tmp" && HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home" XDG_DATA_HOME="$tmp/home" \
                PATH="$tmp/bin:$PATH" LC_ALL=C "${FISH:-fish}" --no-config -c '
                        set -g fish_function_path $__fish_data_dir/functions
                        set -g fish_complete_path $argv[1]
                        complete -C $argv[2]' "$tmp/compl" "$line" </dev/null |
                cut -f1 | LC_ALL=C sort | paste -sd '|')
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

f=$tmp/files
check "commands" "automount|list|monitor|mount|probe|unmount" "usermount "
check "command prefix" "monitor|mount" "usermount mo"
check "global options" "--help|--no-ask-password|--version" "usermount --"
check "command after a global option" "unmount" "usermount --no-ask-password u"
mount_options="--container|--driver|--exec|--help|--idmap|--no-ask-password|--options|--partition"
mount_options+="|--read-only|--type|--userns"
check "mount options" "$mount_options" "usermount mount --"
check "mount options after -" "$mount_options|-h|-o|-r|-t" "usermount mount -"
check "mount option prefix" "--driver" "usermount mount --dri"
check "driver values" "--driver=kernel|--driver=userspace" "usermount mount --driver="
check "driver value in the next word" "kernel" "usermount mount --driver k"
check "idmap values" "--idmap=namespace|--idmap=none|--idmap=user" "usermount mount --idmap="
check "idmap value prefix" "--idmap=namespace|--idmap=none" "usermount mount --idmap=n"
check "fstype after -t" "erofs|exfat|ext2|ext3|ext4" "usermount mount -t e"
check "fstype after --type" "squashfs" "usermount mount --type sq"
check "fstype in --type=" "--type=xfs" "usermount mount --type=x"
check "no values for -o" "" "usermount mount -o "
check "partition kinds" "--partition=label:|--partition=type:|--partition=uuid:" \
        "usermount mount --partition="
check "userns is a file" "--userns=$f/disk.img" "usermount mount --userns=$f/disk"
check "userns is not an operand" "$f/dir1/|$f/dir2/" \
        "usermount mount --userns $f/disk.img $f/disk.img $f/"
check "partition is not an operand" "$f/dir1/|$f/dir2/" \
        "usermount mount --partition 2 $f/disk.img $f/"
check "source is any file" "$f/dir1/|$f/dir2/|$f/disk.img" "usermount mount $f/"
check "target is a directory" "$f/dir1/|$f/dir2/" "usermount mount -r $f/disk.img $f/"
check "no third operand" "" "usermount mount a b "
check "unmount options" "--all-targets|--container|--force|--help|--no-ask-password" "usermount unmount --"
# --container: the PIDs of processes of ours in another user namespace, such as this one.
unshare --user sleep 60 &
container=$!
while [ "$(readlink /proc/$container/ns/user)" = "$(readlink /proc/$$/ns/user)" ]; do sleep 0.05; done
check "container PIDs" "--container=$container" "usermount mount --container=$container"
kill $container
check "unmount offers usermountd's mount points" \
        "$tmp/media/alice/STICK|$tmp/media/alice/with \"quote\"" "usermount unmount $tmp/media/"
check "unmount offers files" "$f/disk.img" "usermount unmount --force $f/disk"
check "unmount offers another mount point" "$tmp/mnt/disk" "usermount unmount $tmp/mnt/d"
check "unmount takes one" "" "usermount unmount $f/disk.img "
check "list options" "--help|--json|-h" "usermount list -"
check "no operand for list" "" "usermount list "
check "monitor options" "--help|--json" "usermount monitor --"
check "probe options" "--help|--json" "usermount probe --"
check "probe takes a file" "$f/disk.img" "usermount probe --json $f/disk"
check "probe takes one" "" "usermount probe $f/disk.img "
automount_options="--config|--help|--idmap|--ignore-fstype|--ignore-label|--ignore-uuid"
automount_options+="|--no-ask-password|--no-notify|--once|--read-only"
check "automount options" "$automount_options" "usermount automount --"
check "automount idmap values" "--idmap=none|--idmap=user" "usermount automount --idmap="
check "automount ignores a type" "erofs|exfat|ext2|ext3|ext4" "usermount automount --ignore-fstype e"
check "automount ignores a label of /dev/disk/by-label" \
        "--ignore-label=My Photos|--ignore-label=STICK" "usermount automount --ignore-label="
check "automount ignores a UUID of /dev/disk/by-uuid" "1234-ABCD" \
        "usermount automount --once --ignore-uuid 1"
check "automount's --config is a file" "--config=$f/disk.img" "usermount automount --config=$f/disk"
check "no operand for automount" "" "usermount automount "

echo "1..$n"
exit $failed
