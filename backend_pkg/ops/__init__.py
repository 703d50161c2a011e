"""The npy kernels, one module per op family; importing a family fills the registry."""

from . import (  # noqa: F401
    arithmetic,
    comparison,
    copies,
    factories,
    indexing,
    joining,
    linalg,
    nn,
    reductions,
    sampling,
    unary,
    views,
)
from .registry import KERNELS, install, registered_ops

__all__ = ["KERNELS", "install", "registered_ops"]
