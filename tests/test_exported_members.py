"""Every package says what it exports, and exports what it says (httpx's tests/test_exported_members.py, for
every package of the three layers): each name in ``__all__`` is bound, once; and each public name the package
offers of its own (defined in its ``__init__.py``, or imported there from one of its own modules) is in
``__all__``. What an ``__init__.py`` imports for its own code from elsewhere (``Any``, ``Path``, an error
class of ``base``) is not offered. The one package without ``__all__`` is the CLI's edge (``harness.cli``),
whose public thing is the ``harness`` command line."""

from __future__ import annotations

import ast
import importlib

import pytest

from tests._support import REPO

WITHOUT_ALL = frozenset({"harness.cli"})


def _packages() -> list[str]:
    return sorted(
        ".".join(init.parent.relative_to(REPO).parts)
        for top in ("base", "indexer", "harness")
        for init in (REPO / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    )


def _offered(name: str) -> set[str]:
    """The public names a package's ``__init__.py`` defines, or imports from the package's own modules."""
    init = REPO.joinpath(*name.split("."), "__init__.py")
    offered = set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            own = node.level > 0 or (node.module or "").startswith(f"{name}.")
            offered |= {a.asname or a.name for a in node.names} if own else set()
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            offered.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            offered |= {t.id for t in targets if isinstance(t, ast.Name)}
    return {n for n in offered if not n.startswith("_")}


def test_every_package_of_the_three_layers_is_checked() -> None:
    assert {"base", "indexer", "indexer.embed", "harness", "harness.run", "harness.judgments.judge"} <= set(
        _packages()
    )


@pytest.mark.parametrize("name", _packages())
def test_all_is_what_the_package_offers(name: str) -> None:
    package = importlib.import_module(name)
    exported = getattr(package, "__all__", None)
    if name in WITHOUT_ALL:
        assert exported is None
        return
    assert exported is not None, f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ names something twice"
    assert [n for n in exported if not hasattr(package, n)] == [], (
        f"{name}.__all__ names what it does not bind"
    )
    assert sorted(_offered(name) - set(exported)) == [], f"{name} offers public names beyond its __all__"
