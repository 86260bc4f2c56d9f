#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make-partitioned-image.sh KIND PATH: the partitioned disk images of the kernel and
# integration tests, made with sfdisk, and mkfs.ext4 and mkswap on the partitions' byte
# ranges. Sectors are 512 bytes.
#
#   gpt      24 MiB GPT: 1 esp, empty ("EFI System"); 2 linux-generic, ext4 "um-part2"
#            ("data"); 3 swap, swap ("swap"); 4 root-x86-64, ext4 "um-part4" ("root").
#            Two mountable partitions; partition 3's first bytes follow partition 2's last.
#   gpt-one  16 MiB GPT: 1 linux-generic, ext4 "um-only" ("only"); 2 swap, swap.
#   mbr      24 MiB MBR: 1 0x83 ext4 "um-mbr1"; 2 extended; 5 (logical) 0x83 ext4 "um-mbr5".
#   beyond   16 MiB MBR: 1 0x83 ext4 "um-in"; 2 0x83 reaching 16 MiB past the end.
#   oversize 24 MiB GPT: 1 linux, an 8 MiB slot holding an ext4 "um-big" that says it is
#            16 MiB; 2 linux, ext4 "um-next" in the 8 MiB after it.
#   empty    8 MiB GPT without partitions.
#   many     GPT with 129 partitions of 1 MiB (one more than usermount reads).
set -eu

kind=$1
img=$2
S=512

# ext4 START SIZE LABEL: a filesystem on exactly those sectors.
ext4() {
        mkfs.ext4 -q -F -L "$3" -E offset=$(($1 * S)) "$img" $(($2 * S / 1024)) >/dev/null
}

# swap START SIZE: a swap signature on those sectors (mkswap has no offset option).
swap() {
        rm -f "$img.swap"
        truncate -s $(($2 * S)) "$img.swap"
        mkswap -q "$img.swap" >/dev/null
        dd if="$img.swap" of="$img" bs=$S seek="$1" conv=notrunc status=none
        rm -f "$img.swap"
}

rm -f "$img"
case $kind in
gpt)
        truncate -s 24M "$img"
        sfdisk -q "$img" <<END
label: gpt
start=2048, size=8192, type=uefi, name="EFI System"
start=10240, size=16384, type=linux, name="data"
start=26624, size=8192, type=swap, name="swap"
start=34816, size=8192, type=4f68bce3-e8cd-4db1-96e7-fbcaf984b709, name="root"
END
        ext4 10240 16384 um-part2
        swap 26624 8192
        ext4 34816 8192 um-part4
        ;;
oversize)
        truncate -s 24M "$img"
        sfdisk -q "$img" <<END
label: gpt
start=2048, size=16384, type=linux, name="big"
start=18432, size=16384, type=linux, name="next"
END
        ext4 2048 32768 um-big
        ext4 18432 16384 um-next
        ;;
gpt-one)
        truncate -s 16M "$img"
        sfdisk -q "$img" <<END
label: gpt
start=2048, size=16384, type=linux, name="only"
start=18432, size=8192, type=swap, name="swap"
END
        ext4 2048 16384 um-only
        swap 18432 8192
        ;;
mbr)
        truncate -s 24M "$img"
        sfdisk -q "$img" <<END
label: dos
start=2048, size=16384, type=83
start=18432, size=28672, type=5
start=20480, size=16384, type=83
END
        ext4 2048 16384 um-mbr1
        ext4 20480 16384 um-mbr5
        ;;
beyond)
        truncate -s 32M "$img"
        sfdisk -q "$img" <<END
label: dos
start=2048, size=16384, type=83
start=20480, size=40960, type=83
END
        ext4 2048 16384 um-in
        truncate -s 16M "$img"
        ;;
empty)
        truncate -s 8M "$img"
        echo 'label: gpt' | sfdisk -q "$img"
        ;;
many)
        truncate -s 140M "$img"
        {
                echo 'label: gpt'
                echo 'table-length: 256'
                i=0
                while [ $i -lt 129 ]; do
                        echo "start=$((2048 + i * 2048)), size=2048, type=linux"
                        i=$((i + 1))
                done
        } | sfdisk -q "$img"
        ;;
*)
        echo "unknown kind $kind" >&2
        exit 2
        ;;
esac
