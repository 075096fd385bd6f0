#!/usr/bin/env python3
"""Packs the built package folder (build/release/python/rltune) into a wheel that pip installs offline:

    python3 python/make_wheel.py --package build/release/python/rltune --version 0.1.0 --out build/release/dist
    python3 -m pip install --no-index build/release/dist/rltune-0.1.0-*.whl

CMake runs it as the target `python_wheel`. The wheel is for this interpreter and platform only (it
holds the native module built for them).
"""

import argparse
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--package", required=True, help="the built package folder (holds __init__.py and _core*.so)")
    p.add_argument("--version", required=True)
    p.add_argument("--out", required=True, help="folder for the wheel")
    a = p.parse_args()

    files = sorted(f for f in os.listdir(a.package) if f.endswith(".py") or f.endswith(".so"))
    if "__init__.py" not in files or not any(f.startswith("_core") and f.endswith(".so") for f in files):
        sys.exit(f"make_wheel: {a.package} has no built module (__init__.py and _core*.so); build it first")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"{python}-{python}-{platform}"
    info = f"rltune-{a.version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: rltune\nVersion: {a.version}\n"
                "Summary: Learned and heuristic scheduling of deep-learning jobs on GPU clusters: environment, simulation, traces\n"
                "Requires-Python: =={}.{}.*\nRequires-Dist: numpy\n".format(*sys.version_info[:2]))
    wheel = f"Wheel-Version: 1.0\nGenerator: rltune make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"rltune-{a.version}-{tag}.whl")
    tmp = path + ".tmp"
    records = []
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for f in files:
            with open(os.path.join(a.package, f), "rb") as src:
                data = src.read()
            z.writestr(f"rltune/{f}", data)
            records.append(record_line(f"rltune/{f}", data))
        for name, text in ((f"{info}/METADATA", metadata), (f"{info}/WHEEL", wheel)):
            z.writestr(name, text)
            records.append(record_line(name, text.encode()))
        records.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    os.replace(tmp, path)  # never a half-written wheel under the final name
    print(path)


if __name__ == "__main__":
    main()
