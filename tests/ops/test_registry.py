"""Adding a kernel cannot fail silently or hide: every family registers, every kernel made is registered, and
each registration is written, and named, in the family that declares it."""

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest
import torch

import backend_pkg.ops
from backend_pkg.ops import registry
from backend_pkg.ops.registry import AUTOGRAD_KERNELS, KERNELS, LOWERINGS, NESTED_KERNELS

FAMILIES = [
    importlib.import_module(f"backend_pkg.ops.{module.name}")
    for module in pkgutil.iter_modules(backend_pkg.ops.__path__)
    if not module.name.startswith("_") and module.name != "registry"
]
FAMILY_NAMES = {family.__name__ for family in FAMILIES}


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
    assert FAMILY_NAMES - registering == set()


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
    assert modules <= FAMILY_NAMES | {"backend_pkg.compiler.lowerings"}


def _registrations():
    """Every (overload, function) the op families register: the eager kernels of each key and their
    lowerings. (The compiler's own lowerings, views, copies, factories and foreach, are left out.)"""
    lowerings = [(op, function) for op, function in LOWERINGS.items() if function.__module__ in FAMILY_NAMES]
    return [*KERNELS.items(), *NESTED_KERNELS.items(), *AUTOGRAD_KERNELS.items(), *lowerings]


def _named_literally(op, source):
    """Whether ``source`` names ``op`` as code does, ``aten.eq.Tensor``."""
    packet, overload = op._schema.name.split("::")[1], op._overloadname
    return f"aten.{packet}.{overload}" in source


def test_every_registration_names_its_overload_in_the_module_of_its_kernel():
    """``grep aten.<op>`` lands on the registration, and a kernel's module (in tracebacks) is that file."""
    unnamed = [
        f"{op} -> {function.__module__}.{function.__qualname__}"
        for op, function in _registrations()
        if not _named_literally(op, inspect.getsource(sys.modules[function.__module__]))
    ]
    assert unnamed == []


def test_every_kernel_is_named_as_its_family_declares_it():
    """A traceback shows ``add_kernel_out`` or ``exp_kernel``, never the factory or the registry that made it."""
    anonymous = [
        f"{op} -> {function.__module__}.{function.__qualname__}"
        for op, function in _registrations()
        if "<locals>" in function.__qualname__ or function.__module__ == registry.__name__
    ]
    assert anonymous == []


def test_the_readme_says_which_decorator_when_as_the_registry_does():
    """The README's table is the first sentence, up to its colon, of each name of the vocabulary."""
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    rows = [f"| `{verb.__name__}` | {registry.when_to_use(verb)} |" for verb in registry.VOCABULARY]
    assert [row for row in rows if row not in readme] == []


def test_registered_ops_cover_the_minimal_backend():
    """What minimal/python_backend.py registers, npy registers too, but for detach: npy leaves it to
    PyTorch's C++ kernel, so that results have no Python object yet (see backend_pkg.tensor.detached)."""
    minimal = {
        "aten::empty.memory_format",
        "aten::empty_strided",
        "aten::_copy_from",
        "aten::_to_copy",
        "aten::view",
        "aten::as_strided",
        "aten::ones_like",
        "aten::expand",
        "aten::sum",
        "aten::sum.dim_IntList",
        "aten::add.Tensor",
        "aten::mul.Tensor",
    }
    assert minimal <= set(backend_pkg.registered_ops())


def test_no_kernel_hides_a_composite():
    """A backend kernel for a CompositeImplicitAutograd op would bypass its autograd formula."""
    composite = [
        name
        for name in backend_pkg.registered_ops()
        if torch._C._dispatch_has_kernel_for_dispatch_key(name, "CompositeImplicitAutograd")
    ]
    assert composite == []


def test_a_misspelt_pointwise_kind_is_refused_not_read_as_true():
    with pytest.raises(TypeError, match="pointwise is True, False or 'exact_dtype', not 'exact dtype'"):
        registry.implements(torch.ops.aten.neg.default, pointwise="exact dtype")
