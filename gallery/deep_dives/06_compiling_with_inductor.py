"""
Compiling with Inductor
=======================

``torch.compile(fn)`` with no ``backend=`` uses Inductor, PyTorch's
compiler, which writes C++ kernels for the CPU and Triton kernels for GPUs.
npy memory is host memory, so Inductor's C++ kernels compute on it
directly: the package registers Inductor's CPU code generation for the npy
device, and each compiled graph runs on CPU tensors over npy memory. This
page shows how Inductor finds that code generation, the code it generates
for an MLP, a compiled training step against eager CPU, the cost of both
compile routes side by side, and every private PyTorch API that compiling
for npy relies on, with the upstream change that would make it unnecessary.
"""

# %%
# The model, data and training step of
# :ref:`sphx_glr_auto_examples_deep_dives_05_compiling_for_npy.py`: a multilayer
# perceptron, 32 -> 64 -> 10, on a batch of 64, on npy and on CPU from the
# same weights.

import inspect

import torch
import torch._inductor.config
from _training import train_step

import backend_pkg  # noqa: F401  (registers the npy device)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def show_setting(config, name):
    print(f"{config.__name__}.{name} = {getattr(config, name)} (PyTorch's default: {config._config[name].default})")


torch.manual_seed(0)
model_cpu = mlp()
weights = {name: p.detach().clone() for name, p in model_cpu.named_parameters()}
model = mlp()
model.load_state_dict(weights)
model = model.to("npy")
x_cpu, y_cpu = torch.randn(64, 32), torch.randint(0, 10, (64,))
x, y = x_cpu.to("npy"), y_cpu.to("npy")

# %%
# How Inductor finds npy's code generation
# ----------------------------------------
# Without ``backend=``, ``torch.compile`` uses Inductor, which generates C++
# kernels for the CPU and Triton kernels for GPUs. npy memory is host
# memory, so Inductor's C++ kernels compute on it directly. Inductor asks the
# device module of a PrivateUse1 device for its code generation the first
# time it compiles a graph (``init_backend_registration`` in
# ``torch/_inductor/codegen/common.py`` reads ``torch.npy.Scheduling`` and
# three wrapper classes); ``torch.npy`` answers from
# ``backend_pkg.compiler.inductor``, imported only then:

from backend_pkg import device as npy_device
from backend_pkg.compiler import inductor

print(inspect.getsource(npy_device.__getattr__))

# %%
# The wrapper, the Python function Inductor writes around its kernels, is
# the CPU's with three changes: npy inputs enter as CPU tensors over the
# same memory (each npy tensor keeps that CPU tensor from one call to the
# next); buffers and extern kernels (``mm``, ``addmm``) are the CPU's,
# except that a small buffer that leaves the graph is NumPy memory (a large
# one keeps the CPU allocator's 64-byte alignment, which matrix products
# write faster than NumPy's 16); and npy outputs leave as npy tensors over
# those buffers. Tensors a training forward saves for its backward stay CPU
# tensors between the two graphs. No npy Python kernel runs inside a graph.

print(inspect.getsource(inductor.NpyWrapperCodegen))

# %%
# The generated C++ kernel
# ------------------------
# The default call on the MLP gives the eager result.
# ``run_and_get_code`` (``torch/_inductor/utils.py``) returns the code
# Inductor generated as well: the C++ kernel, then the wrapper that calls it
# (the matrix products are ``extern_kernels`` calls, PyTorch's CPU BLAS).

from torch._inductor.utils import run_and_get_code

inductor_model = torch.compile(model)
with torch.no_grad():
    inductor_out, (inductor_code,) = run_and_get_code(inductor_model, x)
    torch.testing.assert_close(inductor_out, model(x))
print(type(inductor_out).__name__, inductor_out.device, inductor_out.dtype, tuple(inductor_out.shape))
# From the kernel's definition to the end of the wrapper's ``call``:
print(inductor_code[inductor_code.index("cpp_fused") : inductor_code.index("\ndef get_args")])

# %%
# Training, and the CPU beside it
# -------------------------------
# A training step compiled by default (model, loss, backward and SGD step)
# matches eager CPU, and a CPU graph compiled in the same process is
# untouched by npy's registration (its wrapper has no ``to_host``). The one
# Inductor setting npy graphs change is back to PyTorch's default once the
# compile ends:

inductor_step = torch.compile(train_step)
inductor_net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
inductor_net.load_state_dict(weights)
inductor_net = inductor_net.to("npy")
cpu_net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
cpu_net.load_state_dict(weights)
for step, net, inputs, targets in [(inductor_step, inductor_net, x, y), (train_step, cpu_net, x_cpu, y_cpu)]:
    sgd = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(3):
        step(net, sgd, inputs, targets)
for p, q in zip(inductor_net.parameters(), cpu_net.parameters()):
    torch.testing.assert_close(p.detach().cpu(), q.detach())
print("Inductor on npy and eager CPU weights agree")
_, (cpu_code,) = run_and_get_code(torch.compile(lambda t: torch.cumsum(t, 1).erf()), x_cpu)
print("to_host" in cpu_code)
show_setting(torch._inductor.config, "loop_reindexing_after_fusion")

# %%
# One thread per kernel, and ``mode="reduce-overhead"``
# -----------------------------------------------------
# Inductor shares a C++ kernel's loops out to OpenMP threads
# (``#pragma omp parallel``) when each thread gets enough elements
# (``decide_parallel_depth`` in ``torch/_inductor/codegen/cpp.py``). npy's
# kernels are generated with ``cpp.threads`` at 1
# (``backend_pkg.compiler.inductor.KERNEL_THREADS``): a compiled npy graph runs
# between eager npy ops whose matrix products run on NumPy's BLAS threads, and a
# parallel loop waits at each of its barriers until its second thread gets a
# core, which that other pool's threads, spinning for a while after their work,
# hold. Measured on two loaded cores, the zoo's LSTM step spent 22 ms a call in
# its fused SGD kernel when it was parallel. The CPU's graph of the same
# function keeps its parallel loop:

wide = torch.randn(256, 1024)
for device in ("npy", "cpu"):
    _, (code,) = run_and_get_code(torch.compile(lambda t: (t * 2).relu() + 1), wide.to(device))
    print(f"{device}: omp parallel in the kernel: {'omp parallel' in code}")

# %%
# ``mode="reduce-overhead"`` asks Inductor for CUDA graphs
# (``torch._inductor.list_mode_options()``). Inductor checks each graph's devices
# (``check_lowering_disable_cudagraph`` in ``torch/_inductor/cudagraph_utils.py``)
# and skips any graph that is not all CUDA, counting the skip in silence when
# the graph has no CUDA device (``CompiledFxGraph.__init__`` in
# ``torch/_inductor/output_code.py``): on npy and on CPU the mode runs the
# default's code. The reason recorded for an npy graph (its words say "multiple
# devices" for any one device but CUDA; a CPU graph's say "cpu device"), and the
# skips of one training step:

from torch._dynamo.utils import counters
from torch._inductor.cudagraph_utils import check_lowering_disable_cudagraph

print(torch._inductor.list_mode_options()["reduce-overhead"])
print(check_lowering_disable_cudagraph({torch.device("npy", 0): None}))
counters.clear()
overhead_step = torch.compile(train_step, mode="reduce-overhead")
overhead_step(inductor_net, torch.optim.SGD(inductor_net.parameters(), lr=0.01), x, y)
print("graphs without CUDA graphs:", counters["inductor"]["cudagraph_skips"])

# %%
# Both routes, measured
# ---------------------
# The forward pass per call, as ``make bench`` timed it last, the run
# :ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` plots (read from
# ``source/benchmarks.json``; the same MLP and batch, with a training step):
# ``backend="npy"``
# (:ref:`sphx_glr_auto_examples_deep_dives_05_compiling_for_npy.py`) runs NumPy from
# Python, the default runs Inductor's C++ and BLAS calls on host views; the
# CPU's own default and eager CPU beside them.

from _measurements import LABELS, load_benchmarks

forward_timings = load_benchmarks()["timings_us"]["mlp"]["forward"]
for implementation in ("npy_compiled", "npy_inductor", "cpu_inductor", "cpu_eager"):
    print(f"forward, {LABELS[implementation]:36} {forward_timings[implementation]['us']:8.0f} us")

# %%
# The first call of a compiled function, under autograd
# ------------------------------------------------------
# AOTAutograd runs a compiled function's first call under a dispatch mode
# that checks custom ops for aliasing (``_AnalyzeCustomOpInputOutputMode``,
# entered by ``_FirstInvocationContext`` in
# ``torch/_functorch/_aot_autograd/runtime_wrappers.py``) while
# ``torch._functorch.config.check_custom_op_aliasing`` is on:

show_setting(torch._functorch.config, "check_custom_op_aliasing")

# %%
# The mode gives up on every tensor whose class is not in ``HANDLED_TYPES``
# (``torch/fx/experimental/proxy_tensor.py``) before it asks whether the op
# is a custom one, so an aten op on an :class:`~backend_pkg.NpyTensor`
# fails under it:

print(torch.fx.experimental.proxy_tensor.HANDLED_TYPES)

# %%
# Around the graph, the runtime wrapper runs aten ops of its own. An output
# that views an intermediate tensor of the graph is made again from the
# graph's result (``aten._unsafe_view``, in ``_transform_raw_returns``):
# a ``Linear`` layer over a batch of sequences multiplies a 2-D view of its
# input and returns the product viewed in 3-D, so every transformer compiled
# for training has such outputs. npy's wrapper code hands those results to
# AOTAutograd as plain ``torch.Tensor`` objects (``as_plain_tensor``; the
# forward's metadata says which they are), which the mode lets through; the
# view the caller gets is made by npy's kernel, an ``NpyTensor`` as usual.
# The first call works:

layer = torch.nn.Linear(4, 3).to("npy")
sequences = torch.randn(2, 5, 4).to("npy")  # 2 sequences of 5 tokens
torch._dynamo.reset()
outputs, (layer_forward, *_) = run_and_get_code(torch.compile(layer), sequences)
print("first call:", type(outputs).__name__, tuple(outputs.shape))
print(next(line.strip() for line in layer_forward.splitlines() if "as_plain_tensor(" in line))

# %%
# The wrapper also detaches, before the graph runs, each input that is not
# a leaf and whose gradient the graph never computes (see "Detaching inputs
# that never need gradients" in
# ``torch/_functorch/_aot_autograd/graph_compile.py``). That input is the
# caller's own tensor, which npy's code never sees first: a function
# compiled by itself that detaches a computed input (a GAN's step, compiled
# whole, passes the generator's output to a graph of its own) would fail at
# its first call, as every op of an ``aot_eager`` graph would. The mode's
# class check asks a tensor two things, both answered by the tensor's
# class: is it a parameter (``isinstance``, which reads ``_is_param``), and
# for a parameter, what is the class of its ``.data``. Asked from that
# mode's frame and no other, an ``NpyTensor`` says it is one, and gives the
# plain ``torch.Tensor`` object over its memory that ``.data`` gives any
# CPU tensor; the mode then runs the op as for CPU tensors. Nothing is set
# for the process (``backend_pkg/custom_op_check.py``):
#
# .. literalinclude:: ../../../backend_pkg/custom_op_check.py
#    :pyobject: is_custom_op_check
#
# With the check on, the first call works, for the default compile and for
# ``aot_eager``:


def loss_of_detached(x, w):
    return (x.detach() * w).sum()


w = torch.randn(3).to("npy").requires_grad_()
computed = torch.randn(3).to("npy").requires_grad_() * 2  # not a leaf
torch._dynamo.reset()
show_setting(torch._functorch.config, "check_custom_op_aliasing")
for backend in ("inductor", "aot_eager"):
    compiled_loss = torch.compile(loss_of_detached, backend=backend)
    print(f"{backend}, first call:", compiled_loss(computed, w).item() == loss_of_detached(computed, w).item())

# %%
# Anywhere else, an npy tensor is no parameter and its ``.data`` is an npy tensor:

print(isinstance(computed, torch.nn.Parameter), type(computed.data).__name__)

# %%
# ``tests/compile/test_compile.py`` trains the model zoo's GAN with its step
# compiled whole, against CPU.
#
# .. dropdown:: Issue: the first-call custom-op check refuses aten ops on a Python backend's tensors
#
#    **What fails.** On a PrivateUse1 device registered from Python, whose
#    tensors are a Python subclass without ``__torch_dispatch__``, the first
#    call of ``torch.compile(fn)`` raises a ``TypeError`` ("Multiple
#    dispatch failed for" ``aten.detach.default``, "all
#    __torch_dispatch__ handlers returned NotImplemented") when the runtime
#    wrapper detaches an input whose gradient the graph never computes (a
#    GAN step compiled whole), and, unless the backend's generated code
#    returns plain ``torch.Tensor`` objects for them, when it remakes an
#    output that views an intermediate (``aten._unsafe_view``; ``nn.Linear``
#    over 3-D input). The second call works. npy gets through by answering
#    the mode's two questions for that frame, which ties it to the mode's
#    code.
#
#    **Where.** ``_AnalyzeCustomOpInputOutputMode.__torch_dispatch__`` in
#    ``torch/_functorch/_aot_autograd/runtime_wrappers.py`` returns
#    ``NotImplemented`` when ``type(tensor) not in HANDLED_TYPES``, for
#    every op, before ``is_builtin(func)`` is consulted; the runtime
#    wrapper's ``detach`` of ``indices_of_inps_to_detach`` and its
#    ``_unsafe_view`` of ``unsafe_view_out_indices`` run on the device
#    tensors inside the mode.
#
#    **Proposed change.** Give up only on subclasses that define their own
#    ``__torch_dispatch__``
#    (``type(t).__torch_dispatch__ is not torch._C._disabled_torch_dispatch_impl``),
#    which a subclass that only carries device memory does not; treat every
#    other tensor as a plain one. Not the shorter change of returning
#    ``func(*args, **kwargs)`` for every builtin op before looking at types:
#    inside the mode's handler the mode is off, so a wrapper subclass's
#    ``__torch_dispatch__`` (``TwoTensor``'s, say) would then run a builtin op
#    with the mode off, and a custom op it calls on its inner tensors would
#    escape the check. Returning ``NotImplemented`` for such a subclass, as
#    now, lets it unwrap first, with the mode still on.

# %%
# The probe behind that last point: a wrapper subclass whose ``mul`` calls a
# custom op that returns an alias of its input, under the mode as it is and
# under the mode with the shortcut.

from torch._functorch._aot_autograd.runtime_wrappers import _AnalyzeCustomOpInputOutputMode, is_builtin
from torch._library.utils import lookup_op
from torch.utils._pytree import tree_map

probe_library = torch.library.Library("aliasing_probe", "DEF")
probe_library.define("alias(Tensor x) -> Tensor")  # claims to be functional...
probe_library.impl("alias", lambda x: x.view(x.shape), "CPU")  # ...and returns an alias
alias = lookup_op("aliasing_probe::alias")


class Wrapper(torch.Tensor):
    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.mul.Tensor:
            return Wrapper(alias(args[0].inner))
        unwrapped_args, unwrapped_kwargs = tree_map(
            lambda t: t.inner if isinstance(t, Wrapper) else t, (args, kwargs or {})
        )
        return func(*unwrapped_args, **unwrapped_kwargs)


class BuiltinOpsFirst(_AnalyzeCustomOpInputOutputMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if is_builtin(func):
            return func(*args, **(kwargs or {}))
        return super().__torch_dispatch__(func, types, args, kwargs)


for mode in (_AnalyzeCustomOpInputOutputMode, BuiltinOpsFirst):
    with torch._functorch.config.patch(error_on_custom_op_aliasing=True):
        try:
            with mode():
                Wrapper(torch.ones(3)) * 2
            print(f"{mode.__name__}: the custom op inside the wrapper escapes the check")
        except RuntimeError as error:
            print(f"{mode.__name__}: {str(error).split(' (')[0]} caught by the check")

# %%
# The private PyTorch compiling relies on
# ---------------------------------------
# PyTorch has no public API for a backend's Inductor code generation yet;
# each private use below is the narrowest found, with the upstream change
# that would make it unnecessary.
#
# * ``torch.npy.Scheduling``, ``PythonWrapperCodegen``, ``CppWrapperCodegen``
#   and ``WrapperFxCodegen``, read by ``init_backend_registration``
#   (``torch/_inductor/codegen/common.py``) through
#   ``torch.utils.backend_registration._get_custom_mod_func``; the classes
#   are ``torch._inductor``'s own (``CppScheduling``, ``PythonWrapperCodegen``).
#   Upstream: a documented registration function for out-of-tree devices.
# * ``NpyWrapperCodegen`` overrides ``_generate_kernel_call_helper`` and
#   ``make_allocation`` (``torch/_inductor/codegen/wrapper.py``), which write
#   CPU code only for ``device.type == "cpu"``. Upstream: choose the kernel
#   call convention by the device's registered scheduling, not its name.
# * Which buffer's memory an output reuses: ``NpyWrapperCodegen`` extends
#   ``run_wrapper_ir_passes`` and reads its ``ReuseLine`` entries
#   (``torch/_inductor/codegen/wrapper.py``), so that a buffer an output
#   will reuse is allocated as NumPy memory. Upstream: the same question as
#   below, asked of the memory plan ("which allocations end up as graph
#   outputs").
# * The strides of an extern kernel's result: ``NpyWrapperCodegen`` extends
#   ``_generate_extern_kernel_alloc_helper`` and ``codegen_multi_output``
#   (``torch/_inductor/codegen/wrapper.py``) to give each result the strides
#   its IR node was planned with (``host.in_layout``, a copy only when they
#   differ). Inductor plans them with npy's fake kernels, and runs the CPU's:
#   when it lays a conv net out channels-last (``GraphLowering.decide_layout_opt``
#   in ``torch/_inductor/graph.py``; a LeNet in eval), the CPU's convolution
#   and its backward return channels-last results, while npy's
#   (``aten::convolution_overrideable``, whose fake answer comes from
#   ``torch._C._conv_determine_backend_memory_format`` for the
#   ``Overrideable`` backend, in ``torch/_subclasses/fake_impls.py``) are
#   contiguous. Upstream: "let a device whose Inductor code runs another
#   device's extern kernels say so, so that layouts are planned with that
#   device's fake kernels".
# * ``register_device_op_overrides`` with ``CpuDeviceOpOverrides``
#   (``torch/_inductor/codegen/common.py``) and
#   ``register_interface_for_device`` with ``CpuInterface``
#   (``torch/_dynamo/device_interface.py``). Upstream: the same registration
#   function as above.
# * Which outputs of a training forward are saved for the backward (kept on
#   the host), and which the runtime wrapper remakes as views (left as plain
#   ``torch.Tensor`` objects): ``TracingContext.try_get().fw_metadata``
#   (``torch/_guards.py``), its ``tokens``, ``num_forward``,
#   ``num_mutated_inp_runtime_indices`` and ``unsafe_view_out_indices``
#   (``ViewAndMutationMeta`` in
#   ``torch/_functorch/_aot_autograd/schemas.py``), read while
#   ``V.graph.is_inference`` and ``is_backward`` say which graph is being
#   written; and ``ir.ReinterpretView`` (``torch/_inductor/ir.py``) for an
#   output that views a buffer. Upstream: "let a wrapper codegen ask which
#   graph outputs are user-visible and which are saved activations (the
#   ``user_visible_output_idxs`` compile_fx already records), so an
#   out-of-tree device can keep activations in its host representation";
#   the outputs the wrapper remakes need no reading once the first-call
#   check lets aten ops through (the issue above).
# * ``config.patch(cuda_backend="cpp")`` while ``NpyScheduling`` generates a
#   kernel: ``get_current_backend`` (``torch/_inductor/utils.py``) answers
#   "cpp" for the device type "cpu" only. Upstream: ask the device's
#   registered scheduling. The same patch sets ``cpp.threads`` to 1 (see above),
#   a public setting.
# * ``config.patch(loop_reindexing_after_fusion=False)``, entered when
#   Inductor builds npy's scheduling (at the graph's first npy node, before
#   fusion) and left by a compile-end callback registered with Dynamo
#   (``callback_handler.register_end_callback``, ``torch/_dynamo/callback.py``):
#   ``Scheduler._try_reindex_pointwise_for_reduction``
#   (``torch/_inductor/scheduler.py``) reads a C++ reduction's loop groups as
#   Triton's unless ``node.is_cpu()``, and raises a ``TypeError``. An Inductor
#   compile outside Dynamo (``compile_fx`` called directly) leaves it on.
#   Upstream: skip it for every non-SIMD scheduling
#   ("Scheduler._try_reindex_pointwise_for_reduction assumes SIMD groups: gate it
#   on the backend's scheduling being a SIMDScheduling rather than on
#   ``node.is_cpu()``, so out-of-tree devices using CppScheduling can fuse
#   reductions").
# * The qualified name and module of ``_AnalyzeCustomOpInputOutputMode.__torch_dispatch__``
#   (``torch/_functorch/_aot_autograd/runtime_wrappers.py``), the frame to which an
#   ``NpyTensor`` says it is a parameter with a plain ``.data``
#   (``backend_pkg/custom_op_check.py``): that first-call check returns
#   ``NotImplemented`` for every tensor subclass not in ``HANDLED_TYPES``.
#   Upstream: "_AnalyzeCustomOpInputOutputMode: let a tensor subclass without
#   ``__torch_dispatch__`` through" (the dropdown above says why not more).
# * ``torch._C._get_dispatch_mode`` in ``backend_pkg.ops.factories.new_tensor``,
#   to give a plain ``torch.Tensor`` object under ``FakeTensorMode``.
#   Upstream: let ``FakeTensorMode`` fake a subclass that declares itself
#   plain (its ``_check_for_subclass_arg`` in ``torch/_subclasses/fake_tensor.py``).

# sphinx_gallery_thumbnail_path = "../_build/diagrams/compile_routes.png"
