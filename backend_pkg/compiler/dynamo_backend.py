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

import torch._functorch.config
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
    graphs = []

    def compiled(graph):
        graphs.append(graph)
        if on_compiled is not None:
            on_compiled(graph)

    aot = aot_autograd(
        fw_compiler=functools.partial(compile_graph, on_compiled=compiled),
        bw_compiler=functools.partial(compile_graph, on_compiled=compiled),
        decompositions=DECOMPOSITIONS,
        # Writes into graph inputs (an optimizer's updates) stay in the graph, as np.copyto.
        keep_inference_input_mutations=True,
    )
    function = aot(graph_module, example_inputs)
    return _WithoutCustomOpCheck(function) if any(graph.eager for graph in graphs) else function


class _WithoutCustomOpCheck:
    """A compiled function that runs ops eagerly on npy tensors, called with AOTAutograd's
    check of custom ops off.

    At the first call with the check on, AOTAutograd runs the graph under a
    dispatch mode that checks custom ops for aliasing and gives up on every
    tensor subclass it does not know (``_AnalyzeCustomOpInputOutputMode`` in
    ``torch/_functorch/_aot_autograd/runtime_wrappers.py``), so an op that
    the generated code runs eagerly on npy tensors fails there. npy defines
    no custom ops; the check (``torch._functorch.config.check_custom_op_aliasing``)
    is off during these calls only. A graph whose ops are all lowered to
    NumPy calls no aten op on an npy tensor, and is returned as it is.
    """

    def __init__(self, function):
        self.function = function

    def __call__(self, *args):
        with torch._functorch.config.patch(check_custom_op_aliasing=False):
            return self.function(*args)
