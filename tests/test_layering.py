"""The promises of the package layout: indexer below harness, harness through indexer's public names."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import indexer
from tests._support import REPO


def _imports(package: str) -> list[tuple[Path, int, str, list[str]]]:
    found = []
    for path in sorted((REPO / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def test_indexer_never_imports_harness() -> None:
    wrong = [
        f"{p.relative_to(REPO)}:{line}"
        for p, line, module, _ in _imports("indexer")
        if module.startswith("harness")
    ]
    assert wrong == []


def test_no_function_is_longer_than_80_lines() -> None:
    long = []
    for package in ("harness", "indexer"):
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
        for package in ("indexer", "harness", "bench", "docker")
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
        for package in ("indexer", "harness")
        for p, line, module, _ in _imports(package)
        if module.split(".")[0] in DEV_ONLY
    ]
    assert importers == []
