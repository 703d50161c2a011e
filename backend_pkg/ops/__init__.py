"""The npy kernels, one module per op family; importing a family fills the registry."""

from . import arithmetic, comparison, copies, factories, reductions, unary, views  # noqa: F401
from .registry import KERNELS, install, registered_ops

__all__ = ["KERNELS", "install", "registered_ops"]
