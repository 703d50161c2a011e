"""The npy tensor: a PyTorch tensor whose device memory is a NumPy array.

``torch._C._acc.create_empty_tensor`` makes a tensor on the PrivateUse1
device with no memory behind it. :func:`wrap` gives it memory and swaps its
``__class__`` to :class:`NpyTensor`; kernels registered with
``torch.library`` read their inputs with :func:`unwrap` and return
:func:`wrap`-ped results.

The memory belongs to the tensor's *storage*, as on every PyTorch device:

* each storage records the NumPy array that owns its bytes (the *root*) on
  its Python object, an :class:`~backend_pkg.storage.NpyStorage`, so the
  memory lives exactly as long as some tensor uses it, whichever tensor
  that is;
* a view shares its base's storage; sizes, strides and storage offset live
  in the tensor's metadata, where PyTorch reads them (``stride()``,
  ``is_contiguous()``...), and where PyTorch changes them in place
  (``unsqueeze_``, ``t_``...);
* :func:`unwrap` rebuilds the NumPy view from the root and that metadata,
  so it is right for every tensor on the device, whichever Python object
  PyTorch's C++ code gave it (autograd's saved results and views that
  change the dtype are plain ``torch.Tensor`` objects over an existing
  storage).

:func:`host_view` is the boundary the other way: a CPU tensor over an npy
tensor's memory (no bytes move), which copies, the CPU fallback,
``torch.distributed`` and compiled graphs hand to PyTorch's CPU code.

Two shortcuts make a small op cheap (measured by ``make bench``):

* an :class:`NpyTensor` keeps its NumPy view on itself, so :func:`unwrap`
  is one attribute read; the kernels that change a tensor's metadata in
  place (``as_strided_``, ``set_``, ``resize_``, and the ``.data`` setter)
  drop that view, and the next :func:`unwrap` rebuilds it. The plain
  ``torch.Tensor`` objects PyTorch's C++ code gives some npy tensors (the
  gradients ``AccumulateGrad`` stores, see :func:`detached`) keep nothing:
  PyTorch's own pickling and ``deepcopy`` of such an object would carry
  its ``__dict__``, cached views included;
* a fresh result's storage gets its data pointer only when something reads
  it (``data_ptr()``, ``untyped_storage()``, a view, ``torch.save``): the
  pointer costs more than the rest of a small kernel, and most results are
  consumed by other kernels, which need only the root.
"""

import copy
import ctypes
import sys
from collections import OrderedDict

import numpy as np
import torch

from . import memory
from .custom_op_check import ParameterMarkForTheCheck, is_custom_op_check
from .dtypes import NUMPY_TO_TORCH, to_numpy_dtype, to_torch_dtype
from .memory import storage_root
from .names import DEVICE_NAME
from .runtime import untraced
from .storage import NpyStorage, bytes_of, materialized, new_storage

_create_empty = torch._C._acc.create_empty_tensor
# The C++ methods, under NpyTensor's overrides that give the storage its pointer first.
_storage_as_is = torch.Tensor.untyped_storage
_DATA = torch._C.TensorBase.data
_DETACH = torch._C.TensorBase.detach
# set_ has no PrivateUse1 kernel of its own; its CPU kernel only rewrites the
# tensor's metadata, which is all a descriptor storage needs.
_SET_STORAGE = torch.ops.aten.set_.source_Storage_storage_offset._handle
_AS_STRIDED = torch.ops.aten.as_strided.default._handle
_RESHAPE_ALIAS = torch.ops.aten._reshape_alias.default._handle
_VIEW = torch.ops.aten.view.default._handle
_VIEW_DTYPE = torch.ops.aten.view.dtype._handle
_ALIAS = torch.ops.aten.alias.default._handle
_METADATA_ONLY_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
# What an NpyTensor keeps of its memory between calls, as attributes: its NumPy view, and
# the CPU tensor over it that compiled graphs read (see backend_pkg.compiler.host). Caches:
# never pickled or copied.
KEPT_VIEWS = ("_npy_array", "_npy_host_view")


class NpyTensor(torch.Tensor):
    """A tensor on the ``npy`` device, backed by NumPy memory.

    Kernels make instances with :func:`wrap` and reach the memory with
    :func:`unwrap`.
    """

    # Results of torch functions keep the class the kernel gave them: npy
    # results are NpyTensors, ``.cpu()`` results are plain CPU tensors.
    __torch_function__ = torch._C._disabled_torch_function_impl
    # A parameter is an NpyTensor with its own ``_is_param``; for the others, see backend_pkg.custom_op_check.
    _is_param = ParameterMarkForTheCheck()

    def __repr__(self, *, tensor_contents=None):
        """Print as a CPU tensor prints, plus ``device='npy:0'``.

        The digits are formatted from a CPU copy, as PyTorch itself does for
        XLA and lazy tensors. PyTorch's printer names any class other than
        ``torch.Tensor`` in its output (``NpyTensor([...])``), so the tensor
        is shown to it as a plain tensor; the printer runs no kernels on it.
        """
        if tensor_contents is None:
            host = self.detach().cpu()
            tensor_contents = torch._tensor_str._tensor_str(host, indent=len("tensor("))
        self.__class__ = torch.Tensor
        try:
            return torch._tensor_str._str(self, tensor_contents=tensor_contents)
        finally:
            self.__class__ = NpyTensor

    def __reduce_ex__(self, protocol):
        """Pickle as PyTorch pickles a CPU tensor or parameter, with no trace of NumPy.

        ``torch.load(weights_only=True)`` trusts only PyTorch's own classes and
        rebuild functions, and loading onto npy makes an NpyTensor again anyway.
        An npy parameter is an NpyTensor marked ``_is_param`` (``nn.Parameter``
        keeps the class of a tensor subclass); it pickles as ``nn.Parameter``
        does, so that ``map_location="cpu"`` gives real parameters. The views
        kept on the tensor (:data:`KEPT_VIEWS`) are left out: they are caches,
        and the state PyTorch pickles is the tensor's live ``__dict__``.
        """
        state = {name: value for name, value in self.__dict__.items() if name not in (*KEPT_VIEWS, "_is_param")}
        if self.__dict__.get("_is_param"):
            data = self.detach()
            if state:
                return torch._utils._rebuild_parameter_with_state, (data, self.requires_grad, OrderedDict(), state)
            return torch._utils._rebuild_parameter, (data, self.requires_grad, OrderedDict())
        materialized_storage(self)
        self.__class__ = torch.Tensor
        try:
            rebuild = self._reduce_ex_internal(protocol)
        finally:
            self.__class__ = NpyTensor
        if state:
            rebuild_tensor, args = rebuild
            return torch._tensor._rebuild_from_type_v2, (rebuild_tensor, torch.Tensor, args, state)
        return rebuild

    def __deepcopy__(self, memo):
        """A copy in new npy memory. (PyTorch's version copies the storage, which needs
        a C++ allocator for the device.)"""
        if id(self) not in memo:
            copied = self.detach().clone().requires_grad_(self.requires_grad)
            memo[id(self)] = copied
            if self.grad is not None:
                # This method, also for a gradient whose object is plain (see detached): PyTorch's
                # deepcopy of one wants new_empty to give its class, and npy's kernels give NpyTensors.
                copied.grad = NpyTensor.__deepcopy__(self.grad, memo)
            # Python attributes too: npy parameters are marked by one (``_is_param``).
            attributes = {key: value for key, value in self.__dict__.items() if key not in KEPT_VIEWS}
            copied.__dict__.update(copy.deepcopy(attributes, memo))
        return memo[id(self)]

    def __format__(self, format_spec):
        """``f"{loss:.4f}"`` formats the number, as for a CPU tensor.

        ``torch.Tensor.__format__`` does that only when the type is exactly
        ``torch.Tensor``.
        """
        if self.dim() == 0:
            return format(self.item(), format_spec)
        return super().__format__(format_spec)

    def __coerce_same_metadata_as_tangent__(self, expected_metadata, expected_type=None):
        """A compiled backward's gradient input: an npy tensor is what AOTAutograd traced,
        a tensor with no metadata of its own (see :mod:`backend_pkg.compiler.tracing`)."""
        return self

    @untraced
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """``Tensor.backward``, run by the calling thread.

        PyTorch's autograd engine gives each accelerator a thread of its own
        and runs the backward work of that device's tensors there, so every
        npy kernel of a backward would wait on that thread for the GIL.
        ``set_multithreading_enabled(False)``, which is thread-local and holds
        only during this call, has the calling thread run the whole backward,
        as it always does for CPU tensors. (``torch.autograd.backward`` and
        ``torch.autograd.grad`` keep the engine's default.)

        The gradient of a loss, when none is given, is made here (see
        :func:`_seed_gradient`).
        """
        if gradient is None:
            gradient = _seed_gradient(self)
        with torch.autograd.set_multithreading_enabled(False):
            super().backward(gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """An NpyTensor, as every npy kernel's result (see :func:`detached`).

        Dynamo traces PyTorch's own ``detach`` instead: it would otherwise step
        into :func:`detached`, whose class assignment it cannot trace, and break
        the graph there (the compiled code's results become NpyTensors on
        their way out, see :mod:`backend_pkg.compiler.host`).
        """
        if torch.compiler.is_compiling():
            return torch.Tensor.detach(self)
        return detached(self)

    def untyped_storage(self):
        return materialized_storage(self)

    def data_ptr(self):
        materialized_storage(self)
        return super().data_ptr()

    @property
    def data(self):
        """The tensor without autograd history, an NpyTensor as any npy kernel's result is.

        Unlike ``detach()``, it does not share this tensor's version counter
        (the C++ getter makes it), and, as PyTorch's ``.data`` of a parameter,
        it is no parameter. AOTAutograd's first-call check of custom ops gets
        the plain ``torch.Tensor`` object (see :mod:`backend_pkg.custom_op_check`).
        """
        if is_custom_op_check(sys._getframe(1)):
            return _DATA.__get__(self)
        return _sharing_views(_DATA.__get__(self), self)

    @data.setter
    def data(self, value):
        """``set_data``, as for any tensor; taking data off npy (``Module.to("cpu")``), the tensor
        takes the class PyTorch gives it there (see :mod:`backend_pkg.parameters`)."""
        _DATA.__set__(self, value)
        forget_array(self)
        if type(value) is not NpyTensor and value.device.type != DEVICE_NAME:
            leave_npy(self)


def leave_npy(tensor):
    """Give an :class:`NpyTensor` that has just taken data off npy (``.data =``) the class
    PyTorch gives such a tensor: ``nn.Parameter`` for a parameter, else ``torch.Tensor``
    (:mod:`backend_pkg.parameters` gives it npy's class as it moves to npy)."""
    tensor.__class__ = torch.nn.Parameter if tensor.__dict__.pop("_is_param", False) else torch.Tensor


def _seed_gradient(loss):
    """The gradient ``backward()`` starts from when given none: ones like a real 0-dim
    ``loss`` that requires grad, or None, for PyTorch to make or refuse.

    PyTorch makes it with ``torch.ones_like(loss, memory_format=torch.preserve_format)``
    (``_make_grads`` in torch/autograd/__init__.py): a trip through the
    dispatcher into npy's ``ones_like`` kernel, measured at about 14 µs of the
    67 µs that the compiled MLP training step of ``make bench`` spent in
    ``backward()`` beyond the CPU's; made here, about 4. The tensor is the
    same. Any other tensor (more dims, an integer or complex dtype, no
    autograd history) is left to PyTorch, whose errors it then gets.
    """
    array = unwrap(loss)
    if array.ndim or array.dtype.kind != "f" or not loss.requires_grad:
        return None
    ones = np.empty((), array.dtype)
    ones.fill(1)
    return wrap_new(ones)


def _has_tensor_layout(array):
    """Whether a tensor can describe ``array``: non-negative strides, in whole elements."""
    return all(stride >= 0 and stride % array.itemsize == 0 for stride in array.strides)


def materialized_storage(tensor):
    """``tensor``'s storage, :func:`~backend_pkg.storage.materialized`: given its data pointer if it has none yet."""
    return materialized(_npy_storage(tensor))


def wrap(array, base=None):
    """An npy tensor over ``array``'s memory (a NumPy array or scalar).

    Pass ``base``, the npy tensor ``array`` is a view of, to make the result
    share its storage (a view kernel must). An array whose layout a tensor
    cannot describe (negative strides, as from ``np.flip``) is copied first.
    """
    array = np.asarray(array)
    if base is None and array.size == 0 and array.base is None:
        return _wrap_empty(array)
    if base is None and has_contiguous_strides(array):
        root = array if array.base is None else _whole_root(array)
        if root is not None:
            return _wrap_fresh(array, root)
    if not _has_tensor_layout(array):
        array = np.ascontiguousarray(array)
    if base is not None:
        storage = _npy_storage(base)
    else:
        root = storage_root(array)
        if not _has_tensor_layout(root):
            array = root = array.copy()
        storage = new_storage(root)
    tensor = _create_empty(array.shape, to_torch_dtype(array.dtype))
    _describe(tensor, storage, array)
    if base is not None:
        # A view of a conjugate or negative view is one too: the bits are the view's
        # meaning, not something in the memory.
        torch._C._set_conj(tensor, base.is_conj())
        torch._C._set_neg(tensor, base.is_neg())
    return _as_npy_tensor(tensor, array)


def view_of(base, size, stride, storage_offset):
    """An npy tensor over ``base``'s storage with this metadata, in elements.

    ``as_strided``'s CPU kernel does exactly this for any device, in one C++
    call: a new tensor over the same storage, with ``base``'s dispatch keys
    (so its device, and its conjugate and negative bits), the metadata
    checked against the storage's size with PyTorch's errors.
    """
    storage = materialized_storage(base)  # the bounds check reads the storage's byte size
    tensor = _AS_STRIDED.redispatch_boxed(_METADATA_ONLY_KEYS, base, size, stride, storage_offset)
    array = _array_over(storage._npy_root, to_numpy_dtype(base.dtype), size, stride, storage_offset)
    return _as_npy_tensor(tensor, array)


def restrided(base, size, stride, array):
    """An npy tensor over ``base``'s storage, from ``base``'s storage offset, with these sizes
    and strides (in elements); ``array`` is its NumPy view, made from ``unwrap(base)``.

    For views that stay within ``base``'s elements (``t``, ``transpose``,
    ``expand``): ``_reshape_alias``'s CPU kernel makes the tensor in C++
    without :func:`view_of`'s bounds check, which has nothing to find there
    and needs the storage's data pointer.
    """
    tensor = _RESHAPE_ALIAS.redispatch_boxed(_METADATA_ONLY_KEYS, base, size, stride)
    return _as_npy_tensor(tensor, array)


def reshaped(base, size):
    """``base.view(size)``: ``view``'s CPU kernel works out the strides, or raises PyTorch's
    error, from the metadata alone."""
    tensor = _VIEW.redispatch_boxed(_METADATA_ONLY_KEYS, base, size)
    kept = getattr(base, "_npy_array", None)  # its dtype is read in a third of the time of base.dtype's
    np_dtype = kept.dtype if kept is not None else to_numpy_dtype(base.dtype)
    array = _array_over(_root_of(base), np_dtype, tensor.shape, tensor.stride(), tensor.storage_offset())
    return _as_npy_tensor(tensor, array)


def retyped(base, dtype):
    """``base.view(dtype)``: its CPU kernel makes it from the metadata, with PyTorch's errors.

    Autograd hands the caller a plain ``torch.Tensor`` object over the result
    (a view across dtypes is not differentiable, and such a view is a new
    tensor object), whose ``data_ptr()`` is C++'s, which never asks npy: the
    storage is given its data pointer first.
    """
    materialized_storage(base)
    return _VIEW_DTYPE.redispatch_boxed(_METADATA_ONLY_KEYS, base, dtype)


def alias_of(base):
    """A new npy tensor with ``base``'s storage and metadata (``alias``, and views that change nothing).

    ``alias``'s CPU kernel makes it in C++ with nothing to check, so a fresh
    result's storage can stay without its data pointer (see
    :func:`materialized`).
    """
    return _sharing_views(_ALIAS.redispatch_boxed(_METADATA_ONLY_KEYS, base), base)


def detached(base):
    """``base.detach()`` for an NpyTensor ``base``: PyTorch's ``detach``, as an NpyTensor
    with ``base``'s kept views.

    npy registers no ``detach`` (nor ``alias``) kernel: the dispatcher runs
    PyTorch's C++ one (CompositeExplicitAutograd, a new tensor with
    ``base``'s storage and metadata, sharing its version counter), whose
    result reaches Python without a Python object. ``Tensor._make_subclass``
    and ``as_subclass`` (``torch/csrc/autograd/python_variable.cpp``) detach
    or alias their argument and give the result the class asked for, which
    they refuse to do for a tensor that already has a Python object of
    another class (``check_tensor_subclass``): a Python kernel's result
    always has one. So ``nn.UninitializedParameter`` and lazy modules work on
    npy. The C++ callers get plain objects: ``AccumulateGrad`` stores a
    gradient as the ``detach`` of the one the backward computed whenever it
    can, so ``.grad`` is mostly a plain ``torch.Tensor`` object, whose NumPy view :func:`unwrap`
    rebuilds each time (a gradient is read about once a step, by the
    optimizer). Such an object's ``data_ptr()`` is PyTorch's, which reads 0
    while the storage has no pointer yet (see :func:`materialized_storage`); its
    storage, read from Python, gives itself one (:class:`~backend_pkg.storage.NpyStorage`).
    Calls from Python (``x.detach()``, ``nn.Parameter(x)``) come here,
    through :meth:`NpyTensor.detach`.
    """
    return _sharing_views(_DETACH(base), base)


def _sharing_views(tensor, base):
    """``tensor``, a new tensor with ``base``'s storage and metadata, as an NpyTensor with
    ``base``'s NumPy view (which no kernel changes in place) and the host view a compiled
    graph gave ``base`` (``_npy_host_view``, see :mod:`backend_pkg.compiler.host`): the
    gradient a compiled backward returns reaches ``.grad`` through ``detach``, and the
    compiled optimizer step then reads it without making another."""
    alias = _as_npy_tensor(tensor, unwrap(base))
    host_view = base.__dict__.get("_npy_host_view")
    if host_view is not None:
        alias._npy_host_view = host_view
    return alias


def has_contiguous_strides(array):
    """Whether ``array`` has the strides of a contiguous tensor of its shape.

    NumPy calls an array C-contiguous whatever the strides of its length-1
    dims (and of an empty array); PyTorch reports them, so those are compared too.
    """
    if not array.flags.c_contiguous:
        return False
    if 1 not in array.shape and 0 not in array.shape:
        return True
    expected, step = [], array.itemsize
    for length in reversed(array.shape):
        expected.append(step)
        step *= length
    return array.strides == tuple(reversed(expected))


def _whole_root(array):
    """The array owning the memory that ``array``, C-contiguous, covers whole
    (a reshape or a double transpose of a result), or ``None``.

    Memory no array owns (a CPU tensor's, seen through ``Tensor.numpy()``)
    has ``array`` itself for its root (see :func:`~backend_pkg.memory.storage_root`).
    """
    owner = array.base
    if not isinstance(owner, np.ndarray):
        return array if storage_root(array) is array else None
    if owner.base is not None or owner.nbytes != array.nbytes:
        return None
    # Two contiguous blocks of one size, one inside the other, start at the same byte.
    return owner if owner.flags.c_contiguous or owner.flags.f_contiguous else None


def _wrap_fresh(array, root):
    """:func:`wrap` for a C-contiguous array that covers all of ``root``'s memory
    from its start: the tensor ``create_empty_tensor`` makes already describes it."""
    try:
        dtype = NUMPY_TO_TORCH[array.dtype]
    except KeyError:
        dtype = to_torch_dtype(array.dtype)  # refuses it by name
    tensor = _create_empty(array.shape, dtype)
    storage = _storage_as_is(tensor)
    storage.__class__ = NpyStorage  # copies itself without PyTorch's allocator (0.03 µs)
    storage._npy_root = root
    if memory.counting:
        memory.count(root)
    return _as_npy_tensor(tensor, array)


def wrap_new(array):
    """:func:`wrap` for an array just allocated by NumPy (``np.empty``): C-ordered,
    owning its memory, with the strides PyTorch gives a new tensor whenever it has
    elements. Such an array passes all of ``wrap``'s checks, which this skips."""
    if array.size == 0:
        return _wrap_empty(array)
    return _wrap_fresh(array, array)


def wrap_over(array, root):
    """:func:`wrap` for ``array``, a C-ordered reshape of ``root``, an array NumPy just
    allocated (``root.reshape(shape)``) with elements: it covers all of ``root``'s memory from
    its start, with the strides PyTorch gives a new tensor of its shape (NumPy's reshape of a
    C-ordered array counts a length-1 dim as PyTorch does), which is what the shortcut for a
    fresh result takes."""
    return _wrap_fresh(array, root)


def _wrap_empty(array):
    """:func:`wrap` for a new array without elements, with the strides PyTorch gives a new one.

    NumPy gives a new empty array zero strides, and ``create_empty_tensor``
    zero strides before a zero-length dim; PyTorch's contiguous strides count
    a zero-length dim as one (``torch.empty(5, 0, 5).stride()`` is ``(5, 5, 1)``).
    """
    strides, step = [], 1
    for length in reversed(array.shape):
        strides.append(step)
        step *= max(length, 1)
    tensor = _create_empty(array.shape, to_torch_dtype(array.dtype))
    set_metadata(tensor, new_storage(array), 0, array.shape, strides[::-1])
    return _as_npy_tensor(tensor, array)


def _as_npy_tensor(tensor, array):
    tensor.__class__ = NpyTensor
    tensor._npy_array = array
    return tensor


def forget_array(tensor):
    """Drop the views ``tensor`` keeps (:data:`KEPT_VIEWS`), before its metadata changes in place."""
    attributes = tensor.__dict__
    for name in KEPT_VIEWS:
        attributes.pop(name, None)


def rebind(tensor, array):
    """Point an existing npy tensor at new memory, ``array`` (for ``resize_``)."""
    forget_array(tensor)
    _describe(tensor, new_storage(storage_root(array)), array)


def _describe(tensor, storage, array):
    """Set ``tensor``'s storage, offset, sizes and strides to those of ``array``."""
    itemsize = array.itemsize
    set_metadata(
        tensor,
        storage,
        (array.ctypes.data - storage._npy_root.ctypes.data) // itemsize,
        array.shape,
        [stride // itemsize for stride in array.strides],
    )


def set_metadata(tensor, storage, storage_offset, size, stride):
    """Point ``tensor`` at ``storage`` (an npy storage) with this offset, size and stride."""
    forget_array(tensor)
    _SET_STORAGE.redispatch_boxed(_METADATA_ONLY_KEYS, tensor, materialized(storage), storage_offset, size, stride)


def _npy_storage(tensor):
    """``tensor``'s storage as it is (perhaps without its data pointer yet), refusing a non-npy tensor."""
    storage = _storage_as_is(tensor)
    # Every npy storage has a root; reading the device costs as much as this whole function.
    if not hasattr(storage, "_npy_root"):
        raise TypeError(f"npy device: expected an npy tensor, got a tensor on {tensor.device}")
    return storage


def _root_of(tensor):
    return _npy_storage(tensor)._npy_root


def storage_nbytes(tensor):
    """The size in bytes of an npy tensor's storage (without giving it a data pointer)."""
    return _root_of(tensor).nbytes


def storage_array(tensor):
    """All of an npy tensor's storage, as a flat array of the tensor's dtype.

    Storage offsets and strides count from its first element.
    """
    flat = bytes_of(_root_of(tensor))
    np_dtype = to_numpy_dtype(tensor.dtype)
    return flat[: flat.size - flat.size % np_dtype.itemsize].view(np_dtype)


def unwrap(tensor):
    """The NumPy view of an npy tensor's memory: an alias, never a copy."""
    # getattr with a default, not try/except: for an object that keeps no view (a gradient), a raised
    # AttributeError cost 1 µs, a quarter of making the view.
    array = getattr(tensor, "_npy_array", None)
    return array if array is not None else _view_of_storage(tensor)


def is_npy(value):
    """Whether ``value`` is a tensor on the npy device.

    An :class:`NpyTensor`'s kept array answers without reading its device (a few hundred ns).
    """
    return isinstance(value, torch.Tensor) and (
        getattr(value, "_npy_array", None) is not None or value.device.type == DEVICE_NAME
    )


def host_view(tensor):
    """A CPU tensor over ``tensor``'s memory: itself for CPU, its array for npy.

    Conjugate and negative views are lazy in PyTorch (a bit on the tensor,
    not a change to the memory); the CPU view carries the same bits, so the
    CPU copy applies them.
    """
    if tensor.device.type == "cpu":
        return tensor
    if tensor.device.type != DEVICE_NAME:
        raise RuntimeError(f"npy device: cannot copy between npy and {tensor.device}")
    view = _view_by_address(tensor) if has_foreign_storage(tensor) else torch.from_numpy(unwrap(tensor))
    if tensor.is_conj():
        view = view.conj()
    if tensor.is_neg():
        view = view._neg_view()
    return view


def has_foreign_storage(tensor):
    """Whether ``tensor``'s storage was made by PyTorch's C++ over npy memory rather than by
    npy: pickling a tensor (``Tensor.__reduce_ex__`` pickles its storage with the legacy
    ``torch.save``) copies each storage to the CPU through ``at::from_blob`` over its data
    pointer (``THPStorage_writeFileRaw`` in torch/csrc/serialization.cpp)."""
    return type(tensor) is not NpyTensor and not hasattr(torch.Tensor.untyped_storage(tensor), "_npy_root")


def _view_by_address(tensor):
    """A CPU tensor over the memory ``tensor`` describes, found by its storage's data pointer:
    npy memory is host memory, and the storage it belongs to outlives the copy."""
    storage = torch.Tensor.untyped_storage(tensor)
    host_bytes = np.ctypeslib.as_array((ctypes.c_uint8 * storage.nbytes()).from_address(storage.data_ptr()))
    elements = torch.from_numpy(host_bytes).view(tensor.dtype)
    return elements.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())


def _view_of_storage(tensor):
    array = _array_over(
        _root_of(tensor), to_numpy_dtype(tensor.dtype), tensor.shape, tensor.stride(), tensor.storage_offset()
    )
    if type(tensor) is NpyTensor:
        tensor._npy_array = array
    return array


def _array_over(root, np_dtype, size, stride, storage_offset):
    """The NumPy view of ``root``'s memory that a tensor with this metadata (in elements) describes."""
    itemsize = np_dtype.itemsize
    # A C-ordered root is its own flat bytes; the arguments go by position, which NumPy parses
    # in a fifth of the time it takes for keywords.
    memory = root if root.flags.c_contiguous else bytes_of(root)
    offset = storage_offset * itemsize
    if 0 in size:  # a view without elements may start past the end of the memory, which NumPy refuses
        offset = min(offset, memory.nbytes)
    return np.ndarray(tuple(size), np_dtype, memory, offset, [step * itemsize for step in stride])
