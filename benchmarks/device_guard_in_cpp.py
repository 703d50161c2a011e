"""Builds and loads ``device_guard_in_cpp.cpp`` for the ``guard`` group's ``--guard-in-cpp`` process.

Its own module, without ``backend_pkg``: it must load before ``import backend_pkg`` registers npy's
Python guard.
"""

from pathlib import Path

import torch.utils.cpp_extension

SOURCE = Path(__file__).with_name("device_guard_in_cpp.cpp")
BUILD_DIRECTORY = Path(__file__).resolve().parents[1] / "_build" / "device_guard_in_cpp"


def load_guard_in_cpp():
    """Build ``device_guard_in_cpp.cpp`` (once; cached under ``_build/``) and load it: its guard
    takes PrivateUse1's slot, so ``import backend_pkg`` after it leaves npy's Python guard out."""
    BUILD_DIRECTORY.mkdir(parents=True, exist_ok=True)
    torch.utils.cpp_extension.load(
        name="npy_device_guard_in_cpp",
        sources=[str(SOURCE)],
        build_directory=str(BUILD_DIRECTORY),
        extra_cflags=["-O2"],
    )
