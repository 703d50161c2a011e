"""Inductor, ``torch.compile``'s default backend, for npy graphs: its C++ kernels on npy memory.

npy memory is host memory, so the code Inductor generates for the CPU can
compute on it. Inductor learns how to generate code for a device from three
registries, all filled here through their registration functions:

* the code generation itself (``register_backend_for_device`` in
  ``torch/_inductor/codegen/common.py``): Inductor's C++ scheduling
  (``CppScheduling``) and :class:`NpyWrapperCodegen`, the Python function
  that allocates the buffers and calls the kernels;
* the device's code snippets (``register_device_op_overrides``), the CPU's;
* Dynamo's device interface (``register_interface_for_device`` in
  ``torch/_dynamo/device_interface.py``), the CPU's.

Nothing here is imported by ``import backend_pkg``: Inductor asks the
device module for ``torch.npy.Scheduling`` and its wrapper classes the first
time it compiles a graph (``init_backend_registration`` looks them up for
the PrivateUse1 device), and :mod:`backend_pkg.device` imports this module
then.

:class:`NpyWrapperCodegen` runs each compiled graph on host views. At entry,
each npy input becomes a CPU tensor over the same memory (no bytes move);
every buffer Inductor allocates, every kernel it calls and every extern
kernel (``mm``, ``addmm``...) is then the CPU's, in C++; at exit each output becomes an npy tensor over the
buffer's memory. No npy Python kernel runs inside a compiled graph.
"""

import torch
from torch._dynamo.callback import callback_handler
from torch._dynamo.device_interface import CpuInterface, register_interface_for_device
from torch._guards import CompileContext, TracingContext
from torch._inductor import config as inductor_config
from torch._inductor import ir
from torch._inductor.codegen import wrapper
from torch._inductor.codegen.common import register_device_op_overrides
from torch._inductor.codegen.cpp import CppScheduling
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
from torch._inductor.codegen.cpu_device_op_overrides import CpuDeviceOpOverrides
from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen
from torch._inductor.utils import sympy_product
from torch._inductor.virtualized import V

from ..names import DEVICE_NAME

_CPU = torch.device("cpu")


def _on_host(device):
    """The device whose code runs for ``device``: the CPU for npy."""
    return _CPU if device is not None and device.type == DEVICE_NAME else device


class NpyWrapperCodegen(wrapper.PythonWrapperCodegen):
    """Inductor's Python wrapper, for a graph whose tensors live in npy memory.

    Inductor's wrapper writes CPU code only for ``device.type == "cpu"``
    (``_generate_kernel_call_helper`` raises "device npy nyi" otherwise, and
    ``make_allocation`` allocates other devices' buffers through their
    factory kernels), so npy is named the CPU wherever code is written, and
    the inputs and outputs cross between the two at the graph's edges.
    """

    # The generated code calls this package's functions, which Inductor's FX
    # graph cache does not hash: a cached graph could outlive a change to them.
    supports_caching = False

    def __init__(self):
        super().__init__()
        self._output_allocations = set()  # the buffers whose memory npy outputs take, set after memory planning

    @staticmethod
    def create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return wrapper.PythonWrapperCodegen.create(is_subgraph, subgraph_name, parent_wrapper, partition_signatures)
        return NpyWrapperCodegen()

    def write_header(self):
        super().write_header()
        self.imports.writeline(
            f"from {__package__}.host import as_plain_tensor, empty_host, empty_host_strided, in_layout, to_host, "
            "to_npy, to_npy_reshaped"
        )

    def write_args(self, input_names):
        super().write_args(input_names)
        on_npy = [name for name in input_names if _on_npy(V.graph.graph_inputs.get(name))]
        if on_npy:
            names = ", ".join(on_npy) + ("," if len(on_npy) == 1 else "")
            self.prefix.writeline(f"{names} = to_host({names})")

    def run_wrapper_ir_passes(self, is_inference):
        super().run_wrapper_ir_passes(is_inference)
        # Memory planning has decided which buffers reuse which: an output may live in the memory
        # allocated for another buffer, which must then be allocated as an output's.
        leaving = _buffer_names(_leaving_as_npy(V.graph.graph_outputs))
        self._output_allocations = _allocations_behind(leaving, self.lines)

    def generate_return(self, output_refs):
        outputs = V.graph.graph_outputs
        leaving = _leaving_as_npy(outputs)
        remade = set(_remade_by_runtime_wrapper())
        calls = [self._to_npy_call(ref, node) if node in leaving else ref for ref, node in zip(output_refs, outputs)]
        super().generate_return(
            [f"as_plain_tensor({call})" if index in remade else call for index, call in enumerate(calls)]
        )

    def _to_npy_call(self, ref, node):
        """The code that turns output ``ref`` into an npy tensor; a view names its buffer as well,
        whose NumPy memory the npy tensor then shares (all of it, reshaped, when the view is known
        to cover the buffer: a bias gradient computed as a ``(1, n)`` row leaves as ``(n,)``)."""
        if isinstance(node, ir.ReinterpretView) and isinstance(node.data, (ir.Buffer, ir.StorageBox)):
            if _covers_its_buffer(node):
                return f"to_npy_reshaped({node.data.get_name()}, {self.codegen_python_shape_tuple(node.get_size())})"
            return f"to_npy({ref}, {node.data.get_name()})"
        return f"to_npy({ref})"

    def make_allocation(self, name, device, dtype, shape, stride, allocation_shape=None, is_pinned=False):
        if device.type != DEVICE_NAME:
            return super().make_allocation(name, device, dtype, shape, stride, allocation_shape, is_pinned)
        if name not in self._output_allocations or _is_large(allocation_shape or shape, dtype):
            # Never an npy tensor (a temporary, or saved for the backward), or large enough for
            # the alignment of its memory to count: the CPU's allocation (see host.to_npy).
            return super().make_allocation(name, _CPU, dtype, shape, stride, allocation_shape, is_pinned)
        allocation = allocation_shape or shape
        if _known_contiguous(allocation, stride):
            line = f"{name} = empty_host({self.codegen_python_shape_tuple(allocation)}, {dtype})"
        else:
            line = (
                f"{name} = empty_host_strided({self.codegen_python_shape_tuple(allocation)}, "
                f"{self.codegen_python_shape_tuple(stride)}, {dtype})"
            )
        if allocation_shape is not None and tuple(allocation_shape) != tuple(shape):
            line += f".as_strided({self.codegen_python_shape_tuple(shape)}, {self.codegen_python_shape_tuple(stride)})"
        return line

    def _generate_extern_kernel_alloc_helper(self, extern_kernel, args):
        super()._generate_extern_kernel_alloc_helper(extern_kernel, args)
        self._write_npy_layout(extern_kernel)

    def codegen_multi_output(self, node):
        super().codegen_multi_output(node)
        self._write_npy_layout(node)

    def _write_npy_layout(self, node):
        """Give an extern kernel's result the strides npy's kernel would have: the CPU kernel that
        ran in its place may choose others (a convolution of channels-last inputs is channels-last
        on the CPU, contiguous on npy), and the graph was planned with npy's."""
        if isinstance(node.layout, ir.Layout) and _on_npy(node):
            name = node.get_name()
            size, stride = (self.codegen_shape_tuple(shape) for shape in (node.get_size(), node.get_stride()))
            self.writeline(f"{name} = in_layout({name}, {size}, {stride})")

    def _generate_kernel_call_helper(self, kernel_name, call_args, *, device=None, **kwargs):
        device = _on_host(device or V.graph.get_current_device_or_throw())
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, **kwargs)


# The threads each generated C++ kernel runs on: the calling thread only, as npy's own kernels
# (NumPy's) do. A compiled npy graph runs between eager npy ops, whose matrix products run on
# NumPy's BLAS threads, a pool apart from the OpenMP pool Inductor's kernels would share out
# their loops to (``#pragma omp parallel``, ``cpp.threads`` in ``torch/_inductor/config.py``).
# A parallel loop waits at each of its barriers until its second thread gets a core, which
# NumPy's BLAS threads, spinning for a while after their work, hold (as do other processes on a
# shared machine): measured on this project's two loaded cores, the zoo LSTM step's fused SGD
# kernel took 22 ms a call in parallel, for microseconds of work. Extern kernels (``mm``,
# convolutions) still run PyTorch's CPU code, with its threads.
KERNEL_THREADS = 1


class NpyScheduling(CppScheduling):
    """Inductor's C++ code generation, told that its kernels are C++ ones, each run on the calling thread.

    While a kernel is generated, Inductor asks ``get_current_backend()``
    (``torch/_inductor/utils.py``) which code it is writing: "cpp" only for
    the device type "cpu", and for other devices ``config.cuda_backend``
    ("triton"), whose dtype rules then drop the dtype of C++ index
    expressions (``CSEProxy._default`` in ``torch/_inductor/codegen/common.py``).
    The answer is set right for the duration of npy's kernel generation only,
    as is the number of threads a kernel's loops are shared among
    (:data:`KERNEL_THREADS`).
    """

    def __init__(self, scheduler):
        super().__init__(scheduler)
        _reindexing_off_until_compile_ends()

    def codegen_node(self, node):
        with inductor_config.patch(cuda_backend="cpp", **{"cpp.threads": KERNEL_THREADS}):
            return super().codegen_node(node)


# Scheduler._try_reindex_pointwise_for_reduction (torch/_inductor/scheduler.py) reads a
# reduction's loop groups as a Triton kernel's unless the node's device type is "cpu", and
# raises a TypeError on C++ ones (the cross-entropy of a training step). The rewrite it gates
# is for Triton kernels only. Inductor builds the npy scheduling (this class) when it meets the
# graph's first npy node, before fusing nodes; from then until Dynamo's compile ends (its
# compile-end callbacks run in a ``finally``), ``loop_reindexing_after_fusion`` is off.
_reindexing_setting = None


def _reindexing_off_until_compile_ends():
    global _reindexing_setting
    if _reindexing_setting is None and CompileContext.current_compile_id() is not None:
        # Registered again after torch._dynamo.reset(), which clears the callbacks.
        if _restore_reindexing not in callback_handler.end_callbacks:
            callback_handler.register_end_callback(_restore_reindexing)
        _reindexing_setting = inductor_config.patch(loop_reindexing_after_fusion=False)
        _reindexing_setting.__enter__()


def _restore_reindexing(callback_args):
    global _reindexing_setting
    if _reindexing_setting is not None:
        setting, _reindexing_setting = _reindexing_setting, None
        setting.__exit__(None, None, None)


def _remade_by_runtime_wrapper():
    """The indices of a training forward's outputs that AOTAutograd's runtime wrapper replaces,
    before the caller sees them, by a view it makes with ``aten._unsafe_view``: the outputs that
    view an intermediate of the graph (``unsafe_view_out_indices``, among the user outputs, which
    follow the tokens and the updated inputs: ``ViewAndMutationMeta`` in
    ``torch/_functorch/_aot_autograd/schemas.py``)."""
    context = TracingContext.try_get()
    if V.graph.is_inference or V.graph.is_backward or context is None or context.fw_metadata is None:
        return []
    meta = context.fw_metadata
    first_output = len(meta.tokens) + meta.num_mutated_inp_runtime_indices
    return [first_output + index for index in meta.unsafe_view_out_indices]


def _covers_its_buffer(view):
    """Whether a ``ReinterpretView`` is known, at compile time, to be all of its buffer in its
    order: both contiguous, the view from the buffer's start, with as many elements."""
    buffer = view.data.get_layout()
    sizevars = V.graph.sizevars
    return (
        sizevars.statically_known_equals(view.layout.offset, 0)
        and sizevars.statically_known_equals(buffer.offset, 0)
        and _known_contiguous(view.get_size(), view.get_stride())
        and _known_contiguous(buffer.size, buffer.stride)
        and sizevars.statically_known_equals(sympy_product(view.get_size()), sympy_product(buffer.size))
    )


def _leaving_as_npy(outputs):
    """The graph's outputs that leave it as npy tensors: those on npy, but for the ones saved for the backward."""
    first_saved = _first_saved_for_backward(len(outputs))
    return [output for index, output in enumerate(outputs) if index < first_saved and _on_npy(output)]


def _buffer_names(ir_nodes):
    """The names of the buffers behind ``ir_nodes`` (a view's is its base's)."""
    names = set()
    for node in ir_nodes:
        try:
            names.add(node.get_name())
        except (AttributeError, NotImplementedError):
            pass  # no buffer of its own: its output is made at exit, from a CPU tensor
    return names


def _allocations_behind(buffer_names, lines):
    """``buffer_names`` and the buffers whose memory they reuse (``buf9 = buf8; del buf8  # reuse``)."""
    reused = {line.reused_as.get_name(): line.node.get_name() for line in lines if isinstance(line, wrapper.ReuseLine)}
    behind = set()
    for name in buffer_names:
        while name is not None and name not in behind:
            behind.add(name)
            name = reused.get(name)
    return behind


# The CPU's allocator aligns memory to 64 bytes (c10/core/alignment.h), NumPy's to 16 (a
# large array starts 16 bytes into a page): a C++ matrix product writing a large result runs
# some percent slower into NumPy's. For a buffer this large, the microsecond the CPU's
# allocation costs more at exit (host.to_npy) is the smaller cost.
LARGE_BUFFER_BYTES = 64 * 1024


def _is_large(size, dtype):
    numel = V.graph.sizevars.optimization_hint(sympy_product(size), fallback=0)
    return numel * dtype.itemsize >= LARGE_BUFFER_BYTES


def _known_contiguous(size, stride):
    """Whether a buffer of ``size`` and ``stride`` is known, at compile time, to have NumPy's C order."""
    sizevars = V.graph.sizevars
    expected = 1
    for length, step in reversed(list(zip(size, stride))):
        # NumPy's strides of an empty array are not PyTorch's: left to empty_host_strided.
        if not sizevars.statically_known_gt(length, 0) or not sizevars.statically_known_equals(step, expected):
            return False
        expected = expected * length
    return True


def _first_saved_for_backward(count):
    """The index of a training forward's first output that only its backward reads.

    AOTAutograd's forward returns its tokens, the updated inputs, the outputs
    and their bases, then the tensors saved for the backward
    (``ViewAndMutationMeta.num_forward`` in
    ``torch/_functorch/_aot_autograd/schemas.py``). The saved ones go from this
    graph to the backward graph only, so they stay CPU tensors: no npy tensor
    is made for them here, and the backward's ``to_host`` passes them through.
    """
    context = TracingContext.try_get()
    if V.graph.is_inference or V.graph.is_backward or context is None or context.fw_metadata is None:
        return count
    return len(context.fw_metadata.tokens) + context.fw_metadata.num_forward


def _on_npy(ir_node):
    """Whether a graph input or output (an IR node, or a symbolic size) is an npy tensor."""
    device = ir_node.get_device() if hasattr(ir_node, "get_device") else None
    return device is not None and device.type == DEVICE_NAME


# What torch.npy offers Inductor (see backend_pkg.device.__getattr__).
Scheduling = NpyScheduling
PythonWrapperCodegen = NpyWrapperCodegen
CppWrapperCodegen = CppWrapperCpu
WrapperFxCodegen = WrapperFxCodegen

register_device_op_overrides(DEVICE_NAME, CpuDeviceOpOverrides())
register_interface_for_device(DEVICE_NAME, CpuInterface)

__all__ = ["NpyScheduling", "NpyWrapperCodegen"]
