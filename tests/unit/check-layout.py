#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
The house shows its programs (docs/architecture.md, "Where the code lives"): checks, as TAP,
that the folders say which process runs a file and that the daemon's files include each
other without a cycle.

  check-layout.py SRCDIR NM USERMOUNTD WORKER DAEMON_LIB WORKER_LIB DRIVER_LIB

1. usermountd holds no function of worker/ or driver/, and usermount-worker none of daemon/.
2. No file of daemon/, worker/, driver/ or shared/ includes a header of another process's
   folder (shared/ includes only shared/ and include/), and no header is named like a
   system header (the folders come first on every include path).
3. The daemon's files include each other without a cycle (a file and its header are one
   node); the same for the worker's.
4. Every source file opens with a comment that says what it is.
"""
import os
import re
import subprocess
import sys

FOLDERS = ('daemon', 'worker', 'driver', 'shared')
# Which folders' headers a folder may include.
MAY_INCLUDE = {
    'daemon': {'daemon', 'shared'},
    'worker': {'worker', 'driver', 'shared'},
    'driver': {'driver', 'shared'},
    'shared': {'shared'},
}

results = []


def result(ok, name, detail=''):
    results.append((ok, name, detail))


def nm_defined(nm, path):
    """{object: set of global text symbols} of an archive, or {path: set} of a binary."""
    out = subprocess.run([nm, '--defined-only', '-A', path], capture_output=True, text=True,
                         check=True).stdout
    objs = {}
    for line in out.splitlines():
        m = re.match(r'^(.*?):\s*[0-9a-f]+ ([TtDdBbRr]) (\S+)$', line)
        if not m:
            continue
        where, kind, sym = m.groups()
        if kind != 'T':
            continue
        objs.setdefault(where.split(':')[-1], set()).add(sym)
    return objs


def nm_undefined(nm, path):
    out = subprocess.run([nm, '--undefined-only', '-A', path], capture_output=True,
                         text=True, check=True).stdout
    objs = {}
    for line in out.splitlines():
        m = re.match(r'^(.*?):\s+U (\S+)$', line)
        if m:
            objs.setdefault(m.group(1).split(':')[-1], set()).add(m.group(2))
    return objs


def symbols(objs):
    return set().union(*objs.values()) if objs else set()


def check_binaries(nm, usermountd, worker, daemon_lib, worker_lib, driver_lib):
    in_daemon = symbols(nm_defined(nm, usermountd))
    in_worker = symbols(nm_defined(nm, worker))
    worker_only = symbols(nm_defined(nm, worker_lib)) | symbols(nm_defined(nm, driver_lib))
    daemon_only = symbols(nm_defined(nm, daemon_lib))

    leaked = sorted(in_daemon & worker_only)
    result(not leaked, 'usermountd holds no function of worker/ or driver/',
           ', '.join(leaked))
    leaked = sorted(in_worker & daemon_only)
    result(not leaked, 'usermount-worker holds no function of daemon/', ', '.join(leaked))


def includes(path):
    with open(path, encoding='utf-8') as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)


def check_sources(src):
    headers = {}
    for folder in FOLDERS + ('include',):
        for name in os.listdir(os.path.join(src, folder)):
            if name.endswith('.h'):
                headers.setdefault(name, folder)
    crossing = []
    for folder in FOLDERS:
        for name in sorted(os.listdir(os.path.join(src, folder))):
            if not name.endswith(('.c', '.h')):
                continue
            for inc in includes(os.path.join(src, folder, name)):
                owner = headers.get(inc)
                if owner and owner != 'include' and owner not in MAY_INCLUDE[folder]:
                    crossing.append(f'{folder}/{name} includes {owner}/{inc}')
    result(not crossing, 'no file includes a header of another process\'s folder',
           '; '.join(crossing))
    # The folders are on every include path, ahead of the system's: a header named like a
    # system header (limits.h) would be taken for it by every <...> include.
    shadowing = sorted(f'{folder}/{name}' for name, folder in headers.items()
                       if os.path.exists(os.path.join('/usr/include', name)))
    result(not shadowing, 'no header is named like a system header', ', '.join(shadowing))

    for folder in ('daemon', 'worker'):
        graph = {}
        d = os.path.join(src, folder)
        for name in os.listdir(d):
            if not name.endswith(('.c', '.h')):
                continue
            node = name[:-2]
            for inc in includes(os.path.join(d, name)):
                if os.path.exists(os.path.join(d, inc)) and inc[:-2] != node:
                    graph.setdefault(node, set()).add(inc[:-2])
        cycle = find_cycle(graph)
        result(not cycle, f'the files of {folder}/ include each other without a cycle',
               ' -> '.join(cycle))

    bare = []
    for folder in FOLDERS + ('client', 'lib'):
        for name in sorted(os.listdir(os.path.join(src, folder))):
            if name.endswith(('.c', '.h')):
                with open(os.path.join(src, folder, name), encoding='utf-8') as f:
                    head = f.read(400).split('\n')
                if not (len(head) > 1 and head[1].startswith('/*')):
                    bare.append(f'{folder}/{name}')
    result(not bare, 'every source file opens with a comment that says what it is',
           ', '.join(bare))


def find_cycle(graph):
    """One cycle of graph as a list of nodes (first repeated last), or []."""
    WHITE, GREY, BLACK = 0, 1, 2
    color = {}
    stack = []

    def visit(n):
        color[n] = GREY
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            c = color.get(m, WHITE)
            if c == GREY:
                return stack[stack.index(m):] + [m]
            if c == WHITE:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        color[n] = BLACK
        return []

    for n in sorted(graph):
        if color.get(n, WHITE) == WHITE:
            found = visit(n)
            if found:
                return found
    return []


def main():
    if len(sys.argv) != 8:
        sys.exit(__doc__)
    src, nm = sys.argv[1], sys.argv[2]
    check_binaries(nm, *sys.argv[3:8])
    check_sources(src)
    print(f'1..{len(results)}')
    for i, (ok, name, detail) in enumerate(results, 1):
        print(f'{"ok" if ok else "not ok"} {i} {name}')
        if not ok and detail:
            print(f'# {detail}')
    return 0 if all(ok for ok, _, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
