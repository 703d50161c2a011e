"""Parameters keep their Python objects when a module moves to npy and back, as on CUDA.

``Module.to(device)`` moves each parameter in place, ``param.data = moved``
(``Module._apply`` in torch/nn/modules/module.py), only when
``torch._has_compatible_shallow_copy_type(param, moved)`` says the two
tensors can share a ``TensorImpl`` type; otherwise it makes a new
``nn.Parameter`` for each module. The same question guards every
``tensor.data = other``: ``VariableHooks::set_data``
(torch/csrc/autograd/variable.cpp) refuses with "incompatible tensor type"
when the answer is no. c10's answer (``has_compatible_shallow_copy_type`` in
c10/core/TensorImpl.h) names the dense backends it knows, CPU, CUDA, MPS, HIP,
XPU, HPU and MTIA, and leaves PrivateUse1 to a kernel of the backend's for the
op ``aten::_has_compatible_shallow_copy_type``. Without one, moving a model
to npy makes new parameters: weights two modules share (a GPT's embedding and
output layer) come apart, and an optimizer made before the move keeps
stepping the CPU tensors.

:func:`has_compatible_shallow_copy_type` is that kernel. It answers CUDA's
rule with PrivateUse1 among the dense backends, which holds for npy because
its tensors are plain ``TensorImpl`` objects (``create_empty_tensor``), as
CPU's are. It is registered at ``AutogradPrivateUse1``: the op is
CompositeImplicitAutograd, and a call with a CPU and an npy tensor dispatches
on the autograd key of the highest backend, PrivateUse1's.

It also gives the moved object npy's class. npy's kernels read a tensor's
NumPy view from its Python object (an :class:`~backend_pkg.NpyTensor` keeps
it as an attribute, see :mod:`backend_pkg.tensor`), and an npy parameter is an
``NpyTensor`` marked ``_is_param``, which is what ``nn.Parameter(npy_tensor)``
makes (``Parameter.__new__`` keeps the class of a tensor subclass, and
``isinstance(t, nn.Parameter)`` is true of it). So when a ``torch.Tensor`` or
an ``nn.Parameter`` takes npy data, its class becomes ``NpyTensor`` before the
move, and turns back (:func:`backend_pkg.tensor.leave_npy`) when it takes CPU data again.
``Module._apply`` asks the op twice with the parameter's own Python object,
once as a question and once from inside ``param.data = moved``; only the
second may change the class, or a question with no move after it would leave
a CPU tensor of npy's class. The two calls reach the kernel alike, so the
kernel looks at the Python frame that made the call: the one that moves is
executing ``<tensor>.data = ...`` (a ``STORE_ATTR`` of ``data``).

Other classes (a user's ``nn.Parameter`` subclass, the ``UninitializedParameter``
of a lazy module and the ``nn.Parameter`` it becomes) keep theirs: a class is the
user's. (A lazy parameter's ``.data =`` runs from its ``__torch_function__``, not
from a ``STORE_ATTR``.) The new data's pointer is made first, since their
``data_ptr()`` and ``untyped_storage()`` are PyTorch's, which read it without
asking npy (see :func:`backend_pkg.storage.materialized`).
"""

import dis
import functools
import sys

import torch

from .names import DEVICE_NAME
from .runtime import untraced
from .tensor import NpyTensor, materialized_storage

_DispatchKey = torch._C.DispatchKey
# c10's dense backends (c10/core/TensorImpl.h), and PrivateUse1, whose dense npy tensors are plain TensorImpls.
_DENSE_BACKEND_KEYS = tuple(
    getattr(_DispatchKey, name) for name in ("CPU", "CUDA", "MPS", "HIP", "XPU", "HPU", "MTIA", "PrivateUse1")
)
# The classes that take npy's class with npy data: PyTorch's own, which an npy tensor and parameter replace.
_CLASSES_NPY_REPLACES = (torch.Tensor, torch.nn.Parameter)
_STORE_ATTR = dis.opmap["STORE_ATTR"]


def _is_dense(keys):
    return any(keys.has(key) for key in _DENSE_BACKEND_KEYS)


def has_compatible_shallow_copy_type(tensor, source):
    """Whether ``tensor.data = source`` may replace ``tensor``'s data in place: c10's rule
    (the same dispatch keys, or both dense on a backend it names) with npy among the dense
    backends. c10's sparse cases concern no npy tensor: npy makes none.

    When the call comes from ``tensor.data = source`` moving a tensor of PyTorch's own class to
    npy, ``tensor`` first takes npy's class (the module's docstring says why); any other tensor
    that may take npy data keeps its class, and ``source``'s storage gets its data pointer."""
    keys, source_keys = torch._C._dispatch_keys(tensor), torch._C._dispatch_keys(source)
    compatible = keys == source_keys or (_is_dense(keys) and _is_dense(source_keys))
    if compatible and source.device.type == DEVICE_NAME:
        moving = _assigns_data(sys._getframe(1)) and _set_data_goes_on(tensor, source)
        if moving and type(tensor) in _CLASSES_NPY_REPLACES:
            _take_npy_class(tensor)
        else:
            materialized_storage(source)
    return compatible


def _assigns_data(frame):
    """Whether ``frame`` is executing ``<something>.data = <value>``."""
    code, offset = frame.f_code, frame.f_lasti
    return code.co_code[offset] == _STORE_ATTR and _stored_attribute(code, offset) == "data"


@functools.lru_cache(maxsize=64)
def _stored_attribute(code, offset):
    """The attribute the ``STORE_ATTR`` at ``offset`` of ``code`` sets."""
    return next(instruction.argval for instruction in dis.get_instructions(code) if instruction.offset == offset)


def _set_data_goes_on(tensor, source):
    """Whether ``set_data`` gives ``tensor`` ``source``'s data once this kernel answers yes: its
    one further check is that a tensor requiring grad takes a differentiable dtype."""
    return not tensor.requires_grad or source.is_floating_point() or source.is_complex()


def _take_npy_class(tensor):
    if type(tensor) is torch.nn.Parameter:
        tensor._is_param = True
    tensor.__class__ = NpyTensor


def install(library):
    """Register the kernel with ``library`` (an ``aten`` IMPL library)."""
    library.impl("_has_compatible_shallow_copy_type", untraced(has_compatible_shallow_copy_type), "AutogradPrivateUse1")
