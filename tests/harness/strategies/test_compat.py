"""The compatibility table of docs/engines.md is generated from the declarations, and current."""

from __future__ import annotations

from harness.strategies import ARMS, arm_support
from harness.strategies._compat import DOC, compat_markdown, main, render
from indexer import declared_capabilities


def test_the_table_in_the_docs_is_current() -> None:
    assert main(["--check"]) == 0, "docs/engines.md is stale: run python -m harness.strategies._compat"
    assert compat_markdown() in DOC.read_text(encoding="utf-8")


def test_a_stale_table_is_found() -> None:
    text = DOC.read_text(encoding="utf-8").replace("| arm `lexical` | yes", "| arm `lexical` | no", 1)
    assert render(text) != text


def test_cells_are_what_a_run_does() -> None:
    """7.17 runs the vector arm exactly and skips the in-engine sum; 8.4 brought approximate kNN; OpenSearch
    before 2.16 cannot send the knn query the harness writes."""
    es717, es84 = (
        declared_capabilities("elasticsearch", "7.17.29"),
        declared_capabilities("elasticsearch", "8.4"),
    )
    assert arm_support(ARMS["vector"], es717).exact and arm_support(ARMS["vector"], es84).how == "runs"
    assert arm_support(ARMS["hybrid-engine-sum"], es717).skipped
    assert "8.4 or newer" in arm_support(ARMS["hybrid-engine-sum"], es717).why
    assert arm_support(ARMS["vector"], declared_capabilities("opensearch", "2.10")).how == "fails"
    assert not arm_support(ARMS["hybrid-engine-query"], declared_capabilities("opensearch", "3.5.0")).skipped
