#!/usr/bin/env python3
"""No circle of files calls through the product's libraries: for every file of the libraries
built in BUILD (libstampede_*.a: common, net, proto's own files, mock, worker, each room of the
controller, cli), an arrow runs from a file to each file whose functions or data it uses (nm: its
undefined symbols against the others' defined ones). A file that reaches itself through those
arrows is on a circle, and each circle is printed with the names that tie it. Exit 0 when there is
none, 1 otherwise. Usage: python3 tests/circles_check.py BUILD (every libstampede_*.a in the
CMake build directory), or LIB.a... (ctest `circles_check` names the libraries the build makes
now, so a stale archive of a renamed library is never read)."""
import glob
import os
import re
import subprocess
import sys


def members(libs):
    """{LIBRARY/member.c: (defined, used)} of every member of the libraries' archives (the
    archives hold exactly what each library is built from now; stale objects are not read)."""
    out = {}
    for lib in libs:
        tag = os.path.basename(lib)[len('libstampede_'):-len('.a')]
        text = subprocess.run(['nm', lib], capture_output=True, text=True, check=True).stdout
        member = None
        for line in text.splitlines():
            m = re.match(r'^(\S+)\.o:$', line)
            if m:
                member = f'{tag}/{m.group(1)}'
                if member.endswith('pb-c.c') or member.endswith('_empty.c'):
                    member = None  # generated messages; a room with no sources yet
                else:
                    out[member] = (set(), set())
                continue
            parts = line.split()
            if member is None:
                continue
            if len(parts) == 2 and parts[0] == 'U':
                out[member][1].add(parts[1])
            elif len(parts) == 3 and parts[1] in 'TDBR':
                out[member][0].add(parts[2])
    return out


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    libs = sys.argv[1:]
    if len(libs) == 1 and os.path.isdir(libs[0]):
        libs = sorted(glob.glob(os.path.join(libs[0], 'libstampede_*.a')))
    found = members(libs)
    if not found:
        print(f'no library archives in {" ".join(sys.argv[1:])}: build first')
        return 2
    owner, uses = {}, {}
    for f, (defined, used) in found.items():
        for s in defined:
            owner[s] = f
        uses[f] = used
    edges = {}
    for f, used in uses.items():
        for s in used:
            g = owner.get(s)
            if g and g != f:
                edges.setdefault(f, {}).setdefault(g, []).append(s)
    index, low, stack, on, circles = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(uses):
        if v not in index:
            visit(v)
    for comp in circles:
        print('circle:', ', '.join(comp))
        for f in comp:
            for g, names in sorted(edges.get(f, {}).items()):
                if g in comp:
                    print(f'  {f} -> {g}: {", ".join(sorted(names)[:6])}')
    print(f'{len(circles)} circle(s) among {len(uses)} files')
    return 1 if circles else 0


if __name__ == '__main__':
    sys.exit(main())
