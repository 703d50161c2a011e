"""``torch.compile`` for the npy device.

* :mod:`.tracing`: what PyTorch's tracing needs from the device;
* :mod:`.inductor`: Inductor's C++ code generation for npy graphs (imported by
  Inductor itself, through :mod:`backend_pkg.device`), and :mod:`.host`, the
  edges of its graphs;
* :mod:`.lowerings`: the table from aten ops to NumPy functions (most of them the
  ops' own, from :mod:`backend_pkg.ops`);
* :mod:`.codegen`: an aten graph turned into straight-line NumPy code;
* :mod:`.dynamo_backend`: the ``npy`` backend, AOTAutograd around that code
  generation (imported only when ``torch.compile`` asks for it by name).

The package imports none of them: importing one submodule (``torch.npy``
takes :mod:`.inductor`) runs this file, and an
import of the code generation here would bring the op families back in, a loop.
"""
