"""Secrets appear nowhere the harness writes: ``harness index`` and ``harness run`` against the secured
node (basic auth over verified TLS), records to JSONL and to Elasticsearch, then ``harness report
--html``. The password is searched for (raw, base64, and as the basic-auth header) in the run
directory, the HTML report, stdout/stderr, every log record emitted at DEBUG level, the evaluation
records fetched back from the records index, the published index's metadata, and the node's logs.
A wrong password or an untrusted certificate fails clearly, moves no alias and echoes no secret.

The key of an OpenAI-compatible endpoint (``--api-key-env``) gets the same checks: ``harness expand``
and endpoint embeddings for ``harness index``/``run`` against the test server (a local stand-in for
an LLM, none can be downloaded here) that requires the key, then a wrong key that the server echoes
back in its 401, as some servers do.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import main as harness_main
from harness.sinks import DEFAULT_INDEX as RECORDS_INDEX
from tests._openai_server import OpenAIServer
from tests._support import scifact_subset
from tests.reliability._faults import alias_target, one_summary
from tests.reliability._nodes import SecuredNode
from tests.reliability._secrets import assert_no_secret

N_DOCS, N_QUERIES = 100, 10


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("secret") / "secret-scifact", n_docs=N_DOCS, n_test=N_QUERIES
    )


def _creds(node: SecuredNode, password: str | None = None, *, trust_ca: bool = True) -> list[str]:
    ca = ["--ca-cert", str(node.ca_cert)] if trust_ca else []  # without it: the system store only
    password = password if password is not None else node.password.reveal()
    return ["--url", node.url, "--username", node.username, "--password", password, *ca]


@pytest.fixture()
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record of every library (elastic_transport, urllib3, the harness) at DEBUG."""
    with caplog.at_level(logging.DEBUG):
        yield caplog


def test_secret_appears_in_no_output(
    secured_node: SecuredNode,
    dataset: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    debug_logs: pytest.LogCaptureFixture,
) -> None:
    secret, user = secured_node.password, secured_node.username
    run_dir = tmp_path / "run"
    assert harness_main(["index", "--dataset", str(dataset), "--no-vectors", "--no-progress", *_creds(secured_node)]) == 0  # fmt: skip
    indexed = capfd.readouterr()
    summary = one_summary(indexed.out)
    assert summary.docs == N_DOCS
    code = harness_main(
        ["run", "lexical", "--dataset", str(dataset), "--output", str(run_dir), "--records", "jsonl,es",
         "--no-progress", *_creds(secured_node)]
    )  # fmt: skip
    ran = capfd.readouterr()
    assert code == 0, ran.err
    assert harness_main(["report", str(run_dir), "--html"]) == 0
    reported = capfd.readouterr()
    html = run_dir / "report.html"
    assert html.is_file() and html.stat().st_size > 1000

    # the run directory names how it authenticated, never with what
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (
        manifest["engine"]["connection"]["auth"] == "basic"
        and manifest["engine"]["connection"]["username"] == user
    )
    client = secured_node.client()
    client.indices.refresh(index=RECORDS_INDEX)
    records = client.search(index=RECORDS_INDEX, query={"term": {"run_id": manifest["run_id"]}}, size=1000)[
        "hits"
    ]["hits"]
    assert len(records) == N_QUERIES, "the records index holds this run's records"
    jsonl = (run_dir / "records.jsonl").read_text().splitlines()
    assert len(jsonl) == N_QUERIES
    index_meta = client.indices.get_mapping(index=summary.index)[summary.index]["mappings"]["_meta"]
    assert index_meta["status"] == "published"
    assert debug_logs.records, "DEBUG logging captured nothing: the log check would prove nothing"

    scanned = assert_no_secret(
        [
            run_dir,  # manifest, results, report.md, report.html, records.jsonl, runs/, arms/
            indexed.out, indexed.err, ran.out, ran.err, reported.out, reported.err,
            debug_logs.text,
            json.dumps(records),
            json.dumps(index_meta),
            secured_node.node_dir / "logs",
        ],
        secret,
        user,
    )  # fmt: skip
    assert scanned >= 8
    print(
        f"\nsecrets: password absent from {scanned} files (run directory incl. report.html, node logs), "
        f"stdout/stderr of index/run/report, {len(debug_logs.records)} DEBUG log records, "
        f"{len(records)} records fetched from {RECORDS_INDEX}, the index _meta"
    )


@pytest.mark.parametrize("mistake", ["wrong password", "untrusted certificate"])
@pytest.mark.parametrize("command", ["index", "run"])
def test_bad_credentials_fail_clearly_without_the_secret(
    secured_node: SecuredNode,
    dataset: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    mistake: str,
    command: str,
) -> None:
    wrong = "Wr0ng-" + secured_node.password.reveal()[::-1]
    creds = (
        _creds(secured_node, password=wrong)
        if mistake == "wrong password"
        else _creds(secured_node, trust_ca=False)
    )
    argv = (
        ["index", "--dataset", str(dataset), "--no-vectors", *creds]
        if command == "index"
        else ["run", "lexical", "--dataset", str(dataset), "--output", str(tmp_path / "run"), "--records", "jsonl", *creds]
    )  # fmt: skip
    client = secured_node.client()
    alias = "r2med-secret-scifact"
    before = alias_target(client, alias)
    code = harness_main([*argv, "--quiet"])
    out = capfd.readouterr()
    message = " ".join(out.err.split())
    assert code != 0
    if mistake == "wrong password":
        assert f"{secured_node.url} rejected the credentials (GET / answered HTTP 401" in message
        assert "found auth basic refused" in message
    else:
        assert f"could not establish a trusted TLS connection to {secured_node.url}" in message
        assert "--ca-cert" in message
    assert "Traceback" not in out.err
    assert alias_target(client, alias) == before
    assert not (tmp_path / "run").exists(), "nothing is written before the cluster is reached"
    for secret in (wrong, secured_node.password):
        assert_no_secret([out.out, out.err], secret, secured_node.username)
    with capfd.disabled():
        print(
            f"\n  bad input {mistake} ({command}): exit {code}: {out.err.strip().splitlines()[0][:140]}",
            end="",
        )


def test_endpoint_key_appears_in_no_output(
    server: OpenAIServer,
    dataset: Path,
    tmp_path: Path,
    es_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    debug_logs: pytest.LogCaptureFixture,
) -> None:
    key = "sk-r2med-" + secrets.token_urlsafe(24)
    monkeypatch.setenv("R2MED_TEST_LLM_KEY", key)
    monkeypatch.setenv("R2MED_HARNESS_CACHE", str(tmp_path / "cache"))
    server.state.required_key = key
    auth = ["--base-url", server.url, "--api-key-env", "R2MED_TEST_LLM_KEY"]
    out, run_dir = tmp_path / "expansions", tmp_path / "run"
    expand = ["expand", "--dataset", str(dataset), "--method", "hyde", "--model", "llm", "--output", str(out)]
    assert harness_main([*expand, *auth, "--cache-dir", str(tmp_path / "generations"), "--no-progress"]) == 0
    embed = ["--model", "openai:minilm-secret", *auth, "--url", es_url, "--no-progress"]
    assert harness_main(["index", "--dataset", str(dataset), *embed]) == 0
    run = ["run", "vector", "--dataset", str(dataset), "--output", str(run_dir), "--records", "jsonl", *embed]
    assert harness_main(run) == 0
    good = capfd.readouterr()
    assert server.state.answered["chat"] == N_QUERIES and server.state.answered["embeddings"] >= 2
    meta = json.loads((out / "hyde" / "llm" / "query_with_hydoc.jsonl.meta.json").read_text())
    assert meta["endpoint"]["api_key_env"] == "R2MED_TEST_LLM_KEY" and meta["endpoint"]["api_key_set"] is True

    server.state.required_key = "sk-the-right-one"  # ours is now wrong; the 401 echoes it back
    code = harness_main([*expand, *auth, "--cache-dir", str(tmp_path / "other"), "--no-progress"])
    refused = capfd.readouterr()
    message = " ".join(refused.err.split())
    assert code == 1 and "HTTP 401" in message and "is R2MED_TEST_LLM_KEY the right key" in message
    assert "Incorrect API key provided: ***" in message, "the echoed key is scrubbed"
    assert debug_logs.records
    scanned = assert_no_secret(
        [
            out, run_dir, tmp_path / "cache", tmp_path / "generations", tmp_path / "other",
            good.out, good.err, refused.out, refused.err, debug_logs.text,
        ],
        key,
    )  # fmt: skip
    assert scanned >= 6
    print(
        f"\nendpoint key: absent from {scanned} files (expansion set, caches, run directory), outputs and logs"
    )
