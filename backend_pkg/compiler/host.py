"""The two edges of a graph compiled by Inductor for npy: npy tensors in, npy tensors out.

Inside, the graph's code is Inductor's CPU code (see :mod:`.inductor`). These
two functions, called by that code, move no bytes: a CPU tensor over an npy
tensor's memory on the way in, an npy tensor over a CPU buffer's memory on
the way out.
"""

import torch

from ..ops.copies import host_view
from ..tensor import wrap


def to_host(tensor):
    """A CPU tensor over an npy tensor's memory."""
    return host_view(tensor)


def to_npy(tensor):
    """An npy tensor over a CPU tensor's memory, which it keeps alive."""
    return wrap(tensor.numpy())
