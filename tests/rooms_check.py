#!/usr/bin/env python3
"""The controller's rooms keep their doors one-way (docs/architecture.md, "Rooms of the
controller"): no file of controller/{figures,report,telemetry,live,run,fleet,sweep} includes a
header of controller/ itself or of a room beside or above its own, and no circle of files runs
through their #include lines (a .c and its .h are one file; X_internal.h is X's). Exit 0 ok, 1
with each fault named. Run from the source tree: python3 tests/rooms_check.py"""
import glob
import os
import re
import sys

RANK = {'figures': 0, 'report': 1, 'telemetry': 1, 'live': 1, 'run': 2, 'fleet': 3, 'sweep': 4, 'rig': 5}


def unit(name):
    return re.sub(r'_internal$', '', os.path.splitext(os.path.basename(name))[0])


def main():
    home = {os.path.basename(p): 'core' for p in glob.glob('controller/*.h')}
    for room in RANK:
        home.update({os.path.basename(p): room for p in glob.glob(f'controller/{room}/*.h')})
    faults, edges = [], {}
    for room in RANK:
        for path in sorted(glob.glob(f'controller/{room}/*.[ch]')):
            me = unit(path)
            with open(path) as f:
                includes = re.findall(r'^#include "([^"]+)"', f.read(), re.M)
            for header in includes:
                to = home.get(os.path.basename(header))
                if to is None:
                    continue  # common/, proto/
                if to == 'core' or (to != room and RANK[to] >= RANK[room]):
                    faults.append(f'{path} includes {header} ({to})')
                if unit(header) != me:
                    edges.setdefault(me, set()).add(unit(header))
    for start in sorted(edges):  # a file that reaches itself is on a circle
        seen, todo = set(), list(edges[start])
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(edges.get(node, ()))
        if start in seen:
            faults.append(f'{start} is on a circle of includes')
    for fault in faults:
        print(fault)
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main())
