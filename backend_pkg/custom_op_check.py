"""npy tensors pass AOTAutograd's first-call check of custom ops, as CPU tensors do.

The first call of a function compiled with AOTAutograd (the default
``torch.compile``, and ``aot_eager``) runs under a dispatch mode that checks
custom ops for aliasing, ``_AnalyzeCustomOpInputOutputMode`` in
torch/_functorch/_aot_autograd/runtime_wrappers.py. Before it looks at the op
(a check for custom ops only), its ``__torch_dispatch__`` gives up, for every
op, on any tensor whose class is not in ``HANDLED_TYPES``
(torch/fx/experimental/proxy_tensor.py: ``torch.Tensor``, ``nn.Parameter``,
``FakeTensor``); for an ``nn.Parameter`` it looks at the class of
``tensor.data``. An :class:`~backend_pkg.NpyTensor` is not there, so any aten
op on one fails the first call with "Multiple dispatch failed ... all
__torch_dispatch__ handlers returned NotImplemented": every op of an
``aot_eager`` graph, and the runtime wrapper's ``detach`` of an input whose
gradient the graph never needs (a GAN step compiled whole).

The mode asks an npy tensor two questions, both answered by npy's class: is
it a parameter (``isinstance``, which reads ``_is_param``), and what is its
``.data``. Asked by that mode's code, and by no other, an npy tensor says it
is one, and gives the plain ``torch.Tensor`` object over the same memory that
``.data`` gives any CPU tensor; the mode then runs the op as it does for CPU
tensors (its check concerns custom ops only, and npy defines none). Nothing
is set process-wide, and the answers change only for that frame: when
PyTorch renames or changes the mode, the frame is not found and the first
call fails as before. Upstream, the mode would skip the class check for
builtin ops, and let through a subclass that defines no ``__torch_dispatch__``.
"""

import sys

_CHECK_MODULE = "torch._functorch._aot_autograd.runtime_wrappers"
_CHECK_FUNCTION = "_AnalyzeCustomOpInputOutputMode.__torch_dispatch__"


def is_custom_op_check(frame):
    """Whether ``frame`` runs ``_AnalyzeCustomOpInputOutputMode.__torch_dispatch__``."""
    return frame.f_code.co_qualname == _CHECK_FUNCTION and frame.f_globals.get("__name__") == _CHECK_MODULE


class ParameterMarkForTheCheck:
    """``_is_param`` of an npy tensor that is no parameter: true only as the check asks it.

    A non-data descriptor, so that a parameter's own ``_is_param`` (set on the
    object by ``nn.Parameter``) is read first. ``isinstance(t, nn.Parameter)``
    reads it from ``_ParameterMeta.__instancecheck__`` (torch/nn/parameter.py),
    called by the frame that asks.
    """

    def __get__(self, tensor, owner=None):
        return tensor is not None and is_custom_op_check(sys._getframe(2))
