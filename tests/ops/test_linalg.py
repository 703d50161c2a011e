"""Matrix products and vdot (``backend_pkg/ops/linalg.py``): npy against CPU, by the comparisons of
``tests/reference.py``."""

import pytest
import torch
import torch.nn.functional as F
from reference import (
    RecordOps,
    assert_backward_like_cpu,
    assert_like_cpu,
    assert_same_error,
    assert_writes_out_like_cpu,
    exact_data,
    make,
    npy,
)

# --- matrix products ------------------------------------------------------------


def product_operands(dtype):
    """Operands whose products are exact in ``dtype`` (so any summation order agrees)."""
    data = exact_data if dtype == torch.float16 else make
    return {
        "A": data((3, 4), dtype, 1),
        "B": data((4, 5), dtype, 2),
        "C": data((3, 5), dtype, 3),
        "v": data((4,), dtype, 4),
        "w": data((3,), dtype, 5),
        "b1": data((2, 3, 4), dtype, 6),
        "b2": data((2, 4, 5), dtype, 7),
    }


PRODUCTS = {
    "mm": lambda o, al, be: torch.mm(o["A"], o["B"]),
    "addmm": lambda o, al, be: torch.addmm(o["C"], o["A"], o["B"], beta=be, alpha=al),
    "addmm_broadcast_self": lambda o, al, be: torch.addmm(o["C"][0], o["A"], o["B"], beta=be, alpha=al),
    "bmm": lambda o, al, be: torch.bmm(o["b1"], o["b2"]),
    "baddbmm": lambda o, al, be: torch.baddbmm(o["C"], o["b1"], o["b2"], beta=be, alpha=al),
    "addbmm": lambda o, al, be: torch.addbmm(o["C"], o["b1"], o["b2"], beta=be, alpha=al),
    "mv": lambda o, al, be: torch.mv(o["A"], o["v"]),
    "addmv": lambda o, al, be: torch.addmv(o["w"], o["A"], o["v"], beta=be, alpha=al),
    "dot": lambda o, al, be: torch.dot(o["v"], o["v"]),
    "matmul_2d_2d": lambda o, al, be: o["A"] @ o["B"],
    "matmul_1d_2d": lambda o, al, be: o["v"] @ o["B"],
    "matmul_2d_1d": lambda o, al, be: o["A"] @ o["v"],
    "matmul_1d_1d": lambda o, al, be: o["v"] @ o["v"],
    "matmul_3d_2d": lambda o, al, be: o["b1"] @ o["B"],
    "matmul_3d_3d": lambda o, al, be: o["b1"] @ o["b2"],
    "matmul_broadcast": lambda o, al, be: o["A"][None, None] @ o["b2"][:, None],
    "linear_bias": lambda o, al, be: F.linear(o["b1"], o["B"].T, o["C"][0]),
    "linear": lambda o, al, be: F.linear(o["A"], o["B"].T),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_matrix_products(name, dtype):
    operands = product_operands(dtype)
    inexact = dtype.is_floating_point or dtype.is_complex
    alpha, beta = (0.5, -1.5) if inexact else (2, 3)
    assert_like_cpu(lambda *tensors: PRODUCTS[name](dict(zip(operands, tensors)), alpha, beta), *operands.values())


def test_float32_products_of_random_values():
    a, b, c = make((16, 32), torch.float32, 1), make((32, 8), torch.float32, 2), make((8,), torch.float32, 3)
    assert_like_cpu(torch.mm, a, b)
    assert_like_cpu(lambda x, y, z: torch.addmm(z, x, y, beta=0.25, alpha=-2), a, b, c)
    assert_like_cpu(torch.mv, a, b[:, 0])


def test_integer_products_stay_integers_and_wrap_like_cpu():
    a = torch.full((2, 300), 3, dtype=torch.int8)
    assert_like_cpu(lambda x: x @ x.T, a)
    assert_like_cpu(lambda x: torch.addmm(x[:, :2], x, x.T, alpha=7, beta=-1), a)


def test_scalars_convert_to_the_operands_dtype_like_cpu():
    a = make((3, 3), torch.int64)
    assert_like_cpu(lambda t: torch.addmm(t, t, t, beta=0.5, alpha=2.7), a)  # 0 and 2, as in C++
    nan = torch.full((3, 3), float("nan"))
    assert_like_cpu(lambda c, t: torch.addmm(c, t, t, beta=0), nan, a.float())  # beta=0 ignores NaN
    assert_like_cpu(lambda c, t: torch.addmv(c, t, t[0], beta=0), nan[0], a.float())


PRODUCT_ERRORS = [
    (lambda t: torch.mm(t, t), "mat1 and mat2 shapes cannot be multiplied \\(2x3 and 2x3\\)"),
    (lambda t: torch.mm(t, t[0]), "mat2 must be a matrix"),
    (lambda t: torch.mm(t, t.T.double()), "expected m1 and m2 to have the same dtype"),
    (lambda t: torch.mm(t.bool(), t.T.bool()), "not implemented for 'Bool'"),
    (lambda t: torch.addmm(t[:, :2].double(), t, t.T), "self and mat2 must have the same dtype"),
    (lambda t: torch.addmm(t[:, :2], t[0], t.T), "mat1 must be a matrix, got 1-D tensor"),
    (lambda t: torch.addmm(t[0], t, t.T), "The expanded size of the tensor \\(2\\) must match"),
    (lambda t: torch.addmm(t[:, :2], t, t.T, alpha=1j), "value cannot be converted to type"),
    (lambda t: torch.bmm(t, t.T), "batch1 must be a 3D tensor"),
    (lambda t: torch.bmm(t[None].expand(2, 2, 3), t.T[None]), "Expected size for first two dimensions of batch2"),
    (lambda t: torch.bmm(t[None], t.T[None].double()), "expected scalar type Float but found Double"),
    (lambda t: torch.baddbmm(t[None, :, :2].double(), t[None], t.T[None]), "Input dtypes must be the same"),
    (lambda t: torch.baddbmm(t[None, :, :2], t[None], t[None]), "The expanded size of the tensor"),
    (lambda t: torch.addbmm(t[:, :2], t[None], t.T[None].expand(2, 3, 2)), "must have same number of batches"),
    (lambda t: torch.addbmm(t, t[None], t[None]), "Incompatible matrix sizes for bmm \\(2x3 and 2x3\\)"),
    (lambda t: torch.mv(t[0], t[0]), "vector \\+ matrix @ vector expected, got 1, 1, 1"),
    (lambda t: torch.mv(t, t[0, :2]), "size mismatch, got input \\(2\\), mat \\(2x3\\), vec \\(2\\)"),
    (lambda t: torch.mv(t, t[0].long()), "addmv input tensors must have the same dtype"),
    (lambda t: torch.addmv(t[0], t, t[0]), "size mismatch, got input \\(3\\)"),
    (lambda t: torch.dot(t, t[0]), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda t: torch.dot(t[0], t[1].double()), "expected both vectors to have same dtype"),
    (lambda t: torch.dot(t[0], t[1, :2]), "inconsistent tensor size"),
    (lambda t: torch.dot(t[0].bool(), t[1].bool()), "not implemented for 'Bool'"),
]


@pytest.mark.parametrize("fn, match", PRODUCT_ERRORS, ids=[m for _, m in PRODUCT_ERRORS])
def test_product_errors_match_cpu(fn, match):
    assert_same_error(fn, make((2, 3), torch.float32), match=match)


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.float32, torch.float64, torch.complex64, torch.complex128, torch.int64]
)
def test_vdot_conjugates_its_first_argument_like_cpu(dtype):
    a, b = make((5,), dtype, 1), make((5,), dtype, 2)
    assert_like_cpu(torch.vdot, a, b)
    assert_like_cpu(lambda x, y: torch.vdot(x, y, out=torch.empty((), dtype=dtype, device=x.device)), a, b)


VDOT_ERRORS = [
    (lambda t: torch.vdot(t, t[:3]), "inconsistent tensor size"),
    (lambda t: torch.vdot(t, t.double()), "dot : expected both vectors to have same dtype"),
    (lambda t: torch.vdot(t.reshape(2, 2), t), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda t: torch.vdot(t.bool(), t.bool()), "not implemented for 'Bool'"),
]


@pytest.mark.usefixtures("strict")  # native kernels: no CPU fallback
@pytest.mark.parametrize("fn, match", VDOT_ERRORS, ids=[m for _, m in VDOT_ERRORS])
def test_vdot_errors_match_cpu(fn, match):
    assert_same_error(fn, make((4,), torch.float32), match=match)
    assert_like_cpu(fn, make((4,), torch.float32))


# --- linear, computed whole (backend_pkg/ops/linalg.py, _Linear) -----------------

LINEAR_CALLS = {
    "matrix": ((5, 4), (3, 4), (3,)),
    "batch_of_sequences": ((2, 5, 4), (3, 4), (3,)),
    "vector": ((4,), (3, 4), (3,)),
    "no_bias": ((2, 5, 4), (3, 4), None),
    # Left to PyTorch's composite: a bias that only broadcasts, and bad shapes (its errors).
    "broadcast_bias": ((5, 4), (3, 4), (1,)),
    "features_mismatch": ((5, 4), (3, 5), (3,)),
    "weight_3d": ((5, 4), (2, 3, 4), (3,)),
}


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("case", LINEAR_CALLS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_linear_like_cpu(case, dtype):
    shapes = LINEAR_CALLS[case]
    tensors = [None if shape is None else make(shape, dtype, seed=index) for index, shape in enumerate(shapes)]
    assert_backward_like_cpu(F.linear, *tensors)


@pytest.mark.usefixtures("strict")
def test_linear_with_nothing_to_record_like_cpu():
    """Under no_grad, or with no input that needs a gradient, the forward runs without autograd.Function."""
    x, weight = make((2, 5, 4), torch.float32), make((3, 4), torch.float32, seed=1)
    bias = make((3,), torch.float32, seed=2)
    assert_like_cpu(F.linear, x, weight, bias)
    leaf = npy(weight).requires_grad_()
    with torch.no_grad():
        result = F.linear(npy(x), leaf, npy(bias))
    assert not result.requires_grad and result.grad_fn is None
    torch.testing.assert_close(result.cpu(), F.linear(x, weight, bias))


@pytest.mark.usefixtures("strict")
def test_linear_of_a_transposed_input_and_of_mixed_dtypes_like_cpu():
    x, weight = make((4, 5), torch.float64), make((3, 4), torch.float64, seed=1)
    assert_backward_like_cpu(lambda x, w: F.linear(x.T, w), x, weight)
    assert_backward_like_cpu(lambda x, w: F.linear(x.T, w.float()), x, weight)


@pytest.mark.usefixtures("strict")
def test_linear_runs_no_aten_op():
    """Forward and backward are one NumPy call each: no aten op runs for them (autograd's detach
    unpacks what the forward saved)."""
    x, weight, bias = (
        npy(make(shape, torch.float32, seed=i)).requires_grad_() for i, shape in enumerate(((2, 5, 4), (3, 4), (3,)))
    )
    seed = npy(make((2, 5, 3), torch.float32))
    with RecordOps() as forward:
        output = F.linear(x, weight, bias)
    with RecordOps() as backward:
        output.backward(seed)
    assert forward.ops == set() and backward.ops <= {torch.ops.aten.detach.default}, (forward.ops, backward.ops)


@pytest.mark.usefixtures("strict")
def test_linear_double_backward():
    """Under create_graph the backward is the composite's, so a second derivative exists and is CPU's."""

    def second_gradients(device):
        x, weight, bias = (
            make(shape, torch.float64, seed=i).to(device).requires_grad_()
            for i, shape in enumerate(((5, 4), (3, 4), (3,)))
        )
        output = F.linear(x, weight, bias)
        grads = torch.autograd.grad((output * output).sum(), (x, weight, bias), create_graph=True)
        return torch.autograd.grad(sum((g * g).sum() for g in grads), (x, weight, bias))

    for got, want in zip(second_gradients("npy"), second_gradients("cpu")):
        torch.testing.assert_close(got.cpu(), want)


# out= overloads by name, each writing into the float32 `out` it is given
OUT_VARIANTS = {
    "mm": lambda t, out: torch.mm(t, t.T, out=out),
    "addmm": lambda t, out: torch.addmm(t[0, :1], t, t.T, alpha=2, out=out),
    "bmm": lambda t, out: torch.bmm(t[None], t.T[None], out=out),
    "baddbmm": lambda t, out: torch.baddbmm(t[:1, :1], t[None], t.T[None], beta=0.5, out=out),
    "addbmm": lambda t, out: torch.addbmm(t[:1, :1], t[None], t.T[None], out=out),
    "mv": lambda t, out: torch.mv(t, t[0], out=out),
    "addmv": lambda t, out: torch.addmv(t[:, 0], t.T, t[:, 1], out=out),
    "dot": lambda t, out: torch.dot(t[0], t[1], out=out),
}


@pytest.mark.parametrize("name", OUT_VARIANTS)
def test_out_variants_write_into_out(name):
    assert_writes_out_like_cpu(OUT_VARIANTS[name], exact_data((3, 3), torch.float32, 1))
