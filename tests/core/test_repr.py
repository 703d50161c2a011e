"""An npy tensor prints as the same CPU tensor does, with its device."""

import re

import pytest
import torch
from reference import DTYPES, make


def normalized(text):
    return re.sub(r"\s+", " ", text)


CASES = {
    "matrix": lambda: make((3, 4), torch.float32),
    "scalar": lambda: torch.tensor(3.5),
    "empty": lambda: torch.zeros(0, 3),
    "large, summarized": lambda: torch.linspace(-5, 5, 5000),
    "wide values": lambda: torch.tensor([1e10, 1.5, -3e-5]),
    "non-contiguous": lambda: make((4, 5), torch.float64).t()[::2],
    **{str(dtype): (lambda dtype=dtype: make((2, 3), dtype)) for dtype in DTYPES},
}


@pytest.mark.parametrize("name", CASES)
def test_repr_matches_cpu_plus_device(name):
    cpu = CASES[name]()
    text = repr(cpu.to("npy"))
    assert text.startswith("tensor(")
    assert "device='npy:0'" in text
    assert normalized(text).replace(", device='npy:0'", "") == normalized(repr(cpu))


def test_repr_shows_autograd_state():
    leaf = torch.ones(2, device="npy", requires_grad=True)
    assert "requires_grad=True" in repr(leaf)
    assert "grad_fn=<MulBackward0>" in repr(leaf * 2)
    assert str(leaf) == repr(leaf)
