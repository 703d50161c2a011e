"""The ``npy`` backend of ``torch.compile``: AOTAutograd, then NumPy code.

Dynamo captures the Python function as an FX graph of torch calls and hands
it to :func:`npy_backend`. AOTAutograd traces that graph down to aten ops,
applies :data:`DECOMPOSITIONS` so that few distinct ops remain, and splits
it into a forward and, when gradients are needed, a backward graph; each is
compiled by :func:`~backend_pkg.compiler.codegen.compile_graph` into one
straight-line NumPy function. At run time ``loss.backward()`` calls the
compiled backward as one autograd node.

PyTorch finds the backend by name through the package's entry point in the
``torch_dynamo_backends`` group (``pyproject.toml``): so
``torch.compile(fn, backend="npy")`` works, and ``import backend_pkg`` need
not import Dynamo (which takes over a second) to register it.
"""

import functools

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd

from .codegen import compile_graph

# PyTorch's "core ATen" set: composite ops (nll_loss, mse_loss, threshold_backward,
# _log_softmax_backward_data...) become the ~180 core ops, of which the lowering
# table covers what training a multilayer perceptron reaches. Vector norms stay
# whole, one NumPy call each: torch 2.14 added them to the set, where 2.13 kept them.
KEPT_WHOLE = {torch.ops.aten.linalg_vector_norm.default}
DECOMPOSITIONS = {op: rule for op, rule in core_aten_decompositions().items() if op not in KEPT_WHOLE}


def npy_backend(graph_module, example_inputs, *, on_compiled=None):
    """Compile a Dynamo graph for npy tensors; ``on_compiled`` sees each generated graph."""
    compiler = functools.partial(compile_graph, on_compiled=on_compiled)
    aot = aot_autograd(
        fw_compiler=compiler,
        bw_compiler=compiler,
        decompositions=DECOMPOSITIONS,
        # Writes into graph inputs (an optimizer's updates) stay in the graph, as np.copyto.
        keep_inference_input_mutations=True,
    )
    # A graph that runs ops eagerly on npy tensors passes AOTAutograd's first-call check of
    # custom ops as CPU tensors do (backend_pkg.custom_op_check).
    return aot(graph_module, example_inputs)
