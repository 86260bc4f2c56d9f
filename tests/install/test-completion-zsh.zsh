#!/usr/bin/zsh -f
# SPDX-License-Identifier: LGPL-2.1-or-later
# Loads completion/_usermount through compinit in a zsh and checks what it offers for a few
# command lines, as test-completion.sh does for bash. TAP.
# $1: the completion file. Needs no daemon: a stand-in usermount prints the JSON of
# "usermount list --json". Needs no terminal and no stdin.
#
# How: completion functions only run inside ZLE, the line editor, which runs only in an
# interactive shell on a terminal. So this script starts one ("zsh -i") on a pseudo-terminal
# of its own (the zsh/zpty module), whose startup file loads _usermount from fpath with
# compinit, and types each command line followed by ^T, bound to a completion widget. In
# that shell a function named compadd stands in for the builtin in every completion
# function (as fzf-tab's does): it asks the builtin which of the words it was given match
# the line (compadd -O), records them with the suffix they get (-S, so "--driver" with
# its "=" reads "--driver="), then adds them as the builtin would. After completion, a
# comppostfuncs hook prints the sorted, de-duplicated matches between markers and stops
# zsh from inserting or listing anything; ^U then clears the line. This script reads the
# pseudo-terminal up to the end marker, which is a wait for a condition, not a sleep.
# Matches are words as zsh sees them: a file is its name, without the directory typed.

zmodload zsh/zpty || { print "Bail out! no zsh/zpty module"; exit 1 }
setopt no_unset

completion=${1:A}
tmp=$(mktemp -d)
trap 'zpty -d compl 2>/dev/null; rm -rf -- $tmp' EXIT
n=0
failed=0

# The stand-in usermount; its mount points are under $tmp/media and $tmp/home, which do not
# exist, so that the files zsh also offers there cannot mix with them.
mkdir $tmp/bin $tmp/compl $tmp/files $tmp/files/dir1 $tmp/files/dir2
: > $tmp/files/disk.img
# A /dev/disk of the test's own, named as udev names its links.
mkdir -p $tmp/disk/by-label $tmp/disk/by-uuid
ln -s ../../sdb1 $tmp/disk/by-label/STICK
ln -s ../../sdc1 $tmp/disk/by-label/'My\x20Photos'
ln -s ../../sdb1 $tmp/disk/by-uuid/1234-ABCD
cp -- $completion $tmp/compl/_usermount
cat > $tmp/bin/usermount <<STANDIN
#!/bin/sh
[ "\$*" = "--no-ask-password list --json" ] || exit 1
printf '[ { "mount-point": "$tmp/media/alice/STICK", "device": "/dev/sdb1" },\n'
printf '  { "mount-point": "$tmp/media/alice/with \\\\"quote\\\\"", "fstype": "ext4" },\n'
printf '  { "mount-point": "$tmp/home/disk", "owner-uid": 1000 } ]\n'
STANDIN
chmod +x $tmp/bin/usermount

# The startup files of the shell on the pseudo-terminal, in a ZDOTDIR of its own: nothing is
# typed before its line editor runs (what a pseudo-terminal receives before its shell is
# ready can be lost). .zshenv turns off the system's zprofile, zshrc and zlogin.
mkdir $tmp/zdotdir
print -r -- 'setopt no_global_rcs' > $tmp/zdotdir/.zshenv
cat > $tmp/zdotdir/.zshrc <<'SETUP'
PS1='' PS2='' RPS1='' PROMPT_EOL_MARK=''
unset zle_bracketed_paste
bindkey -e
fpath=($TEST_COMPLETION_DIR $fpath)
autoload -Uz compinit && compinit -u -D
typeset -ga test_matches
compadd() {
        local -a computing suffix hits ignored
        local s
        # Every option of compadd that takes a value, so that a value is never read as an
        # option; -O, -A and -D only compute (the caller filters words): passed on as they are.
        zparseopts -E -a ignored O:=computing A:=computing D:=computing S:=suffix \
                P: p: s: i: I: W: d: J: V: X: x: r: R: M+: E: F: o:: a k l 1 2 q Q f e n U C
        if (( $#computing )); then
                builtin compadd "$@"
                return
        fi
        (( $#suffix )) && s=${suffix[-1]}
        builtin compadd -O hits "$@"
        test_matches+=(${^hits}$s)
        builtin compadd "$@"
}
test-report() {
        compstate[insert]='' compstate[list]=''
        print -r -- "<MATCHES>${(j:|:)${(@ou)test_matches}}</MATCHES>"
}
test-complete() {
        test_matches=()
        comppostfuncs=(test-report)
        _main_complete
}
zle -C test-complete complete-word test-complete
bindkey '^T' test-complete
# The line editor is reading: from now on, what is typed reaches it.
zle-line-init() {
        print -r -- '<READY>'
        zle -D zle-line-init
}
zle -N zle-line-init
SETUP

export LC_ALL=C HOME=$tmp PATH=$tmp/bin:$PATH ZDOTDIR=$tmp/zdotdir TEST_COMPLETION_DIR=$tmp/compl
export USERMOUNT_DISK_DIR=$tmp/disk
# The same zsh as this script's.
if ! zpty compl "${(q)${:-/proc/$$/exe}:A} -i" || ! zpty -r -m compl out '*<READY>*'; then
        print "Bail out! cannot start zsh on a pseudo-terminal"
        exit 1
fi

# check NAME EXPECTED LINE: completes at the end of LINE and compares the matches, sorted and
# joined by '|', with EXPECTED.
check() {
        local name=$1 expected=$2 line=$3 out got
        zpty -w -n compl "$line"$'\C-t\C-u'
        zpty -r -m compl out '*</MATCHES>*'
        got=${${out##*<MATCHES>}%%</MATCHES>*}
        n=$((n + 1))
        if [[ $got == $expected ]]; then
                print -r -- "ok $n - $name"
        else
                print -r -- "not ok $n - $name"
                print -r -- "# expected: $expected"
                print -r -- "# got:      $got"
                failed=1
        fi
}

check "commands" "automount|list|monitor|mount|probe|unmount" "usermount "
check "command prefix" "monitor|mount" "usermount mo"
check "global options" "--help|--no-ask-password|--version" "usermount --"
check "command after a global option" "unmount" "usermount --no-ask-password u"
mount_options="--container=|--driver=|--exec|--help|--idmap=|--no-ask-password|--options=|--partition="
mount_options+="|--read-only|--type=|--userns="
check "mount options" $mount_options "usermount mount --"
check "mount option prefix" "--driver=" "usermount mount --dri"
check "driver values" "kernel|userspace" "usermount mount --driver="
check "driver value prefix" "kernel" "usermount mount --driver=k"
check "driver value in the next word" "kernel|userspace" "usermount mount --driver "
check "idmap values" "namespace|none|user" "usermount mount --idmap="
check "idmap value prefix" "namespace|none" "usermount mount --idmap=n"
check "fstype after -t" "erofs|exfat|ext2|ext3|ext4" "usermount mount -t e"
check "fstype after stacked -rt" "erofs|exfat|ext2|ext3|ext4" "usermount mount -rt e"
check "fstype in --type=" "xfs" "usermount mount --type=x"
check "no values for -o" "" "usermount mount -o "
check "partition kinds" "label:|type:|uuid:" "usermount mount --partition="
check "userns is a file" "disk.img" "usermount mount --userns=$tmp/files/disk"
check "userns is not an operand" "dir1|dir2" \
        "usermount mount --userns $tmp/files/disk.img $tmp/files/disk.img $tmp/files/"
check "partition is not an operand" "dir1|dir2" \
        "usermount mount --partition 2 $tmp/files/disk.img $tmp/files/"
check "source is any file" "dir1|dir2|disk.img" "usermount mount $tmp/files/"
check "target is a directory" "dir1|dir2" "usermount mount -r $tmp/files/disk.img $tmp/files/"
# With no operand left to complete, zsh's _arguments offers the options instead.
check "no third operand" "$mount_options|-h|-o|-r|-t" "usermount mount a b "
check "unmount options" "--all-targets|--container=|--force|--help|--no-ask-password" "usermount unmount --"
# --container: the PIDs of processes of ours in another user namespace, such as this one.
unshare --user sleep 60 &
container=$!
while [[ $(readlink /proc/$container/ns/user) == $(readlink /proc/$$/ns/user) ]]; do sleep 0.05; done
check "container PIDs" "$container" "usermount mount --container=$container"
kill $container
check "unmount offers usermountd's mount points" \
        "$tmp/media/alice/STICK|$tmp/media/alice/with \"quote\"" "usermount unmount $tmp/media/"
check "unmount offers files" "disk.img" "usermount unmount --force $tmp/files/disk"
check "unmount offers another mount point" "$tmp/home/disk" "usermount unmount $tmp/home/d"
check "list options" "--help|--json|-h" "usermount list -"
check "monitor options" "--help|--json" "usermount monitor --"
check "probe options" "--help|--json" "usermount probe --"
check "probe takes a file" "disk.img" "usermount probe --json $tmp/files/disk"
check "probe takes one" "--help|--json|-h" "usermount probe $tmp/files/disk.img "
automount_options="--config=|--help|--idmap=|--ignore-fstype=|--ignore-label=|--ignore-uuid="
automount_options+="|--no-ask-password|--no-notify|--once|--read-only"
check "automount options" $automount_options "usermount automount --"
check "automount idmap values" "none|user" "usermount automount --idmap="
check "automount ignores a type" "erofs|exfat|ext2|ext3|ext4" "usermount automount --ignore-fstype=e"
check "automount ignores a label of /dev/disk/by-label" "My Photos|STICK" \
        "usermount automount --ignore-label="
check "automount ignores a UUID of /dev/disk/by-uuid" "1234-ABCD" \
        "usermount automount --once --ignore-uuid=1"
check "automount's --config is a file" "disk.img" "usermount automount --config=$tmp/files/disk"

print "1..$n"
exit $failed
