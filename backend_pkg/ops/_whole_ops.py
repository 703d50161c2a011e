"""What the kernels npy registers at ``AutogradPrivateUse1`` share: a composite op computed whole.

PyTorch runs a CompositeImplicitAutograd op (``linear``,
``scaled_dot_product_attention``) as the ops it is made of, each through the
dispatcher and, on npy, through Python: forward and backward. Registered at
``AutogradPrivateUse1``, an ``autograd.Function`` computes the op in one
NumPy forward and one NumPy backward instead. PyTorch's own kernel still
serves everything else: the calls the NumPy kernel does not take (errors
included) and a backward that must itself be differentiable.
"""

import torch

from ..names import DEVICE_NAME
from ..tensor import NpyTensor


def composite(op, *args, **kwargs):
    """PyTorch's CompositeImplicitAutograd kernel of ``op``: the op as the ops it is made of."""
    return op._op_dk(torch._C.DispatchKey.CompositeImplicitAutograd, *args, **kwargs)


def plain_npy(tensor):
    """A strided npy tensor whose memory is NumPy's: not nested, fake, functional or functorch."""
    return (
        type(tensor) in (NpyTensor, torch.Tensor)
        and tensor.device.type == DEVICE_NAME
        and tensor.layout == torch.strided
        and not tensor.is_nested
        and not torch._C._functorch.is_functorch_wrapped_tensor(tensor)
    )


def differentiable_gradients(recompute, inputs, grad):
    """The gradients of ``recompute()`` (the composite, on ``inputs``) for ``grad``, recorded as they
    are computed: a backward under ``create_graph`` whose result a second backward differentiates.
    None for an input that needs no gradient."""
    with torch.enable_grad():
        output = recompute()
    wanted = [tensor for tensor in inputs if tensor is not None and tensor.requires_grad]
    grads = iter(torch.autograd.grad(output, wanted, grad, create_graph=True))
    return tuple(next(grads) if tensor is not None and tensor.requires_grad else None for tensor in inputs)
