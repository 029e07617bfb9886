"""The promises of the package layout, three layers: ``base`` (what every layer shares) below ``indexer``
(data into the engine, and the engine) below ``harness`` (queries, runs, scores, reports); each layer reaches
the ones below only through their public names."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import types
from pathlib import Path

import base
import indexer
from tests._support import REPO


@functools.cache
def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module, parsed once for all the tests of this file."""
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


@functools.cache
def _imports(package: str) -> list[tuple[Path, int, str, list[str]]]:
    found = []
    for path in sorted((REPO / package).rglob("*.py")):
        for node in _nodes(path):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append((path, node.lineno, node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found += [(path, node.lineno, a.name, []) for a in node.names]
    return found


def test_harness_imports_only_what_indexer_exports() -> None:
    exported = set(indexer.__all__)
    wrong = [
        f"{p.relative_to(REPO)}:{line}: {module} {names}"
        for p, line, module, names in _imports("harness")
        if module.startswith("indexer") and (module != "indexer" or not set(names) <= exported)
    ]
    assert wrong == [], "harness must import only names listed in indexer/__init__.py"


def test_every_name_indexer_exports_is_used_by_the_harness() -> None:
    """Issue 20: indexer's public surface is what the harness uses, nothing more (tests and bench reach the
    rest through a subpackage's own ``__all__``, or a private module where there is no package surface)."""
    used = {name for _, _, module, names in _imports("harness") if module == "indexer" for name in names}
    assert sorted(set(indexer.__all__) - used) == [], (
        "exported by indexer/__init__.py, imported nowhere in harness/"
    )


def test_indexer_binds_no_public_name_beyond_its_all() -> None:
    bound = {
        name
        for name, value in vars(indexer).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert sorted(bound - set(indexer.__all__)) == []


def test_harness_and_indexer_import_only_what_base_exports() -> None:
    exported = set(base.__all__)
    wrong = [
        f"{p.relative_to(REPO)}:{line}: {module} {names}"
        for package in ("harness", "indexer")
        for p, line, module, names in _imports(package)
        if module.split(".")[0] == "base" and (module != "base" or not set(names) <= exported)
    ]
    assert wrong == [], "harness and indexer must import only names listed in base/__init__.py"


def test_every_name_base_exports_is_used_above_it() -> None:
    """The exception tree aside: every class of it is public, for users to catch (``CacheError`` is
    raised by the store, and named only by the tests and by users)."""
    used = {
        name
        for package in ("harness", "indexer")
        for _, _, module, names in _imports(package)
        if module == "base"
        for name in names
    }
    tree = {
        name
        for name in base.__all__
        if isinstance(getattr(base, name), type) and issubclass(getattr(base, name), base.HarnessError)
    }
    assert sorted(set(base.__all__) - used - tree) == [], (
        "exported by base/__init__.py, imported nowhere above it"
    )


def test_base_imports_neither_layer_above_it() -> None:
    wrong = [
        f"{p.relative_to(REPO)}:{line}: {module}"
        for p, line, module, _ in _imports("base")
        if module.split(".")[0] in {"indexer", "harness"}
    ]
    assert wrong == []


def test_indexer_never_imports_harness() -> None:
    wrong = [
        f"{p.relative_to(REPO)}:{line}"
        for p, line, module, _ in _imports("indexer")
        if module.startswith("harness")
    ]
    assert wrong == []


def test_no_function_is_longer_than_80_lines() -> None:
    long = []
    for package in ("base", "harness", "indexer"):
        for path in (REPO / package).rglob("*.py"):
            for node in _nodes(path):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                    length = node.end_lineno - node.lineno + 1
                    if length > 80:
                        long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


def test_packaging_metadata_builds_without_a_single_warning(tmp_path: Path) -> None:
    """Defect: the README's first command printed ~40 lines of setuptools deprecation warnings
    (``project.license`` as a TOML table) before anything of ours."""
    code = "import setuptools.build_meta as b, sys; b.prepare_metadata_for_build_wheel(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code, str(tmp_path)], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr


#: the packages of the search clients: only the backends (indexer/backends/) may import them
SEARCH_CLIENTS = frozenset({"elasticsearch", "elastic_transport", "opensearchpy"})


def test_only_the_backends_import_a_search_client() -> None:
    """Issue 11: every module of the product talks to a cluster through the Backend seam, so both
    engines work behind every command; a client import anywhere else (even inside a function) fails."""
    backends = REPO / "indexer" / "backends"
    importers = {
        f"{p.relative_to(REPO)}:{line}: {module}"
        for package in ("base", "indexer", "harness", "bench", "docker")
        for p, line, module, _ in _imports(package)
        if module.split(".")[0] in SEARCH_CLIENTS and not p.is_relative_to(backends)
    }
    assert importers == set()
    by_backends = {
        str(p.relative_to(REPO))
        for p, _, module, _ in _imports("indexer")
        if module.split(".")[0] in SEARCH_CLIENTS
    }
    assert by_backends == {"indexer/backends/_elasticsearch.py", "indexer/backends/_opensearch.py"}


#: dev-only packages (the test PKI's ``cryptography``): the product never imports them
DEV_ONLY = frozenset({"cryptography"})


def test_the_product_never_imports_a_dev_only_package() -> None:
    """Issue 20: the test PKI (tests/_pki.py) lives with the tests, so a user's install needs no dev package."""
    importers = [
        f"{p.relative_to(REPO)}:{line}: {module}"
        for package in ("base", "indexer", "harness")
        for p, line, module, _ in _imports(package)
        if module.split(".")[0] in DEV_ONLY
    ]
    assert importers == []


# --------------------------------------------------------------- import cycles and private names

#: import edges (importer, imported) that close a cycle today, inside harness/run only:
#: underscore names that are public API: the namedtuple methods
PUBLIC_UNDERSCORE = frozenset({"_asdict", "_fields", "_make", "_replace"})


def _modules() -> dict[str, Path]:
    """Every module of base/, harness/ and indexer/ by dotted name (a package by its own name)."""
    found = {}
    for package in ("base", "harness", "indexer"):
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules ``name`` imports anywhere in its file: at the top, inside functions, under
    ``if TYPE_CHECKING:``. ``from P import x`` is an edge to the module P.x when x is a module, else to P."""
    found = set()
    for node in _nodes(path):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.add(target)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_cycle_not_even_under_type_checking() -> None:
    """Issue 20: two cycles were closed only through TYPE_CHECKING imports; a cycle is a design that has
    not decided which module is below the other, whether or not Python happens to import it."""
    modules = _modules()
    graph = {name: _imported_modules(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _own_private_names(nodes: tuple[ast.AST, ...]) -> set[str]:
    """The underscore names a module defines itself: functions, classes, assigned names, and attributes
    it sets on ``self``/``cls`` or declares in a class body (dataclass fields)."""
    own = set()
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                own.add(node.attr)
        elif isinstance(node, ast.alias):
            own.add(node.asname or node.name)
    return {name for name in own if name.startswith("_")}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """``from X import _name`` (except a package importing its own private submodules) and ``obj._name``
    of a name this module does not define (``self``/``cls`` and dunders aside)."""
    own = _own_private_names(_nodes(path))
    folder = path.parent
    found = []
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                submodule = modules.get(f"{node.module}.{alias.name}")
                own_submodule = submodule is not None and submodule.parent in {folder, folder / alias.name}
                if _is_private(alias.name) and not own_submodule:
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif (
            isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in PUBLIC_UNDERSCORE
        ):
            is_self = isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}
            if not is_self and node.attr not in own:
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_reaches_into_another_modules_private_names() -> None:
    """Issue 20: ``_docker_engine.py`` imported ``_engine``'s private ``_port_open``, and ``run/_perf.py``
    calls private methods of ``Executor``; what another module needs is public, or it stays inside."""
    modules = _modules()
    found = {
        (str(path.relative_to(REPO)), what): line
        for path in modules.values()
        for line, what in _private_uses(path, modules)
    }
    wrong = sorted(f"{where}:{line}: {what}" for (where, what), line in found.items())
    assert wrong == []
