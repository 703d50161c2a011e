"""What npy is known to do differently from the CPU on PyTorch's OpInfo data, and why.

The style is PyTorch's own ``xfail``/``skip`` lists (``skipOps`` in
``torch/testing/_internal/common_device_type.py``), with one reason for each
entry, because the Op coverage page shows it:

* :data:`ERROR_INPUTS`: error inputs (``OpInfo.error_inputs``, see
  ``tools/error_inputs.py``) the CPU answers as PyTorch expects and npy does
  not, by case name ``"opinfo[index]"``;
* :data:`SAMPLES`: OpInfo samples whose npy result differs from the CPU's
  (see ``tools/op_coverage.py``), by ``(OpInfo full name, dtype)``: the
  entry covers every sample of that OpInfo and dtype;
* :data:`RANDOM_SAMPLES`: samples that draw random numbers, recognised by
  their arguments, which are run but not compared (the numbers come from
  npy's generator, not the CPU's);
* :data:`GRADCHECK`: OpInfos whose float64 samples fail
  ``torch.autograd.gradcheck`` on npy and pass it on the CPU (see
  ``tools/gradcheck_all.py``), by OpInfo full name.

``tests/tools/test_error_inputs.py``, ``tests/tools/test_opinfo.py`` and
``tests/tools/test_gradcheck.py`` fail on a difference missing here, and on an
entry that no longer fails: fix the kernel, then delete the entry.
"""

import torch

# Reasons shared by several entries.
NUMPY_MAX_DIMS = "NumPy arrays have at most 64 dims (NPY_MAXDIMS), so npy cannot hold the 65-dim input this case builds"
FALLBACK_COPIES_OUT = (
    "no npy kernel: the CPU fallback computes into a CPU tensor that it then copies into out=, "
    "so CPU's check that out= shares no memory with the input sees two separate tensors"
)
NARROW_COPY_WORDS = (
    "no npy kernel: PyTorch's composite narrow_copy runs (a narrow view, then a copy), which checks "
    "the arguments as narrow does; CPU's own kernel words them otherwise (its message names C++ "
    "internals: 'Expected dim < static_cast<int64_t>(self_sizes.size())')"
)

ERROR_INPUTS = {
    "amax[1]": NUMPY_MAX_DIMS,
    "amax[2]": NUMPY_MAX_DIMS,
    "amin[1]": NUMPY_MAX_DIMS,
    "amin[2]": NUMPY_MAX_DIMS,
    "aminmax[1]": NUMPY_MAX_DIMS,
    "aminmax[2]": NUMPY_MAX_DIMS,
    "kthvalue[0]": FALLBACK_COPIES_OUT,
    "narrow_copy[1]": NARROW_COPY_WORDS,
    "narrow_copy[6]": NARROW_COPY_WORDS,
}

# OpInfo full name -> compared in float32 and complex64 with SUMMATION_TOLERANCE. These ops sum
# products, and npy's kernels (NumPy's BLAS and einsum) add them in another order than CPU's,
# so an element may differ in its last bits; which elements, and by how much, depends on the
# machine's BLAS kernels (an AMD EPYC and an Intel Xeon disagreed on which samples pass
# assert_close's float32 default). PyTorch's own tests loosen such comparisons the same way
# (toleranceOverride in torch/testing/_internal/common_device_type.py).
SUMMED_IN_ANOTHER_ORDER = frozenset(
    {
        "__rmatmul__",
        "addbmm",
        "addmm",
        "addmv",
        "baddbmm",
        "bmm",
        "einsum",
        "inner",
        "linalg.multi_dot",
        "matmul",
        "mm",
        "mv",
        "tensordot",
        "nn.functional.bilinear",
        "nn.functional.linear",
        "nn.functional.conv1d",
        "nn.functional.conv2d",
        "nn.functional.conv3d",
        "nn.functional.conv_transpose1d",
        "nn.functional.conv_transpose2d",
        "nn.functional.conv_transpose3d",
        "nn.functional.scaled_dot_product_attention",
        "nn.functional.multi_head_attention_forward",
    }
)
SUMMATION_DTYPES = ("float32", "complex64")
# assert_close's float32 default is rtol 1.3e-6, atol 1e-5; the largest difference seen is
# about 4e-5 on elements of about 4 (baddbmm, complex64), a relative 2.2e-5 (attention).
SUMMATION_TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


def tolerance(opinfo_name, dtype_name):
    """The ``rtol`` and ``atol`` npy's results of an OpInfo in a dtype are compared with (none: the default)."""
    if opinfo_name in SUMMED_IN_ANOTHER_ORDER and dtype_name in SUMMATION_DTYPES:
        return SUMMATION_TOLERANCE
    return {}


RANDOM_PROJECTION = (
    "random: the algorithm projects onto a Gaussian matrix drawn from the device's generator, so "
    "npy's factors differ from the CPU's"
)

TIES_IN_ANOTHER_ORDER = (
    "PyTorch leaves the order of equal values unspecified: npy's topk takes tied values by position, "
    "CPU's (std::nth_element, std::partial_sort) in another order, so the values agree and the indices "
    "of ties differ; the int64 samples draw few distinct values, so they tie"
)

UNSTABLE_SORT = (
    "with stable=False PyTorch leaves the order of equal values unspecified: npy sorts stably, CPU's "
    "introsort keeps ties in order only up to 16 elements; the 8000-element bool sample is all ties"
)

SAMPLES = {
    ("argsort", "bool"): UNSTABLE_SORT,
    ("pca_lowrank", "complex64"): RANDOM_PROJECTION,
    ("sort", "bool"): UNSTABLE_SORT,
    ("topk", "int64"): TIES_IN_ANOTHER_ORDER,
    ("svd_lowrank", "float32"): RANDOM_PROJECTION,
    ("svd_lowrank", "float64"): RANDOM_PROJECTION,
    ("svd_lowrank", "complex64"): RANDOM_PROJECTION,
}

# OpInfo full name -> why gradcheck fails on npy where it passes on the CPU.
GRADCHECK = {}


def _dropout_p(sample):
    return sample.kwargs.get("dropout_p", 0) > 0


def _training(sample):
    return bool(sample.kwargs.get("training"))


DROPOUT = "its dropout mask is drawn from the device's generator, so npy's differs from the CPU's"

# OpInfo full name -> (which of its samples draw random numbers, why they are not compared).
RANDOM_SAMPLES = {
    "nn.functional.scaled_dot_product_attention": (_dropout_p, f"with dropout_p > 0, {DROPOUT}"),
    "nn.functional.multi_head_attention_forward": (
        _training,
        f"with training=True (its samples then pass dropout_p=0.5), {DROPOUT}",
    ),
}


def random_sample_reason(opinfo_name, sample):
    """Why ``sample`` of the OpInfo named ``opinfo_name`` is random, or None if it is not."""
    rule = RANDOM_SAMPLES.get(opinfo_name)
    if rule is not None and rule[0](sample):
        return rule[1]
    return None


def _cpu_group_norm_reads_weight_as_contiguous():
    """Whether the running torch's CPU ``native_group_norm`` reads an expanded weight as if it
    were contiguous (torch 2.13 does; 2.14 reads it through its strides)."""
    base = torch.tensor([2.0, 5.0])
    weight = base[:1].expand(2)  # read as contiguous, it would be [2, 5]
    x = torch.arange(8.0).reshape(1, 2, 4)
    expanded, contiguous = (
        torch.native_group_norm(x, w, None, 1, 2, 4, 1, 1e-5)[0] for w in (weight, weight.contiguous())
    )
    return not torch.equal(expanded, contiguous)


# (OpInfo full name, dtype, layout) -> why npy differs from the CPU on that OpInfo's samples in
# that layout only (see tests/tools/test_opinfo_layouts.py; layouts: noncontiguous, expanded, zero-dim, empty).
LAYOUTS = {}
if _cpu_group_norm_reads_weight_as_contiguous():
    LAYOUTS[("native_group_norm", "float32", "expanded")] = (
        "CPU is wrong here: its kernel reads weight and bias through their data pointers as if "
        "contiguous (GroupNormKernelImplInternal, aten/src/ATen/native/cpu/group_norm_kernel.cpp), "
        "so an expanded weight gives it wrong values; group_norm, the op users call, makes them "
        "contiguous first. npy computes the group norm of the values it is given"
    )
