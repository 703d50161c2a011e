"""
Compiling for ``npy``
=====================

Run eagerly, every op on an ``npy`` tensor is a round trip between PyTorch's
C++ dispatcher and Python: the dispatcher calls the Python kernel, the
kernel unwraps its operands into NumPy arrays, runs one NumPy function and
wraps the result into a new tensor. ``torch.compile`` removes most of that.
Dynamo captures a whole function as a graph, and the package's ``npy``
backend turns each graph into one Python function that unwraps the inputs
once, calls NumPy directly on arrays from op to op, and wraps the outputs
once: one host round trip per graph instead of one per op. The default
``torch.compile(fn)`` works as well, through Inductor's C++ kernels on npy
memory (:ref:`sphx_glr_auto_examples_deep_dives_06_compiling_with_inductor.py`).

This page uses the backend as ``import backend_pkg`` sets it up, and shows
what that import changes in PyTorch for ``torch.compile``, the backend's
code, its generated code, its results against eager ones, and its speed.
"""

# %%
# The two routes side by side: this page's ``backend="npy"`` on the left,
# Inductor (:ref:`sphx_glr_auto_examples_deep_dives_06_compiling_with_inductor.py`)
# on the right:

from _diagrams import draw

draw("compile_routes")

# %%
# What ``import backend_pkg`` changes for ``torch.compile``
# ---------------------------------------------------------
# None of PyTorch's objects: each one PyTorch had before the import is the
# one it has after it, but for the few that PyTorch's own
# ``rename_privateuse1_backend`` replaces (``tests/compile/test_compile.py`` compares
# every attribute of every loaded ``torch`` module and class, in a fresh
# process). What tracing an npy tensor needs, npy answers, in part by what
# it leaves out: the fake tensor of an npy view is made by
# ``Tensor._make_subclass`` (called by ``FakeTensor.__new__``), which detaches
# a meta tensor that carries npy's keys; npy registers no ``detach``, so
# PyTorch's C++ kernel runs and gives a tensor with no Python object, which
# ``_make_subclass`` then makes the ``FakeTensor``
# (``backend_pkg/compiler/tracing.py`` explains it).
#
# One setting is changed only while it is needed: Inductor's
# ``loop_reindexing_after_fusion`` is off from the moment Inductor meets an
# npy node until that compile ends. AOTAutograd's first-call check of custom
# ops, which refuses every tensor class it does not know, stays on: npy
# tensors answer its questions as CPU tensors do
# (:ref:`sphx_glr_auto_examples_deep_dives_06_compiling_with_inductor.py` says why and
# how, and lists every private PyTorch API the package uses). Read back from
# this process, with PyTorch's default beside:

import functools
import importlib.metadata
import inspect

import torch
import torch._functorch.config
from torch._subclasses.fake_tensor import FakeTensor

import backend_pkg
from backend_pkg.compiler import dynamo_backend, lowerings


def show_setting(config, name):
    print(f"{config.__name__}.{name} = {getattr(config, name)} (PyTorch's default: {config._config[name].default})")


print("FakeTensor.__new__ is defined in", FakeTensor.__new__.__module__)
show_setting(torch._functorch.config, "check_custom_op_aliasing")

# %%
# and the ``detach`` kernel the dispatcher runs for npy's key, PyTorch's
# C++ one (CompositeExplicitAutograd):

detach_table = torch._C._dispatch_dump_table("aten::detach")
print(next(line for line in detach_table.splitlines() if line.startswith("PrivateUse1:")))

# %%
# The backend, found by name
# --------------------------
# A ``torch.compile`` backend is a function from a Dynamo graph and example
# inputs to a callable. The package declares its backend as an entry point
# in the ``torch_dynamo_backends`` group, where Dynamo looks names up; so
# ``torch.compile(fn, backend="npy")`` finds it without ``import
# backend_pkg`` importing Dynamo, which would add over a second to every
# import. This is the entry point as installed:

(entry_point,) = importlib.metadata.entry_points(group="torch_dynamo_backends", name="npy")
print(entry_point.value)
print("npy" in torch._dynamo.list_backends())

# %%
# and this is the backend. AOTAutograd traces the Dynamo graph down to aten
# ops, decomposes composite ops into PyTorch's core set, and splits it into
# a forward and a backward graph; ``compile_graph`` turns each into NumPy code.

print(inspect.getsource(dynamo_backend.npy_backend))

# %%
# Eager and compiled agree
# ------------------------
# A small multilayer perceptron, 32 -> 64 -> 10, on a batch of 64. Its
# compiled forward pass gives the eager result: same device, dtype, shape
# and values. Passing ``on_compiled`` to the backend collects the graphs it
# generates, to look at below.

torch.manual_seed(0)
model_cpu = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
model.load_state_dict(model_cpu.state_dict())
model = model.to("npy")
x_cpu = torch.randn(64, 32)
x = x_cpu.to("npy")

graphs = []
compiled_model = torch.compile(model, backend=functools.partial(dynamo_backend.npy_backend, on_compiled=graphs.append))
with torch.no_grad():
    compiled_out = compiled_model(x)
    eager_out = model(x)
torch.testing.assert_close(compiled_out, eager_out)
print(type(compiled_out).__name__, compiled_out.device, compiled_out.dtype, tuple(compiled_out.shape))

# %%
# The generated code
# ------------------
# Without gradients, AOTAutograd hands over one graph. This is the Python
# function generated for it (``GraphModule.code``): the five inputs are
# unwrapped once, the linear layers are ``addmm`` on arrays (the weights
# transposed as NumPy views), and the one output is wrapped at the end. A
# single ``np.errstate`` around the call keeps NumPy as quiet about
# overflow and division by zero as PyTorch is.

(forward_graph,) = graphs
print(forward_graph.code)

# %%
# Each lowering is a NumPy function registered for aten overloads with one
# decorator, into one table; ``relu`` receives the dtype PyTorch gives the
# result, because NumPy's promotion rules are not PyTorch's:

print(inspect.getsource(lowerings.relu))
print(len(lowerings.LOWERINGS), "aten overloads lower to NumPy")

# %%
# Lowered, or run eagerly
# -----------------------
# An op without a lowering still runs, correctly: the generated code calls
# the aten op itself on npy tensors made around the arrays, which is eager
# speed for that op only. ``flip`` and ``erf`` have npy kernels but no
# lowering:


def smooth_scores(t):
    return torch.flip(t, [1]).erf() * 0.5 + 1


graphs.clear()
compiled_scores = torch.compile(
    smooth_scores, backend=functools.partial(dynamo_backend.npy_backend, on_compiled=graphs.append)
)
torch.testing.assert_close(compiled_scores(eager_out), smooth_scores(eager_out))
print("lowered:", dict(graphs[0].lowered))
print("eager:  ", dict(graphs[0].eager))

# %%
# A training step, compiled whole: forward pass, cross-entropy, backward
# pass and the SGD update. ``loss.backward()`` is a graph break; the
# backward graph runs as one autograd node. The Inductor page compiles the
# same step; both pages take it from the gallery's ``_training.py``:
#
# .. literalinclude:: ../../../gallery/deep_dives/_training.py
#    :pyobject: train_step
#
# Every op of the forward, the backward and the optimizer graphs is lowered:

from _training import train_step

y_cpu = torch.randint(0, 10, (64,))
y = y_cpu.to("npy")
graphs.clear()
compiled_step = torch.compile(
    train_step, backend=functools.partial(dynamo_backend.npy_backend, on_compiled=graphs.append)
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
compiled_step(model, optimizer, x, y)
for graph in graphs:
    print(sum(graph.lowered.values()), "ops lowered,", sum(graph.eager.values()), "run eagerly")

# %%
# The same steps run eagerly on npy and on CPU, from the same weights, end
# with the same weights:

weights = {name: p.detach().cpu() for name, p in model.named_parameters()}
eager_model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
eager_model.load_state_dict(weights)
eager_model = eager_model.to("npy")
cpu_model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
cpu_model.load_state_dict(weights)
runs = [
    (compiled_step, model, x, y),
    (train_step, eager_model, x, y),
    (train_step, cpu_model, x_cpu, y_cpu),
]
for step, net, inputs, targets in runs:
    sgd = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(3):
        step(net, sgd, inputs, targets)
for p, q, r in zip(model.parameters(), eager_model.parameters(), cpu_model.parameters()):
    torch.testing.assert_close(p.detach().cpu(), q.detach().cpu())
    torch.testing.assert_close(p.detach().cpu(), r.detach())
print("compiled npy, eager npy and eager CPU weights agree")

# %%
# How much faster
# ---------------
# Per call, for this MLP, as ``make bench`` timed it last: the run
# :ref:`sphx_glr_auto_examples_deep_dives_07_performance.py` plots, read from
# ``source/benchmarks.json`` (the same model, batch and SGD step, each compiled
# with ``backend="npy"``). Compiled code still pays Dynamo's guard checks and
# AOTAutograd's wrappers on every call, and one unwrap per input and one wrap
# per output; the NumPy work itself is a few microseconds per op at these
# sizes.

from _measurements import LABELS, load_benchmarks

mlp_timings = load_benchmarks()["timings_us"]["mlp"]
for case, label in (("forward", "forward"), ("train_step", "training step")):
    for implementation in ("npy_eager", "npy_compiled", "cpu_eager"):
        print(f"{label + ', ' + LABELS[implementation]:45} {mlp_timings[case][implementation]['us']:8.0f} us")

# %%
# Three limits
# ------------
# Compiled code keeps the eager limits
# (:ref:`sphx_glr_auto_examples_learn_05_gotchas.py`). A tensor made on npy
# inside a compiled function works: under fake-tensor tracing the npy
# factory kernels give a plain ``torch.Tensor`` object
# (``backend_pkg.ops.factories.new_tensor``), since fake tensors refuse every
# tensor subclass (``_check_for_subclass_arg`` in
# ``torch/_subclasses/fake_tensor.py``):


def scaled(t):
    return t * torch.tensor([2.0, 3.0], device=t.device)


pair = torch.tensor([1.0, -1.0], device="npy")
torch.testing.assert_close(torch.compile(scaled, backend="npy")(pair), scaled(pair))
torch.testing.assert_close(torch.compile(scaled)(pair), scaled(pair))
print(torch.compile(scaled)(pair))

# %%
# A comparison operator applied to an input and returned as it is
# fails inside Dynamo, whatever the backend: Dynamo mishandles the result
# for any tensor subclass that disables ``__torch_function__``, as
# ``NpyTensor`` does (a two-line CPU subclass shows the same ``NameError``).
# It is pytorch/pytorch#193933 (reported on 2.13.0 and on the 2.15 nightly of
# 17 August 2026), fixed on PyTorch's main branch by pytorch/pytorch#193969,
# after the 2.14 releases: 2.13.0 and 2.14.1 have the bug, and the first
# release with the fix is 2.15. The function form of the comparison works:

try:
    torch.compile(lambda t: t >= 0, backend="npy")(pair)
except NameError as error:
    print("NameError:", error)
print(torch.compile(lambda t: torch.ge(t, 0), backend="npy")(pair))

# %%
# Reading a parameter's gradient is a graph break. Dynamo models a tensor
# whose class is not ``torch.Tensor`` or ``nn.Parameter`` (nor a wrapper
# subclass with ``__tensor_flatten__``) as a tensor subclass
# (``infer_subclass_type`` in ``torch/_dynamo/variables/builder.py``), and
# refuses to read these attributes of a subclass (``banned_attrs`` in
# ``torch/_dynamo/variables/torch_function.py``):

import torch._dynamo.variables.torch_function as dynamo_torch_function
from torch._dynamo.utils import counters

print(sorted(dynamo_torch_function.banned_attrs))

# %%
# An npy parameter is an ``NpyTensor``, and ``clip_grad_norm_`` reads each
# parameter's ``.grad``: given a list of npy parameters, it breaks the graph
# there. Given ``module.parameters()``, the usual call, the graph break
# happens with the generator half consumed, which Dynamo cannot rebuild to
# resume after the break ("Generator reconstruction with mutations", with
# ``TORCH_LOGS=graph_breaks``): it gives up on the whole frame (no ``"ok"``
# in its count of frames), which runs eagerly. On CPU the same function is
# one graph. A CPU tensor of a two-line subclass that disables
# ``__torch_function__`` meets the same graph break, so the limit is
# PyTorch's, for every tensor subclass. Upstream: let Dynamo trace a
# subclass that disables ``__torch_function__`` and defines no
# ``__torch_dispatch__`` of its own as the plain tensor it behaves as
# (``infer_subclass_type``), or read a subclass's ``grad`` as a tensor's:


class PlainSubclass(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl


def clip_gradients(tensors):
    return torch.nn.utils.clip_grad_norm_(tensors, 1.0)


def clip_module_gradients(module):
    return torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)


def layer_with_gradients(device):
    layer = torch.nn.Linear(4, 2).to(device)
    layer(torch.ones(3, 4, device=device)).sum().backward()
    return layer


def subclass_leaf_with_gradient():
    leaf = torch.ones(3).as_subclass(PlainSubclass).requires_grad_()
    (leaf * 2).sum().backward()
    return leaf


cpu_layer, npy_layer = layer_with_gradients("cpu"), layer_with_gradients("npy")
for label, clip, argument in (
    ("CPU, parameters()", clip_module_gradients, cpu_layer),
    ("npy, parameters()", clip_module_gradients, npy_layer),
    ("npy, a list", clip_gradients, list(npy_layer.parameters())),
    ("CPU subclass, a list", clip_gradients, [subclass_leaf_with_gradient()]),
):
    counters.clear()
    torch._dynamo.reset()
    torch.compile(clip, backend="eager")(argument)
    breaks = [reason.splitlines()[0] for reason in counters["graph_break"]]
    print(f"{label:21} frames {dict(counters['frames'])}, graph breaks {breaks}")

# %%
# ``make bench`` measures that change as a "what if": the zoo's Transformer
# language model step, whose ``clip_grad_norm_`` reads every parameter's
# ``grad``, compiled by default on npy while ``banned_attrs`` lacks ``grad``
# (``npy_inductor_grad_traced`` in ``benchmarks/groups/zoo.py``), over the
# same step compiled on CPU, beside the ratio of the step as it compiles today:

zoo_ratios = load_benchmarks()["ratios"]
for kind in ("inductor", "inductor_grad_traced"):
    ratio = zoo_ratios[f"zoo_transformer_language_model_{kind}_npy_vs_cpu"]
    print(f"{ratio['formula'].split(' / ')[0]:58} {ratio['value']:.2f}")
