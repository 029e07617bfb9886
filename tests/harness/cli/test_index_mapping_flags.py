"""`harness index --mapping/--field-map`: bad flags and files fail before any cluster is asked (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

NOWHERE = ["--dataset", "sample", "--url", "http://127.0.0.1:9", "--quiet"]


def test_field_map_needs_a_mapping(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", *NOWHERE, "--field-map", "text=body"]) == 2
    assert (
        "--field-map text=body: says where --mapping keeps the corpus, so it needs one"
        in capsys.readouterr().err
    )


def test_a_bad_file_is_named_before_connecting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "team.json"
    path.write_text(
        json.dumps({"mappings": {"properties": {"headline": {"type": "text"}}}}), encoding="utf-8"
    )
    assert main(["index", *NOWHERE, "--mapping", str(path), "--field-map", "text=body"]) == 2
    err = capsys.readouterr().err
    assert (
        "team.json: mappings.properties.body is missing: the text goes there (the field map's text=body)"
        in err
    )
    assert (
        main(
            [
                "index",
                *NOWHERE,
                "--mapping",
                str(path),
                "--analysis",
                "standard",
                "--field-map",
                "text=headline",
            ]
        )
        == 2
    )
    assert "brings its own analysis, similarity and vector field: expected no --analysis with it" in " ".join(
        capsys.readouterr().err.split()
    )
