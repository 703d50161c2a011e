"""The npy kernels, one module per op family; importing a family fills the registry.

Every public module of this package is a family and is imported here, so a
new family registers by existing: there is no list to forget it in.
"""

import importlib
import pkgutil

from .registry import KERNELS, install, registered_ops

for _family in pkgutil.iter_modules(__path__):
    if not _family.name.startswith("_") and _family.name != "registry":
        importlib.import_module(f"{__name__}.{_family.name}")

__all__ = ["KERNELS", "install", "registered_ops"]
