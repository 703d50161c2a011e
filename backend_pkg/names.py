"""The name the backend goes by, in a module that imports nothing, so any module can read it.

``"npy"`` is the name PrivateUse1 is renamed to (``torch.device("npy")``,
``torch.npy``, ``Tensor.npy()``), the name of the ``torch.compile`` backend,
and the device type every npy tensor reports.
"""

DEVICE_NAME = "npy"
