"""From an ATen graph to straight-line Python that calls NumPy on arrays.

:func:`compile_graph` rewrites an FX graph of aten ops into a new FX graph
over NumPy arrays, and FX turns that into the source of a plain Python
function (``CompiledGraph.code``):

* each npy tensor input is unwrapped once, at entry, into its NumPy array
  (an alias, not a copy);
* each op with a lowering (:data:`~backend_pkg.compiler.lowerings.LOWERINGS`)
  becomes a call of its NumPy implementation on arrays;
* any other op runs eagerly, as the aten op itself on npy tensors: its
  array arguments are wrapped into npy tensors for the call and its results
  unwrapped again, so it is correct, only slower;
* each array output is wrapped once, at exit, into an npy tensor.

Ops whose tensors are not all on the npy device (a copy to the CPU, a CPU
scalar tensor among the operands) also run eagerly, on the tensors as they are.
"""

import functools
from collections import Counter

import numpy as np
import torch
from torch import fx
from torch.utils._pytree import tree_leaves, tree_map

from ..dtypes import to_numpy_dtype
from ..names import DEVICE_NAME
from ..ops.registry import dtype_keyword
from ..tensor import is_npy, unwrap, wrap
from .lowerings import LOWERINGS


class CompiledGraph:
    """The generated function, and which ops it lowered to NumPy and which it ran eagerly.

    AOTAutograd calls it with one list of inputs (its boxed calling
    convention), so the inputs can be freed as soon as the call has them.
    """

    def __init__(self, graph_module, lowered, eager):
        # An instance attribute: Dynamo wraps the backward in a function, with functools.wraps.
        self._boxed_call = True
        self.graph_module = graph_module
        self.lowered = lowered
        self.eager = eager
        self._forward = graph_module.forward

    @property
    def code(self):
        return self.graph_module.code

    def __call__(self, inputs):
        arguments = list(inputs)
        inputs.clear()
        # NumPy warns on overflow and division by zero, PyTorch never does: once per call.
        with np.errstate(all="ignore"):
            return self._forward(*arguments)


def compile_graph(graph_module, example_inputs=None, *, on_compiled=None):
    """Compile ``graph_module`` (aten ops over npy tensors) into a :class:`CompiledGraph`.

    The signature is AOTAutograd's for a compiler; its ``example_inputs`` are
    not needed, since each node's traced value tells its dtype and device.
    ``on_compiled``, if given, is called with the result (to show the
    generated code).
    """
    translation = _Translation(graph_module)
    for node in graph_module.graph.nodes:
        translation.translate(node)
    translation.graph.lint()
    compiled = CompiledGraph(
        fx.GraphModule(translation.attributes, translation.graph, "NumpyGraph"),
        translation.lowered,
        translation.eager,
    )
    if on_compiled is not None:
        on_compiled(compiled)
    return compiled


def _op_name(op):
    return op.name().removeprefix("aten::")


def _numpy_dtypes(value):
    """The NumPy dtype name of a traced result (``"float32"``, which NumPy takes for the
    dtype and the generated code can spell), or the list of them for a list of results
    (None for a result not asked for)."""
    if isinstance(value, (list, tuple)):
        return [None if item is None else to_numpy_dtype(item.dtype).name for item in value]
    return to_numpy_dtype(value.dtype).name


def _common_dtype(node):
    """The NumPy dtype name of the dtype a comparison's two operands promote to, as traced."""
    operands = [arg.meta["val"] if isinstance(arg, fx.Node) else arg for arg in node.args[:2]]
    return to_numpy_dtype(torch.result_type(*operands)).name


@functools.cache
def run_eagerly(op):
    """A function that calls ``op`` on npy tensors made from (and turned back into) arrays."""

    def eager(*args, **kwargs):
        args, kwargs = tree_map(_as_tensor, (args, kwargs))
        return tree_map(_as_array, op(*args, **kwargs))

    eager.__name__ = f"eager_{op.__name__.replace('.', '_')}"
    return eager


def _as_tensor(value):
    # Reductions to 0 dims give NumPy scalars, not arrays.
    return wrap(value) if isinstance(value, (np.ndarray, np.generic)) else value


def _as_array(value):
    return unwrap(value) if is_npy(value) else value


class _Translation:
    """The new graph, filled one node of the traced graph at a time."""

    def __init__(self, graph_module):
        self.source = graph_module
        self.graph = fx.Graph()
        self.attributes = torch.nn.Module()
        self.lowered = Counter()
        self.eager = Counter()
        # Traced node -> its counterpart in the new graph, an array for an npy tensor.
        self.values = {}
        self.placeholders = {}

    def translate(self, node):
        translate = getattr(self, f"_{node.op}")
        self.values[node] = translate(node)

    def _new(self, value):
        return fx.node.map_arg(value, self.values.__getitem__)

    def _placeholder(self, node):
        placeholder = self.graph.placeholder(node.name)
        self.placeholders[node] = placeholder
        if is_npy(node.meta.get("val")):
            return self.graph.create_node("call_function", unwrap, (placeholder,), name=f"{node.name}_array")
        return placeholder

    def _get_attr(self, node):
        value = getattr(self.source, node.target)
        if is_npy(value):
            value = unwrap(value)
        name = node.target.replace(".", "_")
        setattr(self.attributes, name, value)
        return self.graph.get_attr(name)

    def _call_function(self, node):
        args, kwargs = self._new(node.args), self._new(node.kwargs)
        op = node.target
        if not isinstance(op, torch._ops.OperatorBase):
            return self.graph.call_function(op, args, kwargs)  # getitem, arithmetic on sizes
        implementation = LOWERINGS.get(op)
        if implementation is None or not self._all_on_npy(node):
            self.eager[_op_name(op)] += 1
            return self.graph.call_function(run_eagerly(op), args, kwargs)
        self.lowered[_op_name(op)] += 1
        keyword = dtype_keyword(implementation)
        if keyword == "out_dtype":
            kwargs = {**kwargs, "out_dtype": _numpy_dtypes(node.meta["val"])}
        elif keyword == "common_dtype":
            kwargs = {**kwargs, "common_dtype": _common_dtype(node)}
        return self.graph.call_function(implementation, args, kwargs)

    @staticmethod
    def _all_on_npy(node):
        values = [node.meta.get("val"), *(arg.meta.get("val") for arg in node.all_input_nodes)]
        tensors = [value for value in tree_leaves(values) if isinstance(value, torch.Tensor)]
        return all(tensor.device.type == DEVICE_NAME for tensor in tensors)

    def _output(self, node):
        wrapped = {}

        def output(item):
            if item in self.placeholders:  # an input returned as it came
                return self.placeholders[item]
            if not is_npy(item.meta.get("val")):
                return self.values[item]
            if item not in wrapped:
                wrapped[item] = self.graph.call_function(wrap, (self.values[item],))
            return wrapped[item]

        return self.graph.output(fx.node.map_arg(node.args[0], output))
