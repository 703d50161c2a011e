"""npy storages: their copies, slices and pickles, and ``Tensor.data``.

PyTorch copies a storage with ``type(storage)(nbytes, device=...)``, which
allocates through the device's C++ allocator; a Python backend has none,
and the process dies with a segfault. The storages npy makes copy
themselves in NumPy memory (:mod:`backend_pkg.storage`). Calls that crashed
run in a new interpreter; the constructors PyTorch runs before any npy code
still crash, which the Parameters and storages page states.
"""

import io
import json
import pickle
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

from backend_pkg.storage import NpyStorage
from backend_pkg.tensor import NpyTensor


def run_fresh(code):
    """Run ``code`` in a new interpreter with npy set up; returns the finished process."""
    program = "import copy, json, torch, backend_pkg\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=240)


# Each copy is made from a fresh result (a storage without its data pointer yet, see
# backend_pkg.tensor.materialized), then zeroed: the original must keep its bytes.
COPIES = """
import warnings
from backend_pkg.tensor import _storage_as_is
warnings.simplefilter("ignore")  # TypedStorage is deprecated

def fresh():
    return torch.arange(3.0, device="npy") + 1

def untyped(storage):
    return storage.untyped() if isinstance(storage, torch.TypedStorage) else storage

COPIES = {
    "Tensor.data deepcopy": lambda x: copy.deepcopy(x.data).untyped_storage(),
    "UntypedStorage.clone": lambda x: x.untyped_storage().clone(),
    "copy.copy": lambda x: copy.copy(x.untyped_storage()),
    "copy.deepcopy": lambda x: copy.deepcopy(x.untyped_storage()),
    "TypedStorage.clone": lambda x: x.storage().clone(),
    "TypedStorage deepcopy": lambda x: copy.deepcopy(x.storage()),
    "TypedStorage.float": lambda x: x.storage().float(),
    "to npy": lambda x: x.untyped_storage().to(device="npy"),
    "clone of a clone": lambda x: x.untyped_storage().clone().clone(),
    "copy of a TypedStorage copy": lambda x: copy.copy(x.storage().clone()),
    "without data pointer": lambda x: _storage_as_is(x).clone(),
}
results = {}
for name, make_copy in COPIES.items():
    x = fresh()
    copied = untyped(make_copy(x))
    results[name] = [str(copied.device), copied.tolist()]
    copied.fill_(0)
    results[name].append(x.untyped_storage().tolist())
empty = torch.empty(0, device="npy").untyped_storage()
results["empty"] = [str(empty.clone().device), copy.deepcopy(empty).tolist(), empty.tolist()]
try:
    copy.deepcopy(torch._C.TensorBase.data.__get__(fresh()))
except RuntimeError as error:
    results["plain Tensor deepcopy"] = str(error)
print(json.dumps(results))
"""


def test_storage_copies_are_new_npy_memory_with_the_same_bytes():
    done = run_fresh(COPIES)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    expected = (torch.arange(3.0) + 1).untyped_storage().tolist()
    assert results.pop("empty") == ["npy:0", [], []]
    # Tensor.__deepcopy__ of a plain-class tensor copies the storage, then refuses the
    # NpyTensor that new_empty returns: PyTorch's error, not a crash.
    assert "only works for subclass types that implement new_empty()" in results.pop("plain Tensor deepcopy")
    for name, (device, copied, original_after) in results.items():
        assert device == "npy:0", name
        torch.testing.assert_close(torch.tensor(copied, dtype=torch.uint8), torch.tensor(expected, dtype=torch.uint8))
        assert original_after == expected, name


BLOCKED = {
    "UntypedStorage": 'torch.UntypedStorage(12, device="npy")',
    "UntypedStorage.to": 'torch.UntypedStorage(12).to(device="npy")',
    "TypedStorage": 'torch.TypedStorage(3, dtype=torch.float32, device="npy")',
}


@pytest.mark.parametrize("call", BLOCKED.values(), ids=BLOCKED.keys())
def test_storages_pytorch_allocates_for_npy_crash(call):
    """PyTorch allocates them through the device's C++ allocator, null for a Python backend,
    before npy code runs (the Parameters and storages page). When PyTorch refuses them instead, this fails."""
    done = run_fresh(call)
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-3000:])


def test_every_npy_storage_is_an_npy_storage_even_before_its_data_pointer():
    x = torch.arange(3.0, device="npy") + 1
    before = torch.Tensor.untyped_storage(x)
    assert type(before) is NpyStorage and torch.UntypedStorage.nbytes(before) == 0  # no pointer yet
    assert before.nbytes() == 12 and before.data_ptr() != 0  # asked from Python, it gets its pointer in place
    assert x.untyped_storage() is before
    assert type(torch.ones(2, device="npy")[1:].untyped_storage()) is NpyStorage
    assert type(torch.empty(0, device="npy").untyped_storage()) is NpyStorage


def test_a_storage_moved_to_its_own_device_is_itself():
    storage = torch.ones(2, device="npy").untyped_storage()
    assert storage.to(device="npy:0") is storage
    cpu = storage.to(device="cpu")
    assert type(cpu) is torch.UntypedStorage and cpu.tolist() == storage.tolist()
    with pytest.raises(RuntimeError, match="^npy device: invalid device index 1; the npy backend has 1 device"):
        storage.to(device="npy:1")


def test_a_storage_slice_shares_the_memory_as_on_cpu():
    for device in ("cpu", "npy"):
        tensor = torch.arange(4.0, device=device)
        part = tensor.untyped_storage()[4:12]
        assert part.tolist() == torch.arange(1.0, 3.0).untyped_storage().tolist()
        over = torch.empty(0, device=device).set_(part)
        assert over.tolist() == [1.0, 2.0]
        part.fill_(0)
        assert tensor.tolist() == [0.0, 0.0, 0.0, 3.0], device
    assert type(part) is NpyStorage and type(over) is NpyTensor


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_pickled_storage_loads_as_torch_load_gives_it():
    """Pickled in the zipfile format, which ``torch.load`` gives back as a TypedStorage of bytes,
    as for a CPU storage. (A CPU ``UntypedStorage`` does not unpickle in PyTorch 2.13: the legacy
    format's loader asks it for a ``dtype``.)"""
    storage = torch.arange(3.0, device="npy").untyped_storage()
    loaded = pickle.loads(pickle.dumps(storage))
    buffer = io.BytesIO()
    torch.save(torch.arange(3.0).untyped_storage(), buffer)
    buffer.seek(0)
    on_cpu = torch.load(buffer)
    assert type(loaded) is type(on_cpu) and loaded.dtype == on_cpu.dtype
    assert loaded.device == storage.device and loaded.tolist() == on_cpu.tolist()
    assert type(loaded.untyped()) is NpyStorage
    buffer = io.BytesIO()
    torch.save(storage, buffer)  # through pickle: torch.save knows a storage by its exact class
    buffer.seek(0)
    assert torch.load(buffer, weights_only=False).tolist() == on_cpu.tolist()


def test_new_shared_storage_is_on_the_device_asked():
    made = NpyStorage._new_shared(8, device="npy")
    assert type(made) is NpyStorage and made.device == torch.device("npy:0") and made.nbytes() == 8
    on_cpu = NpyStorage._new_shared(8)
    assert type(on_cpu) is torch.UntypedStorage and on_cpu.device.type == "cpu"


def test_memory_counting_starts_with_clones_and_slices_alive_each_root_once():
    done = run_fresh(
        """
        kept = torch.ones(250, device="npy")
        copied = kept.untyped_storage().clone()
        part = kept.untyped_storage()[:100]
        print(torch.npy.memory_allocated())
        """
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2000"]


@pytest.mark.parametrize("device", ["cpu", "npy"])
def test_data_shares_memory_without_history_or_version(device):
    parameter = torch.nn.Parameter(torch.arange(3.0, device=device))
    data = parameter.data
    assert type(data) is (torch.Tensor if device == "cpu" else NpyTensor)
    assert not data.requires_grad and data.grad_fn is None and not isinstance(data, torch.nn.Parameter)
    assert data.data_ptr() == parameter.data_ptr()
    version = parameter._version
    data.add_(1)
    assert parameter._version == version
    assert torch.equal(parameter.detach().cpu(), torch.arange(1.0, 4.0))


def test_a_dtype_view_of_a_fresh_result_has_its_data_pointer():
    """``view(dtype)`` reaches Python as a plain ``torch.Tensor``, whose ``data_ptr()`` never asks npy;
    a fresh result's storage gets its pointer only when asked, so the view must have asked."""
    fresh = torch.arange(4.0, device="npy") + 1
    as_bits = fresh.view(torch.int32)
    assert type(as_bits) is torch.Tensor
    assert as_bits.data_ptr() != 0
    assert as_bits.data_ptr() == fresh.data_ptr()
    torch.testing.assert_close(as_bits.cpu(), (torch.arange(4.0) + 1).view(torch.int32))
