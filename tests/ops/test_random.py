"""Random ops on npy: seeded through torch.manual_seed, with the right distributions and dtypes."""

import pytest
import torch
from reference import assert_like_cpu

DRAWS = {
    "rand": lambda: torch.rand(2000, device="npy"),
    "randn": lambda: torch.randn(2000, device="npy", dtype=torch.float64),
    "randint": lambda: torch.randint(-3, 7, (2000,), device="npy"),
    "normal_": lambda: torch.empty(2000, device="npy").normal_(5.0, 2.0),
    "uniform_": lambda: torch.empty(2000, device="npy", dtype=torch.float16).uniform_(-2, 2),
    "bernoulli": lambda: torch.bernoulli(torch.full((2000,), 0.25, device="npy")),
    "dropout": lambda: torch.nn.functional.dropout(torch.ones(2000, device="npy"), 0.4),
    "multinomial": lambda: torch.multinomial(torch.ones(500, 4, device="npy"), 3),
}


@pytest.mark.parametrize("name", DRAWS)
def test_manual_seed_makes_draws_reproducible(name):
    torch.manual_seed(1234)
    first = DRAWS[name]().cpu()
    torch.manual_seed(1234)
    again = DRAWS[name]().cpu()
    torch.manual_seed(4321)
    other = DRAWS[name]().cpu()
    assert torch.equal(first, again)
    assert not torch.equal(first, other)


def test_distributions_and_dtypes():
    torch.manual_seed(0)
    uniform = torch.rand(20000, device="npy").cpu()
    assert uniform.dtype == torch.float32 and 0 <= uniform.min() and uniform.max() < 1
    assert abs(uniform.mean().item() - 0.5) < 0.01
    normal = torch.empty(20000, device="npy").normal_(5.0, 2.0).cpu()
    assert abs(normal.mean().item() - 5.0) < 0.05 and abs(normal.std().item() - 2.0) < 0.05
    integers = torch.randint(-3, 7, (20000,), device="npy").cpu()
    assert integers.dtype == torch.int64 and set(integers.unique().tolist()) == set(range(-3, 7))
    coins = torch.bernoulli(torch.full((20000,), 0.25, device="npy")).cpu()
    assert abs(coins.mean().item() - 0.25) < 0.01


def test_dropout_scales_kept_elements_and_backward_uses_the_same_mask():
    torch.manual_seed(0)
    x = torch.ones(10000, device="npy", requires_grad=True)
    y = torch.nn.functional.dropout(x, 0.4)
    kept = y.cpu() != 0
    torch.testing.assert_close(y.cpu()[kept], torch.full((int(kept.sum()),), 1 / 0.6))
    assert abs(kept.float().mean().item() - 0.6) < 0.02
    y.sum().backward()
    torch.testing.assert_close(x.grad.cpu(), y.detach().cpu())
    assert torch.equal(torch.nn.functional.dropout(x, 0.4, training=False).cpu(), x.detach().cpu())


@pytest.mark.parametrize(
    "bad, message",
    [
        (lambda: torch.empty(3, device="npy").normal_(0, -1), "std >= 0.0"),
        (lambda: torch.empty(3, device="npy").uniform_(2, 1), "from=2 > to=1"),
        (lambda: torch.rand(3, device="npy", generator=torch.Generator()), "torch.npy's generator"),
    ],
)
def test_bad_arguments_are_refused_by_name(bad, message):
    with pytest.raises(RuntimeError, match=message):
        bad()


@pytest.mark.parametrize("fill", [torch.Tensor.normal_, torch.Tensor.uniform_], ids=["normal_", "uniform_"])
def test_integer_tensors_are_refused_like_cpu(fill):
    assert_like_cpu(fill, torch.zeros(3, dtype=torch.int32))


def test_complex_tensors_draw_each_part_as_cpu_does():
    """CPU fills a complex tensor's view_as_real: normal_ gives each part half the variance."""
    torch.manual_seed(0)
    normal = torch.empty(20000, device="npy", dtype=torch.complex64).normal_(1.0, 2.0).cpu()
    assert normal.dtype == torch.complex64
    for part in (normal.real, normal.imag):
        assert abs(part.mean().item() - 1.0) < 0.05 and abs(part.std().item() - 2.0 / 2**0.5) < 0.05
    uniform = torch.empty(20000, device="npy", dtype=torch.complex128).uniform_(2, 3).cpu()
    for part in (uniform.real, uniform.imag):
        assert 2 <= part.min() and part.max() < 3 and abs(part.mean().item() - 2.5) < 0.01


# --- multinomial ----------------------------------------------------------------------------

PROBABILITIES = torch.tensor([0.1, 0.0, 0.6, 0.3])


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("samples, replacement", [(1, False), (1, True), (2, True)])
def test_multinomial_draws_each_category_as_often_as_its_probability(samples, replacement):
    torch.manual_seed(0)
    rows = (PROBABILITIES * 7).expand(20000, 4).to("npy")  # unnormalized, as PyTorch takes them
    drawn = torch.multinomial(rows, samples, replacement=replacement).cpu()
    assert drawn.dtype == torch.int64 and drawn.shape == (20000, samples)
    frequencies = torch.bincount(drawn.flatten(), minlength=4) / drawn.numel()
    torch.testing.assert_close(frequencies, PROBABILITIES, rtol=0, atol=0.015)


@pytest.mark.usefixtures("strict")
def test_multinomial_without_replacement_draws_each_category_once_zero_probabilities_last():
    torch.manual_seed(0)
    drawn = torch.multinomial(PROBABILITIES.expand(1000, 4).to("npy"), 4).cpu()
    assert torch.equal(drawn.sort(1).values, torch.arange(4).expand(1000, 4))
    assert (drawn[:, 3] == 1).all()  # the category of probability 0 comes after every other
    first = torch.bincount(drawn[:, 0], minlength=4) / 1000
    torch.testing.assert_close(first, PROBABILITIES, rtol=0, atol=0.05)


MULTINOMIAL_CASES = {
    "one row": lambda p: torch.multinomial(p[0], 2),
    "transposed rows": lambda p: torch.multinomial(p.t(), 1),
    "no rows": lambda p: torch.multinomial(p[:0], 2),
    "half": lambda p: torch.multinomial(p.half(), 2, replacement=True),
    "out=": lambda p: torch.multinomial(p, 2, out=torch.empty(0, dtype=torch.int64, device=p.device)),
    "0-dim": lambda p: torch.multinomial(p[0, 0], 1),
    "3-dim": lambda p: torch.multinomial(p[None], 1),
    "integers": lambda p: torch.multinomial(p.long(), 1),
    "no samples": lambda p: torch.multinomial(p, 0),
    "more samples than categories": lambda p: torch.multinomial(p, 4),
    "negative": lambda p: torch.multinomial(-p, 1),
    "nan": lambda p: torch.multinomial(p * float("nan"), 1),
    "zero sum": lambda p: torch.multinomial(p * 0, 1),
    "negative, with replacement": lambda p: torch.multinomial(-p, 2, replacement=True),
    "nan, with replacement": lambda p: torch.multinomial(p * float("nan"), 2, replacement=True),
    "inf, with replacement": lambda p: torch.multinomial(p * float("inf"), 2, replacement=True),
    "zero sum, with replacement": lambda p: torch.multinomial(p * 0, 2, replacement=True),
    "float out=": lambda p: torch.multinomial(p, 2, out=torch.empty(0, device=p.device)),
    "2^24 + 1 categories": lambda p: torch.multinomial(p.new_ones(2**24 + 1), 1),
}


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("case", MULTINOMIAL_CASES)
def test_multinomial_shapes_and_errors_like_cpu(case):
    """The draws differ from the CPU's (another generator); shape, dtype, strides and errors do not."""
    p = torch.tensor([[0.1, 0.0, 0.9], [0.5, 0.5, 0.0]])
    try:
        want = MULTINOMIAL_CASES[case](p)
    except RuntimeError as cpu_error:
        with pytest.raises(RuntimeError) as npy_error:
            MULTINOMIAL_CASES[case](p.to("npy"))
        assert str(npy_error.value) == str(cpu_error)
        return
    got = MULTINOMIAL_CASES[case](p.to("npy"))
    assert (got.device.type, got.dtype, got.shape, got.stride()) == ("npy", want.dtype, want.shape, want.stride())
