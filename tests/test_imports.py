"""The code imports in one direction: no import cycle in ``backend_pkg/``, ``tools/``, ``benchmarks/``, ``ddp_demo/``.

The graph is read from the source with :mod:`ast`, not by importing it: every
``import`` statement counts, at module level or inside a function (an import
deferred into a function still runs, so a cycle it closes is still a cycle),
relative imports resolved against the importing module. ``from X import a``
is an edge to ``X.a`` when that is a module of the tree, else to ``X``.
Importing ``X.a`` runs ``X/__init__.py`` first, so that is an edge too, except
to the importer's own packages, which are running already (every module of
``backend_pkg`` is imported through ``backend_pkg/__init__.py``). An import
made by ``importlib`` (``ops/__init__.py`` imports each family so) is no edge:
the graph reads statements, not strings.
``python -m pytest tests/test_imports.py -q -s`` prints each graph's longest import chain.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def module_names(folder, package):
    """``{module name: path}`` for every ``.py`` file under ``folder``; ``package`` is their
    dotted prefix, or ``""`` for a folder of scripts that import each other by bare name."""
    names = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(filter(None, [package, *parts]))] = path
    return names


def imported_modules(tree, module, is_package, modules):
    """The modules of ``modules`` that ``tree``'s import statements name, anywhere in the file:
    ``from X import a`` names ``X.a`` when that is a module, else ``X``; relative imports are
    resolved against ``module``."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            source = ".".join(filter(None, [*base, node.module or ""]))
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    yield submodule
                elif source in modules:
                    yield source


def packages_of(module):
    """``a``, ``a.b`` for ``a.b.c``: the packages Python runs before the module."""
    parts = module.split(".")
    return {".".join(parts[:end]) for end in range(1, len(parts))}


def import_graph(folder, package):
    """``{module: set of the tree's modules it imports}``."""
    modules = module_names(folder, package)
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        imported = set(imported_modules(tree, module, path.name == "__init__.py", modules))
        running = packages_of(module) | {module}
        run_first = {name for target in imported for name in packages_of(target) if name in modules}
        graph[module] = (imported | run_first) - running
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def a_loop(graph, component):
    """One import loop through ``component``, as ``a -> b -> ... -> a``."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}
    while True:
        following = sorted(target for target in graph[path[-1]] if target in members)
        closing = [target for target in following if target in seen]
        if closing:
            loop = path[path.index(closing[0]) :] + [closing[0]]
            return " -> ".join(loop)
        step = following[0]
        path.append(step)
        seen.add(step)


def longest_chain(graph):
    """The longest chain of imports, ``[module, what it imports, ...]``, in a graph without cycles."""
    chains = {}

    def chain_from(node):
        if node not in chains:
            longest = max((chain_from(target) for target in graph[node]), key=len, default=[])
            chains[node] = [node, *longest]
        return chains[node]

    return max((chain_from(node) for node in sorted(graph)), key=len)


TREES = {
    "backend_pkg": (ROOT / "backend_pkg", "backend_pkg"),
    "tools": (ROOT / "tools", ""),
    "benchmarks": (ROOT / "benchmarks", "benchmarks"),
    "ddp_demo": (ROOT / "ddp_demo", "ddp_demo"),
}


@pytest.mark.parametrize("tree", TREES)
def test_no_import_cycle(tree):
    graph = import_graph(*TREES[tree])
    found = [f"{', '.join(component)}; one loop: {a_loop(graph, component)}" for component in cycles(graph)]
    assert not found, f"import cycles in {tree}/:\n" + "\n".join(found)
    chain = longest_chain(graph)
    print(f"\n{tree}: longest import chain, {len(chain)} modules: {' -> '.join(chain)}")


def test_the_graph_reads_every_kind_of_import(tmp_path):
    """Relative, absolute, module-level and deferred imports all make edges, and so does the package
    a module is imported through; a cycle is named."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from .a import A\n")
    (package / "a.py").write_text("from .sub import b\nA = 1\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text("import pkg.c\n")
    (package / "c.py").write_text("def later():\n    from .a import A\n")
    graph = import_graph(package, "pkg")
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub", "pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.c"},
        "pkg.c": {"pkg.a"},
    }
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert a_loop(graph, cycles(graph)[0]) == "pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"


# The folders whose modules the README's "Where things live" map must name, each module by its path.
MAPPED_FOLDERS = ("backend_pkg", "minimal", "ddp_demo", "benchmarks", "tools")


def map_rows(readme):
    """The rows of the README's "Where things live" table, as (path cell, description cell)."""
    section = readme.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|", 1) for line in section.splitlines() if line.startswith("| `")]
    return [(path.strip(), description.strip()) for path, description in rows]


def mapped_paths(readme):
    """Every file the map names: a row's path cell names whole paths, and bare file names in the
    folder of the path before them; a folder's row (``backend_pkg/compiler/``) names the files of
    that folder its description names. A pattern (``ops/*.py``) names none."""
    named = set()
    for path_cell, description in map_rows(readme):
        folder = ""
        for entry in re.findall(r"`([^`]+)`", path_cell):
            if "*" in entry:
                continue
            if "/" in entry:
                folder = entry if entry.endswith("/") else entry.rsplit("/", 1)[0] + "/"
                named.add(entry)
            else:
                named.add(folder + entry)
            if entry.endswith("/"):
                named.update(entry + name for name in re.findall(r"`([\w/]+\.\w+)`", description))
    return named


def test_every_module_is_in_the_readme_map():
    named = mapped_paths((ROOT / "README.md").read_text())
    modules = [
        path.relative_to(ROOT).as_posix()
        for folder in MAPPED_FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name != "__init__.py"
    ]
    missing = [module for module in modules if module not in named]
    assert not missing, 'modules the README\'s "Where things live" map does not name:\n' + "\n".join(missing)


def test_every_op_family_has_a_test_file_of_its_name():
    """``tests/ops/`` mirrors ``backend_pkg/ops/``: a family's tests are where its name says, so a
    change to ``ops/views.py`` knows ``tests/ops/test_views.py`` to run (private helpers, ``ops/_*.py``,
    are tested through the families)."""
    families = [path.stem for path in sorted((ROOT / "backend_pkg" / "ops").glob("[!_]*.py"))]
    missing = [
        f"tests/ops/test_{family}.py"
        for family in families
        if not (ROOT / "tests" / "ops" / f"test_{family}.py").is_file()
    ]
    assert not missing, "op families without a test file of their name:\n" + "\n".join(missing)
