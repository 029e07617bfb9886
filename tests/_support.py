"""Helpers shared by tests (importable as ``tests._support``)."""

from __future__ import annotations

import os
from pathlib import Path

from indexer import EngineConfig, default_cache_dir, default_state_dir

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
SCIFACT = SHARED / "datasets" / "scifact"
R2MED_DEMO = SHARED / "fixtures" / "r2med-biology-demo"


def test_engine_config(name: str = "pytest", port: int | None = None, **kwargs: object) -> EngineConfig:
    """An EngineConfig for test-managed nodes (state beside the default one)."""
    return EngineConfig(
        state_dir=default_state_dir(),
        cache_dir=default_cache_dir(),
        name=name,
        http_port=port or int(os.environ.get("R2MED_TEST_PORT", "9201")),
        heap=os.environ.get("R2MED_TEST_HEAP", "1g"),
        **kwargs,  # type: ignore[arg-type]
    )


test_engine_config.__test__ = False  # type: ignore[attr-defined]
