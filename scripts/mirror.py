"""Mirrors a snapshot (scripts/snapshot.sh) into a folder kept between GPU calls of one lease, copying
only the files whose bytes changed: a snapshot's files all carry the commit's time, so building in the
snapshot itself rebuilds everything, while a build in the mirror is incremental. Files gone from the
snapshot are removed; the mirror's build-gpu/ is left alone.

    python3 scripts/mirror.py SNAPSHOT MIRROR     (then: cd MIRROR && scripts/gpu-check.sh ...)
"""
import filecmp
import os
import shutil
import sys

KEPT = "build-gpu"


def mirror(src, dst):
    changed, present = 0, set()
    for root, _, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for name in files:
            path = os.path.normpath(os.path.join(rel, name))
            present.add(path)
            source, target = os.path.join(src, path), os.path.join(dst, path)
            if not os.path.exists(target) or not filecmp.cmp(source, target, shallow=False):
                shutil.copy2(source, target)
                os.utime(target)  # newer than anything built from the old bytes
                changed += 1
    for root, _, files in os.walk(dst):
        rel = os.path.relpath(root, dst)
        if rel.split(os.sep)[0] == KEPT:
            continue
        for name in files:
            if os.path.normpath(os.path.join(rel, name)) not in present:
                os.remove(os.path.join(root, name))
    return changed


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(f"mirror: {mirror(sys.argv[1], sys.argv[2])} files changed")
