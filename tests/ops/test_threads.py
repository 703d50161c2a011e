"""The kernels' worker threads (``backend_pkg/ops/_threads.py``): results against CPU whatever the
threads, the serial case, callers on several threads, a forked child, and a clean exit."""

import subprocess
import sys
import threading

import pytest
import torch
import torch.nn.functional as F
from reference import assert_backward_like_cpu, make, npy

from backend_pkg.ops import _threads

pytestmark = pytest.mark.usefixtures("strict")

# The depthwise convolutions, whose work is split by the batch: stride 1 (the input's gradient a
# convolution too) and strided (the input's gradient added back). Three threads split 5 samples unevenly.
SPLIT_CASES = {
    "depthwise": (F.conv2d, (5, 4, 7, 6), (4, 1, 3, 3), {"groups": 4, "padding": 1}),
    "depthwise-strided": (F.conv2d, (5, 3, 9, 8), (3, 1, 3, 2), {"groups": 3, "stride": 2, "dilation": (1, 2)}),
    "depthwise-3d": (F.conv3d, (5, 2, 4, 5, 4), (2, 1, 3, 2, 3), {"groups": 2, "padding": (1, 1, 0)}),
}


@pytest.fixture
def threads(monkeypatch, request):
    """``request.param`` threads for PyTorch and the kernels, each of which gets a part of any work."""
    monkeypatch.setattr(_threads, "MIN_ELEMENTS_PER_THREAD", 1)
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2, 3], indirect=True)
@pytest.mark.parametrize("case", SPLIT_CASES)
def test_split_work_matches_cpu(case, threads):
    function, input_shape, weight_shape, kwargs = SPLIT_CASES[case]
    x, weight = make(input_shape, torch.float64, seed=1), make(weight_shape, torch.float64, seed=2)
    assert_backward_like_cpu(lambda x, w: function(x, w, **kwargs), x, weight)


@pytest.mark.parametrize("threads", [1, 2, 3], indirect=True)
def test_parts_cover_the_range_once_the_first_on_the_caller(threads):
    seen, lock = [], threading.Lock()

    def work(part):
        with lock:
            seen.append((part, threading.get_ident()))

    _threads.split_over_threads(work, _threads.parts_of(7, elements=7))
    assert sorted(i for part, _ in seen for i in range(7)[part]) == list(range(7))
    assert len(seen) == threads
    on_caller = [part for part, thread in seen if thread == threading.get_ident()]
    assert on_caller == [slice(0, 7 // threads)]


def test_small_work_stays_on_the_calling_thread():
    assert len(_threads.parts_of(64, elements=_threads.MIN_ELEMENTS_PER_THREAD)) == 1


@pytest.mark.parametrize("threads", [2], indirect=True)
def test_an_error_in_a_part_reaches_the_caller_after_every_part(threads):
    finished = []

    def work(part):
        if part.start:
            raise ValueError("in a worker")
        finished.append(part)

    with pytest.raises(ValueError, match="in a worker"):
        _threads.split_over_threads(work, _threads.parts_of(2, elements=2))
    assert finished == [slice(0, 1)]


@pytest.mark.parametrize("threads", [2], indirect=True)
def test_callers_on_several_threads(threads):
    weight = make((8, 1, 3, 3), torch.float32, seed=2)
    inputs = [make((4, 8, 12, 12), torch.float32, seed=seed) for seed in range(6)]
    results = [None] * len(inputs)

    def convolve(index):
        results[index] = F.conv2d(npy(inputs[index]), npy(weight), groups=8, padding=1).cpu()

    callers = [threading.Thread(target=convolve, args=(index,)) for index in range(len(inputs))]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    for x, result in zip(inputs, results):
        torch.testing.assert_close(result, F.conv2d(x, weight, groups=8, padding=1), atol=1e-4, rtol=1.3e-6)


# A depthwise convolution big enough to be split, forward and backward, in the parent, from an atexit
# function (which runs after concurrent.futures has joined its threads), and in a forked child. The
# child calls the NumPy function itself: PyTorch's own CPU kernels hang in a child forked after they
# ran on OpenMP threads (a libgomp limitation: DataLoader workers set one thread first).
FORK_AND_EXIT = """
import atexit, os, signal
import numpy as np, torch, backend_pkg
import torch.nn.functional as F
from backend_pkg.ops.convolution import convolution

torch.set_num_threads(2)
x = torch.randn(8, 32, 32, 32)
weight = torch.randn(32, 1, 3, 3)
expected = F.conv2d(x, weight, groups=32, padding=1)
arguments = ((1, 1), (1, 1), (1, 1), False, (0, 0), 32)

def check():
    got = F.conv2d(x.to("npy").requires_grad_(), weight.to("npy"), groups=32, padding=1)
    got.sum().backward()
    torch.testing.assert_close(got.detach().cpu(), expected, atol=1e-4, rtol=1.3e-6)

check()
child = os.fork()
if child == 0:
    signal.alarm(20)  # a hung child ends itself
    got = convolution(x.numpy(), weight.numpy(), None, *arguments)
    os._exit(0 if np.allclose(got, expected.numpy(), atol=1e-4, rtol=1.3e-6) else 1)
assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
atexit.register(check)
print("done")
"""


def test_forked_child_and_exit():
    done = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", FORK_AND_EXIT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "done\n", "")
