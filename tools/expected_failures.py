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
  npy's generator, not the CPU's).

``tests/test_error_inputs.py`` and ``tests/test_opinfo.py`` fail on a
difference missing here, and on an entry that no longer fails: fix the
kernel, then delete the entry.
"""

# Reasons shared by several entries.
NUMPY_MAX_DIMS = (
    "NumPy arrays have at most 64 dims (NPY_MAXDIMS), so npy cannot hold the 65-dim input "
    "this case builds"
)
FALLBACK_COPIES_OUT = (
    "no npy kernel: the CPU fallback computes into a CPU tensor that it then copies into out=, "
    "so CPU's check that out= shares no memory with the input sees two separate tensors"
)
NARROW_COPY_WORDS = (
    "npy runs PyTorch's composite narrow_copy (narrow, then clone), whose checks are narrow's; "
    "CPU's own kernel (narrow_copy_dense_cpu_out) words them differently"
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

SAMPLES = {}

RANDOM_SAMPLES = {}
