"""``torch.npy``: the device module PyTorch looks up by the backend's name.

PyTorch finds these functions through ``getattr(torch, "npy")``:
``torch.manual_seed`` (``manual_seed_all``), ``torch.random.fork_rng`` and
``torch.utils.checkpoint`` (``get_rng_state``, ``set_rng_state``,
``device``, ``_initialized``), ``torch.autocast``
(``get_amp_supported_dtype``), ``torch.accelerator`` (``device_count``...),
FSDP2 (``Stream``, ``stream``, ``current_stream``).
The memory functions have ``torch.cuda``'s names; ``torch.accelerator``'s
own memory functions cannot reach them (:mod:`backend_pkg.memory`).

There is exactly one npy device, index 0: NumPy runs on the host, and the
C++ device guard for Python backends reports a single device.
"""

import contextlib

import numpy as np
import torch

from . import memory

_DEVICE_COUNT = 1
_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed

_seed = _DEFAULT_SEED
generator = np.random.Generator(np.random.PCG64(_seed))


def is_available():
    return True


def is_initialized():
    return True


# torch.utils.checkpoint saves and restores the RNG state only of a device
# module that says it is initialized.
_initialized = True


def device_count():
    return _DEVICE_COUNT


def current_device():
    return 0


def _check_index(index):
    if not 0 <= index < _DEVICE_COUNT:
        raise RuntimeError(
            f"npy device: invalid device index {index}; the npy backend has {_DEVICE_COUNT} device (index 0)"
        )


def set_device(index):
    _check_index(_index_of(index))


def _index_of(device_like):
    if isinstance(device_like, int):
        return device_like
    index = torch.device(device_like).index
    return 0 if index is None else index


def get_device_name(index=0):
    _check_index(_index_of(index))
    return f"NumPy {np.__version__} (host CPU)"


def _check_device(device):
    if device is not None:
        _check_index(_index_of(device))


def synchronize(device=None):
    """NumPy kernels finish before they return, so there is nothing to wait for."""
    _check_device(device)


def get_amp_supported_dtype():
    """The dtypes ``torch.autocast("npy")`` accepts: NumPy has float16, not bfloat16."""
    return [torch.float16]


def is_bf16_supported(including_emulation=True):
    """False, so that a program choosing ``bfloat16 if is_bf16_supported() else float16``
    picks float16: NumPy has no bfloat16, emulated or not."""
    return False


def _npy_device(device):
    index = 0 if device is None else _index_of(device)
    _check_index(index)
    return torch.device("npy", index)


class Stream(torch.Stream):
    """``torch.npy.Stream()``, as ``torch.cuda.Stream()``: a ``torch.Stream`` on npy.

    PyTorch code written for any accelerator (FSDP, FSDP2's collectives)
    makes its streams through the device module. Every npy stream is the
    default one: a kernel has finished when it returns, so there is no
    queue to order.
    """

    def __new__(cls, device=None, priority=0):
        return super().__new__(cls, _npy_device(device), priority=priority)


class Event(torch.Event):
    """``torch.npy.Event()``, as ``torch.cuda.Event()``: a ``torch.Event`` on npy."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        return super().__new__(
            cls, _npy_device(None), enable_timing=enable_timing, blocking=blocking, interprocess=interprocess
        )


def current_stream(device=None):
    return torch.accelerator.current_stream(_npy_device(device))


# The one npy stream is both the current and the default one.
default_stream = current_stream


def set_stream(stream):
    torch.accelerator.set_stream(stream)


def stream(stream):
    """``with torch.npy.stream(s):`` makes ``s`` current in the block, as ``torch.cuda.stream``
    does; ``None`` changes nothing."""
    return contextlib.nullcontext() if stream is None else stream


def memory_allocated(device=None):
    """Bytes held by live npy storages (see :mod:`backend_pkg.memory`)."""
    _check_device(device)
    return memory.allocated()


def max_memory_allocated(device=None):
    """The most bytes npy storages held at once since counting started or the last reset."""
    _check_device(device)
    return memory.peak()


def reset_peak_memory_stats(device=None):
    _check_device(device)
    memory.reset_peak()


def memory_stats(device=None):
    _check_device(device)
    return memory.stats()


# npy caches no memory: what it holds is what tensors use.
memory_reserved = memory_allocated
max_memory_reserved = max_memory_allocated


def empty_cache():
    """Nothing to release: npy frees a tensor's memory when the tensor goes."""


def _is_in_bad_fork():
    return False


def manual_seed(seed):
    """Seed the npy random generator (what ``torch.manual_seed`` calls)."""
    global _seed, generator
    _seed = int(seed) & 0xFFFF_FFFF_FFFF_FFFF
    generator = np.random.Generator(np.random.PCG64(_seed))


manual_seed_all = manual_seed


def seed():
    """Seed the npy random generator from fresh entropy; returns the seed."""
    manual_seed(np.random.SeedSequence().entropy)
    return _seed


def initial_seed():
    return _seed


# The generator's state as bytes: its seed, then PCG64's 128-bit state and
# increment and its buffered 32-bit half-draw, little-endian.
_STATE_FIELDS = (("seed", 8), ("state", 16), ("inc", 16), ("has_uint32", 4), ("uinteger", 4))
_STATE_BYTES = sum(size for _, size in _STATE_FIELDS)


def get_rng_state(device=None):
    """The npy generator's state, as a CPU ``uint8`` tensor (as ``torch.cuda.get_rng_state``)."""
    _check_device(device)
    pcg = generator.bit_generator.state
    values = {"seed": _seed, **pcg["state"], "has_uint32": pcg["has_uint32"], "uinteger": pcg["uinteger"]}
    packed = b"".join(values[name].to_bytes(size, "little") for name, size in _STATE_FIELDS)
    return torch.frombuffer(bytearray(packed), dtype=torch.uint8)


def set_rng_state(new_state, device=None):
    """Restore a state :func:`get_rng_state` returned."""
    global _seed
    _check_device(device)
    packed = bytes(new_state.cpu().numpy())
    if len(packed) != _STATE_BYTES:
        raise RuntimeError(f"npy device: an RNG state has {_STATE_BYTES} bytes, got {len(packed)}")
    values, start = {}, 0
    for name, size in _STATE_FIELDS:
        values[name] = int.from_bytes(packed[start : start + size], "little")
        start += size
    _seed = values["seed"]
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": values["state"], "inc": values["inc"]},
        "has_uint32": values["has_uint32"],
        "uinteger": values["uinteger"],
    }


def get_rng_state_all():
    return [get_rng_state()]


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


class device:
    """``torch.npy.device(index)``: a context that makes ``index`` current; there is one npy device."""

    def __init__(self, index):
        self.index = _index_of(index) if index is not None else 0
        _check_index(self.index)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


# What Inductor asks the device module for, the first time it compiles a graph
# (``init_backend_registration`` in torch/_inductor/codegen/common.py).
_INDUCTOR_CODEGEN = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen", "WrapperFxCodegen")


def __getattr__(name):
    """Inductor's code generation for npy, imported when Inductor first asks for it."""
    if name in _INDUCTOR_CODEGEN:
        from .compiler import inductor

        return getattr(inductor, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
