"""OpInfo samples and error inputs, the same values ``OpInfo.sample_inputs`` and
``OpInfo.error_inputs`` give, without what those two methods cost around them.

Both wrap the OpInfo's generator (``sample_inputs_func``, ``error_inputs_func``)
in ``TrackedInputIter`` (``torch/testing/_internal/common_utils.py``), made for
PyTorch's unittest suites, which costs more than running most samples:

* it looks for the running ``unittest.TestCase`` by crawling the call stack
  with ``inspect.stack()`` (``extract_test_fn``: twice for each call of
  ``sample_inputs``, once for each call of ``error_inputs`` and again for each
  error input), which reads every frame's source lines and looks up its
  module, scanning ``sys.modules``: under pytest, whose stack is deep, about
  0.1 s for each call of ``sample_inputs``;
* before each sample it calls ``torch.manual_seed``, which seeds CUDA's, XPU's
  and MTIA's generators too; on a build without them each seed is queued for
  later with a formatted traceback of the whole stack.

Outside a ``TestCase`` the tracker finds no test and seeds with
``common_utils.SEED``. Here the generator is seeded the same way before each
item: the generators a sample can be drawn from (the CPU's, Python's
``random``, NumPy's) and npy's, the device's own that ``torch.manual_seed``
seeds as well; so every sample has the values ``sample_inputs`` gives it.
"""

import random

import numpy as np
import torch
from torch.testing._internal.common_utils import SEED

import backend_pkg


def sample_inputs(opinfo, device, dtype, requires_grad=False):
    """What ``opinfo.sample_inputs(device, dtype, requires_grad)`` yields, outside a unittest test."""
    return _seeded(opinfo.sample_inputs_func(opinfo, device, dtype, requires_grad))


def error_inputs(opinfo, device):
    """What ``opinfo.error_inputs(device)`` yields, outside a unittest test."""
    return _seeded(opinfo.error_inputs_func(opinfo, device))


def _seeded(items):
    """``items``, every generator reseeded before each is made (the generator function itself
    is called first, unseeded, as ``TrackedInputIter`` receives it)."""
    items = iter(items)
    while True:
        _seed_generators(SEED)
        try:
            item = next(items)
        except StopIteration:
            return
        yield item


def _seed_generators(seed):
    torch.default_generator.manual_seed(seed)
    getattr(torch, backend_pkg.DEVICE_NAME).manual_seed_all(seed)
    random.seed(seed)
    np.random.seed(seed)
