"""The C++ twin of :mod:`minimal.python_backend`: ``import minimal.cpp_backend`` builds
``cpp_backend.cpp`` (once; the build is cached under ``_build/``), loads it, and the
``twin`` device exists.

A process has one PrivateUse1 backend: import this where no other backend was set up.
"""

import os
from pathlib import Path

import torch
import torch.utils.cpp_extension

DEVICE_NAME = "twin"
SOURCE = Path(__file__).with_name("cpp_backend.cpp")
BUILD_DIRECTORY = Path(os.environ.get("MINIMAL_TWIN_BUILD_DIR", SOURCE.parents[1] / "_build" / "cpp_backend"))


class DeviceModule:
    """The device module: what PyTorch's Python side looks up on ``torch`` under the device's name."""

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():  # the C++ side's answer (torch.accelerator.device_count() asks this module)
        return extension.device_count()

    @staticmethod
    def current_device():
        return extension.current_device()

    @staticmethod
    def _is_in_bad_fork():
        return False

    @staticmethod
    def manual_seed_all(seed):  # torch.manual_seed calls it; the twin has no generator
        pass


def load():
    BUILD_DIRECTORY.mkdir(parents=True, exist_ok=True)
    return torch.utils.cpp_extension.load(
        name="minimal_cpp_backend", sources=[str(SOURCE)], build_directory=str(BUILD_DIRECTORY), extra_cflags=["-O2"]
    )


extension = load()  # its static initializers name PrivateUse1 "twin" and register the kernels
if not hasattr(torch, DEVICE_NAME):
    torch.utils.generate_methods_for_privateuse1_backend()
    torch._register_device_module(DEVICE_NAME, DeviceModule)
