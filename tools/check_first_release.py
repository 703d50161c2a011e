"""Which torch releases on PyPI have the Python backend API: rerun the check behind the docs' "first shipped in 2.10.0".

    python tools/check_first_release.py 2.9.0 2.9.1 2.10.0

For each version, pip downloads the wheel (the Linux aarch64 one, about
100 MB: PyPI's x86_64 wheels are CUDA builds of several hundred MB; the
Python sources and the ``torch._C._acc`` bindings are the same on every
platform) into ``_build/wheels`` and looks inside it, without installing it,
for the two halves of the API: the Python function
``_setup_privateuseone_for_python_backend`` in
``torch/utils/backend_registration.py``, and the ``torch._C._acc`` functions
compiled into ``libtorch_python.so``. It prints one line per version,
writes them to ``source/first_release.txt`` (the Compatibility page shows
that file, and ``tests/docs/test_api_names.py`` checks the docs' claim against
it), and exits non-zero when a version has one half without the other.
"""

import datetime
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ROOT / "_build" / "wheels"
RECORD = ROOT / "source" / "first_release.txt"
PLATFORM = "manylinux_2_28_aarch64"
PYTHON_SIDE = ("torch/utils/backend_registration.py", b"def _setup_privateuseone_for_python_backend")
CPP_SIDE = ("torch/lib/libtorch_python.so", b"register_python_privateuseone_device_guard")


def wheel_of(version):
    WHEELS.mkdir(parents=True, exist_ok=True)
    found = sorted(WHEELS.glob(f"torch-{version}-*{PLATFORM}.whl"))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--platform",
                PLATFORM,
                "--python-version",
                "3.11",
                "--dest",
                str(WHEELS),
                f"torch=={version}",
            ],
            check=True,
        )
        found = sorted(WHEELS.glob(f"torch-{version}-*{PLATFORM}.whl"))
    return found[0]


def contains(wheel, member, needle):
    with zipfile.ZipFile(wheel) as archive:
        return member in archive.namelist() and needle in archive.read(member)


def main(versions):
    lines = [f"$ python tools/check_first_release.py {' '.join(versions)}  # on {datetime.date.today()}"]
    consistent = True
    for version in versions:
        wheel = wheel_of(version)
        python_side, cpp_side = (contains(wheel, member, needle) for member, needle in (PYTHON_SIDE, CPP_SIDE))
        consistent &= python_side == cpp_side
        lines.append(
            f"torch {version} ({wheel.name}): _setup_privateuseone_for_python_backend {python_side},"
            f" torch._C._acc {cpp_side}"
        )
    print("\n".join(lines[1:]))
    RECORD.write_text("\n".join(lines) + "\n")
    return 0 if consistent else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["2.9.0", "2.9.1", "2.10.0"]))
