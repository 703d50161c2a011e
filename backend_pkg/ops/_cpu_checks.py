"""PyTorch's own checks of a call, run by its CPU kernel on stand-ins that hold no data.

What PyTorch refuses, and in which words, changes between releases: torch
2.14 raises ``NotImplementedError`` (``TORCH_CHECK_NOT_IMPLEMENTED``) where
2.13 raised ``RuntimeError`` for ``-`` on bool tensors and for ``relu`` and
``hardtanh`` of bool, and checks replication padding's output shape anew
(``pad_shape_check``, aten/src/ATen/native/Padding.h). A kernel that copies
such a check is right for one release only. Where the check is rare and its
outcome depends on shapes and dtypes alone, the kernel asks the CPU instead:
the same op on CPU tensors of the same shapes and dtypes, each one element
expanded (no memory), raises exactly what the installed torch raises.
"""

import torch
from torch.utils._pytree import tree_map


def _stand_in(value):
    if isinstance(value, torch.Tensor):
        return torch.zeros((), dtype=value.dtype).expand(value.shape)
    return value


def check_on_cpu(op, *args, **kwargs):
    """Run ``op`` (a functional overload) on CPU stand-ins of ``args``: raises what the CPU raises.

    Only for calls the CPU refuses or whose result is empty: on any other the
    CPU kernel would compute a whole result.
    """
    op(*tree_map(_stand_in, args), **tree_map(_stand_in, kwargs))
