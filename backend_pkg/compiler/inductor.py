"""``torch.compile(fn)``, whose default backend is Inductor, refuses npy tensors by name.

Inductor generates C++ (CPU) or Triton (GPU) kernels. npy memory is host
memory, so its CPU kernels can compute on it directly: in an experiment with
torch 2.13.0, registering ``CppScheduling`` and a ``PythonWrapperCodegen``
subclass for the device (``torch._inductor.codegen.common.register_backend_for_device``),
with ``CpuDeviceOpOverrides`` and Dynamo's ``CpuInterface``, and switching
the joint-graph passes off, Inductor compiled and correctly ran
``relu(x @ w).sum(1)`` on npy tensors. It stops short of a working backend
at places a Python backend cannot reach without patching PyTorch itself:

* Inductor's joint-graph passes first build their pattern library on the
  input device (``lazy_init`` in ``torch/_inductor/fx_passes/joint_graph.py``
  calls ``_sfdp_init``, whose ``_get_sfdp_patterns`` in
  ``torch/_inductor/fx_passes/fuse_attention.py`` makes
  ``torch.tensor(2.0, device=input_device)`` under ``FakeTensorMode``). The
  real npy tensor that makes is an NpyTensor, and ``FakeTensorMode`` treats
  every tensor subclass as one it must not handle
  (``_check_for_subclass_arg`` in ``torch/_subclasses/fake_tensor.py``):
  every compile fails there, unless ``use_joint_graph_passes`` is turned off
  for the whole process.
* Inductor picks its CPU code paths by ``device.type == "cpu"``, not by the
  scheduling registered for a device: ``PythonWrapperCodegen._generate_kernel_call_helper``
  (``torch/_inductor/codegen/wrapper.py``) raises "device npy nyi" for a C++
  kernel on another device, and ``Scheduler._try_reindex_pointwise_for_reduction``
  (``torch/_inductor/scheduler.py``) reads a C++ reduction's loop groups as
  GPU ones and fails on the cross-entropy of a training step
  (``BaseSchedulerNode.is_cpu``).

So :func:`install` wraps Inductor's entry point, ``torch.compile``'s
``_TorchCompileInductorWrapper`` (``torch/__init__.py``), to refuse a graph
with npy inputs at once, with a message that names the backend that works,
instead of failing deep inside Inductor.
"""

import functools

import torch

from ..tensor import DEVICE_NAME

MESSAGE = (
    "npy device: Inductor, torch.compile's default backend, cannot compile npy tensors: it "
    "generates C++ or Triton kernels for the devices it knows, and its graph passes cannot trace "
    'the NpyTensor subclass. Use the npy backend, which compiles each graph to NumPy code: '
    'torch.compile(fn, backend="npy")'
)

_installed = False


def install():
    """Make Inductor refuse npy graphs with :data:`MESSAGE`; does nothing the second time."""
    global _installed
    if not _installed:
        wrapper = torch._TorchCompileInductorWrapper
        wrapper.__call__ = _refusing_npy(wrapper.__call__)
        _installed = True


def _refusing_npy(compile_with_inductor):
    @functools.wraps(compile_with_inductor)
    def call(self, graph_module, example_inputs, **kwargs):
        if any(isinstance(value, torch.Tensor) and value.device.type == DEVICE_NAME for value in example_inputs):
            raise RuntimeError(MESSAGE)
        return compile_with_inductor(self, graph_module, example_inputs, **kwargs)

    return call
