"""Adding a kernel cannot fail silently: every family registers, and every kernel made is registered."""

import importlib
import pkgutil

import backend_pkg.ops
from backend_pkg.ops.registry import KERNELS, LOWERINGS, NESTED_KERNELS

FAMILIES = [
    importlib.import_module(f"backend_pkg.ops.{module.name}")
    for module in pkgutil.iter_modules(backend_pkg.ops.__path__)
    if not module.name.startswith("_") and module.name != "registry"
]


def _registered_functions():
    """The registered kernels, and every function they wrap (``functools.wraps``' ``__wrapped__``)."""
    functions = set()
    for kernel in [*KERNELS.values(), *NESTED_KERNELS.values()]:
        while kernel is not None and kernel not in functions:
            functions.add(kernel)
            kernel = getattr(kernel, "__wrapped__", None)
    return functions


def test_every_family_module_registers_kernels():
    registering = {kernel.__module__ for kernel in _registered_functions()}
    assert {family.__name__ for family in FAMILIES} - registering == set()


def test_every_public_kernel_made_from_a_numpy_function_is_registered():
    registered = _registered_functions()
    made = {
        f"{family.__name__}.{name}": value
        for family in FAMILIES
        for name, value in vars(family).items()
        if not name.startswith("_") and hasattr(value, "numpy_function")
    }
    assert made, "no kernel made with computed_by was found"
    assert [name for name, kernel in made.items() if kernel not in registered] == []


def test_every_lowering_is_a_numpy_function_of_the_ops_or_the_compiler():
    modules = {function.__module__ for function in LOWERINGS.values()}
    assert modules <= {family.__name__ for family in FAMILIES} | {"backend_pkg.compiler.lowerings"}
