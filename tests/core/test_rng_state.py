"""The npy generator's state, saved and restored anywhere in a stream, as the CPU generator's.

A state saved right after ``torch.manual_seed`` replays even when restoring it only reseeds;
these save it mid-stream, after draws of other distributions (an odd number of small integers
leaves half of a 64-bit draw buffered in NumPy's generator), then check what the CPU generator
does under the same steps: the draws after a restore repeat those after the save, the saved
state is a copy, and the seed comes back with the state.
"""

import pytest
import torch

DRAWS = {
    "rand": lambda device: torch.rand(5, device=device),
    "randn float16": lambda device: torch.randn(5, dtype=torch.float16, device=device),
    "randn complex64": lambda device: torch.randn(3, dtype=torch.complex64, device=device),
    "randint": lambda device: torch.randint(0, 10, (5,), device=device),
    "randint wide": lambda device: torch.randint(0, 2**40, (3,), device=device),
    "normal_": lambda device: torch.empty(5, device=device).normal_(2.0, 3.0),
    "uniform_": lambda device: torch.empty(5, dtype=torch.float64, device=device).uniform_(-1.0, 1.0),
    "random_": lambda device: torch.empty(5, dtype=torch.int32, device=device).random_(0, 100),
    "bernoulli": lambda device: torch.bernoulli(torch.full((7,), 0.5, device=device)),
    "dropout": lambda device: torch.nn.functional.dropout(torch.ones(7, device=device), 0.5),
    "multinomial": lambda device: torch.multinomial(torch.ones(6, device=device), 3),
}

# Draws before the state is saved: none (right after a seed), and mid-stream, of other kinds.
PREFIXES = {
    "after the seed": [],
    "after an odd number of small integers": ["randint"],
    "after several kinds": ["rand", "randint", "bernoulli", "randint"],
}


def get_state(device):
    return torch.get_rng_state() if device == "cpu" else torch.npy.get_rng_state()


def set_state(device, state):
    if device == "cpu":
        torch.set_rng_state(state)
    else:
        torch.npy.set_rng_state(state)


def initial_seed(device):
    return torch.initial_seed() if device == "cpu" else torch.npy.initial_seed()


def seeded(prefix, device, seed=3):
    torch.manual_seed(seed)
    for name in prefix:
        DRAWS[name](device)


def replays(draw, prefix, device):
    """Whether the two draws after a state saved after ``prefix`` repeat once it is restored,
    and whether the second draw differs from the first (the stream moved on)."""
    seeded(prefix, device)
    state = get_state(device)
    first, second = draw(device).cpu(), draw(device).cpu()
    DRAWS["randint"](device)  # the stream moves on before the restore
    set_state(device, state)
    again = draw(device).cpu(), draw(device).cpu()
    return torch.equal(again[0], first) and torch.equal(again[1], second), not torch.equal(first, second)


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=PREFIXES.keys())
@pytest.mark.parametrize("draw", DRAWS.values(), ids=DRAWS.keys())
def test_a_restored_state_replays_the_draws_after_it_like_cpu(draw, prefix):
    assert replays(draw, prefix, "npy") == replays(draw, prefix, "cpu") == (True, True)


@pytest.mark.parametrize("prefix", list(PREFIXES.values())[1:], ids=list(PREFIXES)[1:])
def test_a_state_saved_mid_stream_is_not_the_seeds(prefix):
    """What makes the replay above mean something: a restore that reseeded would differ here."""
    for device in ("npy", "cpu"):
        seeded(prefix, device)
        mid_stream = DRAWS["rand"](device).cpu()
        seeded([], device)
        assert not torch.equal(DRAWS["rand"](device).cpu(), mid_stream)


@pytest.mark.parametrize("device", ["npy", "cpu"])
def test_the_saved_state_is_a_copy_and_restoring_it_twice_replays_twice(device):
    seeded(PREFIXES["after several kinds"], device)
    state = get_state(device)
    kept = state.clone()
    first = DRAWS["randint"](device).cpu()
    assert torch.equal(state, kept), "drawing changed a saved state"
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    for _ in range(2):
        set_state(device, state)
        assert torch.equal(DRAWS["randint"](device).cpu(), first)
    assert torch.equal(get_state(device), get_state(device))


def test_a_restore_brings_back_the_seed_and_the_stream_after_a_new_seed_like_cpu():
    results = {}
    for device in ("npy", "cpu"):
        seeded(PREFIXES["after several kinds"], device, seed=11)
        state = get_state(device)
        first = DRAWS["rand"](device).cpu()
        torch.manual_seed(12)
        DRAWS["rand"](device)
        set_state(device, state)
        results[device] = (initial_seed(device), torch.equal(DRAWS["rand"](device).cpu(), first))
    assert results["npy"] == results["cpu"] == (11, True)


def test_fork_rng_mid_stream_leaves_the_outer_stream_as_it_was_like_cpu():
    for device in ("npy", "cpu"):
        seeded(PREFIXES["after several kinds"], device)
        unforked = DRAWS["randint"](device).cpu(), DRAWS["rand"](device).cpu()
        seeded(PREFIXES["after several kinds"], device)
        outer = DRAWS["randint"](device).cpu()
        # For the CPU, fork_rng saves the CPU state and, with no devices, nothing else.
        with torch.random.fork_rng(devices=[0] if device == "npy" else [], device_type=device):
            DRAWS["randint"](device)
        assert torch.equal(outer, unforked[0]) and torch.equal(DRAWS["rand"](device).cpu(), unforked[1]), device
