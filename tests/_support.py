"""Helpers shared by tests (importable as ``tests._support``)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from base import default_cache_dir, default_state_dir
from indexer import Backend, ConnectionSettings, EngineConfig
from indexer.node.flavours import EngineFlavour, MavenArtifact, get_engine

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


def drop_indices(backend: Backend, pattern: str) -> None:
    """Delete the indices matching ``pattern``, one by name (clusters may refuse wildcard deletes:
    ``action.destructive_requires_name``). Test nodes keep their data between sessions, so a test that
    counts what it creates starts from this."""
    for stats in backend.list_indices(pattern):
        backend.delete_index(stats.name)


def test_os_port() -> int:
    """The port of the test session's OpenSearch node (``$R2MED_TEST_OS_PORT``, default 9211)."""
    return int(os.environ.get("R2MED_TEST_OS_PORT", "9211"))


test_os_port.__test__ = False  # type: ignore[attr-defined]

#: An OpenSearch 2.x for the "what does a 2.x cluster lack" tests: the 2.19.1 integ-test zip (a bare build:
#: transport-netty4 only) runs on Java 11 to 21 (its launcher fails on 25), so on Java 17 here.
LEGACY_OPENSEARCH: EngineFlavour = dataclasses.replace(
    get_engine("opensearch"),
    version="2.19.1",
    distribution=MavenArtifact(
        group="org.opensearch.distribution.integ-test-zip",
        artifact="opensearch",
        version="2.19.1",
        sha256="af7152d8b7f6f1cee09d47276b32b70479fe6dd8cdbb61213f84eb7f8098b261",
    ),
    plugins=(),
    min_java=11,
    max_java=21,
    distribution_var="R2MED_TEST_LEGACY_OS_DISTRIBUTION",
)


def fetch_artifact(artifact: MavenArtifact) -> Path:
    """The artifact from the local Maven repository, resolved with ``mvn`` when absent; SHA-256 checked."""
    import hashlib
    import subprocess

    path = artifact.m2_path(Path.home())
    if not path.is_file():
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:get", f"-Dartifact={artifact.coordinates}", "-Dtransitive=false"],
            check=True,
            timeout=900,
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != artifact.sha256:
        raise AssertionError(f"{path} has SHA-256 {digest}, expected {artifact.sha256}")
    return path


def scifact_subset(dest: Path, n_docs: int = 300, n_test: int = 40, n_train: int = 40) -> Path:
    """A BEIR-layout folder cut from the real SciFact: the first judged test/train queries, their
    judged documents, and other documents up to ``n_docs``. Deterministic."""
    import json

    def qrels(split: str) -> list[tuple[str, str, str]]:
        lines = (SCIFACT / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]
        return [tuple(line.split("\t")) for line in lines if line.strip()]  # type: ignore[misc]

    chosen: dict[str, list[tuple[str, str, str]]] = {}
    docs: list[str] = []
    for split, n in (("test", n_test), ("train", n_train)):
        rows = qrels(split)
        qids = list(dict.fromkeys(q for q, _, _ in rows))[:n]
        chosen[split] = [r for r in rows if r[0] in qids]
        docs += [d for _, d, _ in chosen[split]]
    wanted = set(docs)
    corpus_lines: list[str] = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if doc["_id"] in wanted or len(corpus_lines) < n_docs - len(wanted):
                corpus_lines.append(line if line.endswith("\n") else line + "\n")
                wanted.discard(doc["_id"]) if doc["_id"] in wanted else None
            if len(corpus_lines) >= n_docs and not wanted:
                break
    all_qids = {q for rows in chosen.values() for q, _, _ in rows}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "corpus.jsonl").write_text("".join(corpus_lines), encoding="utf-8")
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [line for line in fh if json.loads(line)["_id"] in all_qids]
    (dest / "queries.jsonl").write_text("".join(queries), encoding="utf-8")
    (dest / "qrels").mkdir(exist_ok=True)
    for split, rows in chosen.items():
        body = "query-id\tcorpus-id\tscore\n" + "".join("\t".join(r) + "\n" for r in rows)
        (dest / "qrels" / f"{split}.tsv").write_text(body, encoding="utf-8")
    return dest


def raw_es_client(where: str | ConnectionSettings, **overrides: object) -> Any:
    """An elasticsearch-py client (a URL, or settings with credentials), for tests that drive or inspect
    an Elasticsearch node behind the product's back (fault injection, security APIs); the product itself
    only talks to a cluster through a Backend."""
    from elasticsearch import Elasticsearch

    settings = ConnectionSettings(url=where) if isinstance(where, str) else where
    kwargs: dict[str, Any] = {"hosts": [settings.url], "request_timeout": settings.request_timeout}
    if settings.username is not None:
        kwargs["basic_auth"] = (settings.username, settings.password.reveal() if settings.password else "")
    if settings.api_key is not None:
        kwargs["api_key"] = settings.api_key.reveal()
    if settings.url.startswith("https"):
        kwargs["verify_certs"] = settings.verify
        if settings.ca_cert is not None:
            kwargs["ca_certs"] = str(settings.ca_cert)
        if not settings.verify:
            kwargs["ssl_show_warn"] = False
    return Elasticsearch(**{**kwargs, **overrides})


raw_es_client.__test__ = False  # type: ignore[attr-defined]


def ndjson(lines: Iterable[Any]) -> bytes:
    """A bulk body as the engines read it: one JSON object per line (for tests that post raw bulks)."""
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def own_cache(monkeypatch: Any, folder: Path) -> Path:
    """Point the harness's cache folder (auto's per-machine record, the embedding cache) at ``folder`` for
    one test, keeping this machine's ONNX exports (linked, so they are not made again)."""
    models = default_cache_dir() / "models"
    folder.mkdir(parents=True, exist_ok=True)
    if models.is_dir() and not (folder / "models").exists():
        (folder / "models").symlink_to(models)
    monkeypatch.setenv("R2MED_HARNESS_CACHE", str(folder))
    return folder


def record_auto_choice(spec: Any, backend: str, precision: str) -> None:
    """This machine's ``--embed-backend auto`` decision for ``spec``, written where auto keeps its decisions
    (as if its check had chosen ``backend/precision``), so a test fixes what auto uses without the check."""
    from indexer.embed import AutoChoice, cpu_flags
    from indexer.embed._auto import auto_file, machine_key, save_choice

    key, machine = machine_key(spec, cpu_flags())
    save_choice(key, AutoChoice(backend, precision, "recorded by the test", machine=machine), auto_file())
