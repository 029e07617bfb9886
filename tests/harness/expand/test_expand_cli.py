"""`harness expand` against the OpenAI-compatible test server (tests/_openai_server.py).

No LLM can be downloaded on these machines, so the server is a local stand-in: its chat answers are
deterministic text built from the request, not generations. These tests check the real client path
(the official ``openai`` package), the cache (a second run makes 0 calls; an interrupted run resumes
with only the missing calls), retries (429 storms, Retry-After, 500s, timeouts), per-query errors,
atomic files, token counts, and that the file validates as an R2MED expansion set that
``harness run --expansion`` uses against the real Elasticsearch of the test session.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.expand import META_SUFFIX, builtin_prompt
from harness.llm import JsonCache
from indexer.data import load_dataset
from tests._openai_server import Fault, OpenAIServer, rate_limited, stall
from tests._support import REPO
from tests.harness.cli.old_names import deprecated
from tests.harness.cli.old_names import line as deprecation_line
from tests.harness.expand.conftest import N_QUERIES

MODEL = "test-llm"


def _expand(server: OpenAIServer, dataset: Path | str, cache: Path, *extra: str) -> int:
    argv = ["expand", "--dataset", str(dataset), "--method", "hyde", "--llm", MODEL]
    argv += ["--llm-url", server.url, "--cache-dir", str(cache), "--quiet", *extra]
    return main(argv)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _set_path(root: Path, method: str = "hyde", llm: str = MODEL) -> Path:
    return root / method / llm / "query_with_hydoc.jsonl"


def test_writes_a_valid_r2med_set_and_a_second_run_makes_no_call(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    assert _expand(server, dataset_copy, cache) == 0
    first = capfd.readouterr()
    assert server.state.calls["chat"] == N_QUERIES
    path = _set_path(dataset_copy)
    records = _records(path)
    queries = load_dataset(str(dataset_copy)).queries
    assert [r["id"] for r in records] == list(queries), "one record per query, in the query file's order"
    prompt = builtin_prompt("hyde")
    for r in records:
        assert r["text"] == queries[r["id"]] and r["hy_doc"].startswith("Answer ")
        assert r["generation"]["prompt_sha256"] == prompt.sha256
        assert r["generation"]["temperature"] == 0.7 and r["generation"]["top_p"] == 1.0
        assert r["generation"]["prompt_tokens"] > 0 and r["generation"]["completion_tokens"] > 0
        assert "reasoning" not in r
    meta = json.loads(path.with_name(path.name + META_SUFFIX).read_text())
    assert meta["prompt"]["sha256"] == prompt.sha256 and meta["prompt"]["source"] == "builtin:hyde"
    assert meta["this_run"]["calls"] == N_QUERIES and meta["this_run"]["cache_hits"] == 0
    tokens_in = sum(r["generation"]["prompt_tokens"] for r in records)
    assert meta["tokens"]["prompt_tokens"] == meta["this_run"]["prompt_tokens"] == tokens_in
    assert f"calls made: {N_QUERIES} (answers from the cache: 0, retries: 0)" in first.out
    assert f"tokens this run: in {tokens_in:,}" in first.out
    assert "validated with the dataset" in first.out

    before = path.read_bytes()
    assert _expand(server, dataset_copy, cache) == 0
    second = capfd.readouterr()
    assert server.state.calls["chat"] == N_QUERIES, "the second run makes 0 calls"
    assert f"calls made: 0 (answers from the cache: {N_QUERIES}, retries: 0)" in second.out
    assert "tokens this run: in 0, out 0" in second.out
    assert path.read_bytes() == before, "a run served from the cache writes the same bytes"
    with capfd.disabled():
        print(f"\n  expand cache: first run {N_QUERIES} calls, second run 0 calls; tokens in {tokens_in:,}")

    assert main(["datasets", "validate", str(dataset_copy)]) == 0
    validated = capfd.readouterr()
    assert "hyde" in validated.out + validated.err


def test_run_with_the_generated_set_against_the_engine(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, es_url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The Done-when path: expand, then `harness run hybrid --expansion hyde:MODEL --rerank minilm@100`."""
    assert _expand(server, dataset_copy, tmp_path / "cache") == 0
    out = tmp_path / "run"
    argv = [
        "run",
        "hybrid",
        "--dataset",
        str(dataset_copy),
        "--expansion",
        f"hyde:{MODEL}",
        "--rerank",
        "minilm@100",
    ]
    assert main([*argv, "--output", str(out), "--url", es_url, "--records", "jsonl", "--no-progress"]) == 0
    printed = capfd.readouterr().out
    results = json.loads((out / "results.json").read_text())
    arms = results["datasets"]["llm-expand"]["arms"]
    assert {"lexical", "vector", "hybrid", "lexical+hyde", "vector+hyde", "hybrid+hyde"} <= set(arms)
    reranked = [a for a in arms if a.endswith(">rerank")]
    assert reranked and reranked[0] in printed, f"no reranked arm among {sorted(arms)}"
    assert "lexical+hyde" in printed and "hybrid+hyde" in printed
    expansion = results["manifest"]["datasets"]["llm-expand"]["expansion"]
    assert expansion["label"] == f"hyde:{MODEL}"
    assert expansion["prompt_sha256"] == [builtin_prompt("hyde").sha256]
    records = [json.loads(r) for r in (out / "records.jsonl").read_text().splitlines()]
    assert all(r["query"]["expansion"].startswith("Answer ") for r in records if r["arm"].endswith("+hyde"))
    assert all(r["query"]["expansion"] is None for r in records if "+" not in r["arm"])
    with capfd.disabled():
        ndcg = {a: round(arms[a]["metrics"]["ndcg@10"], 4) for a in arms}
        print(f"\n  run --expansion hyde:{MODEL} on {N_QUERIES} SciFact queries: nDCG@10 {ndcg}")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_an_interrupted_run_resumes_with_only_the_missing_calls(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    cache = tmp_path / "cache"
    server.state.delay_s = 0.25
    argv = [sys.executable, "-m", "harness", "expand", "--dataset", str(dataset_copy), "--method", "hyde"]
    argv += ["--llm", MODEL, "--llm-url", server.url, "--cache-dir", str(cache), "--concurrency", "2"]
    proc = subprocess.Popen([*argv, "--quiet"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while server.state.answered["chat"] < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (-9 if sig == signal.SIGKILL else 130), err.decode()
    if sig == signal.SIGINT:
        assert b"interrupted" in err and b"Traceback" not in err
    assert not _set_path(dataset_copy).exists(), "never a half-written file"
    with JsonCache("generations", cache) as kept:
        done = len(kept)
    assert 1 <= done < N_QUERIES, f"{done} answers cached before the interruption"

    server.state.reset_counts()
    server.state.delay_s = 0.0
    assert _expand(server, dataset_copy, cache) == 0
    assert server.state.calls["chat"] == N_QUERIES - done, "only the missing calls"
    assert len(_records(_set_path(dataset_copy))) == N_QUERIES
    print(
        f"\n  {sig.name} after {done} cached answers: the rerun made {N_QUERIES - done} calls of {N_QUERIES}"
    )


def test_a_failing_query_is_named_nothing_is_written_and_the_rerun_makes_one_call(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    queries = load_dataset(str(dataset_copy)).queries
    bad_qid, bad_text = list(queries.items())[3]
    server.state.fail_matching(json.dumps(bad_text)[1:-1], Fault(400, message="context length exceeded"))
    code = _expand(server, dataset_copy, cache)
    err = " ".join(capfd.readouterr().err.split())
    assert code == 1
    assert f"1 of {N_QUERIES} queries got no generation" in err
    assert f"query {bad_qid}: HTTP 400: context length exceeded" in err
    assert "running the same command again makes only the missing calls" in err
    assert not _set_path(dataset_copy).parent.exists()
    assert server.state.calls["chat"] == N_QUERIES, "a 400 is not retried"

    server.state.fail_matching(json.dumps(bad_text)[1:-1], None)
    server.state.reset_counts()
    assert _expand(server, dataset_copy, cache) == 0
    assert server.state.calls["chat"] == 1
    assert len(_records(_set_path(dataset_copy))) == N_QUERIES


def test_a_429_storm_loses_nothing(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    server.state.storm = (3, rate_limited(retry_after_ms="20"))  # two requests of three answer 429
    out = tmp_path / "out"
    extra = ["--max-retries", "30", "--backoff", "0.01", "--output", str(out)]
    assert _expand(server, dataset_copy, tmp_path / "cache", *extra) == 0
    printed = capfd.readouterr().out
    records = _records(_set_path(out))
    assert sorted(r["id"] for r in records) == sorted(load_dataset(str(dataset_copy)).queries)
    assert server.state.answered["chat"] == N_QUERIES
    storms = server.state.calls["chat"] - N_QUERIES
    assert storms >= N_QUERIES, "most requests were refused at least once"
    assert f"calls made: {N_QUERIES} (answers from the cache: 0, retries: {storms})" in printed
    print(
        f"\n  429 storm: {server.state.calls['chat']} requests, {storms} answered 429, {N_QUERIES} answers, none lost"
    )


def test_an_endpoint_that_is_not_there_fails_at_once(
    dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    argv = ["expand", "--dataset", str(dataset_copy), "--method", "hyde", "--llm", MODEL, "--llm-url", url]
    began = time.monotonic()
    assert main([*argv, "--cache-dir", str(tmp_path / "cache")]) == 1
    assert time.monotonic() - began < 20
    err = " ".join(capfd.readouterr().err.split())
    assert (
        f"no answer from model '{MODEL}': expected an OpenAI-compatible endpoint at {url} (--llm-url), found "
        "nothing listening there (connection refused): start the server, or give the URL it listens on; "
        "nothing was written"
    ) in err
    assert not _set_path(dataset_copy).exists()


def test_retries_show_in_the_progress_line_with_their_count_and_cause(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    server.state.fail_next(
        "chat", rate_limited(retry_after_ms="10"), Fault(503), rate_limited(retry_after_ms="10")
    )
    argv = [
        "expand",
        "--dataset",
        str(dataset_copy),
        "--method",
        "hyde",
        "--llm",
        MODEL,
        "--llm-url",
        server.url,
    ]
    assert (
        main([*argv, "--cache-dir", str(tmp_path / "cache"), "--concurrency", "1", "--backoff", "0.01"]) == 0
    )
    shown = capfd.readouterr()  # not a terminal: the progress is plain lines, the last one at the end
    last = [line for line in (shown.out + shown.err).splitlines() if line.startswith("generating")][-1]
    assert f"{N_QUERIES}/{N_QUERIES}" in last and "retries 3 (HTTP 429 x2, HTTP 503)" in last, last


def test_retry_after_500_and_timeouts_are_retried(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    server.state.fail_next("chat", rate_limited(retry_after="1"), Fault(500), Fault(503), stall(3.0))
    out = tmp_path / "out"
    extra = ["--concurrency", "1", "--timeout", "1", "--backoff", "0.05", "--output", str(out)]
    code = _expand(server, dataset_copy, tmp_path / "cache", *extra)
    assert code == 0, capfd.readouterr().err
    assert "retries: 4" in capfd.readouterr().out
    log = [(t, status) for t, route, status in server.state.log if route == "chat"]
    limited = next(i for i, (_, status) in enumerate(log) if status == 429)
    assert log[limited + 1][0] - log[limited][0] >= 0.95, "the next request waited for Retry-After"
    assert len(_records(_set_path(out))) == N_QUERIES


def test_reasoning_returned_apart_or_inline_is_kept_out_of_hy_doc(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path
) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out"
    server.state.reasoning = "separate"  # reasoning_content, as DeepSeek's API and vLLM return it
    assert _expand(server, dataset_copy, cache, "--output", str(out), "--name", "sep") == 0
    for r in _records(_set_path(out, llm="sep")):
        assert r["reasoning"].startswith("Thinking it through") and r["hy_doc"].startswith("Answer ")
        assert r["generation"]["reasoning_tokens"] > 0
    server.state.reasoning = (
        "think"  # inline <think>...</think>, an R1-style name (another model: not cached)
    )
    argv = ["--output", str(out), "--name", "r1-test", "--llm", "thinking-llm"]
    assert _expand(server, dataset_copy, cache, *argv) == 0
    meta = json.loads(
        _set_path(out, llm="r1-test").with_name("query_with_hydoc.jsonl" + META_SUFFIX).read_text()
    )
    assert meta["reasoning"]["format"] == "think-tag" and meta["reasoning"]["queries_with_trace"] == N_QUERIES
    for r in _records(_set_path(out, llm="r1-test")):
        assert "<think>" not in r["hy_doc"] and "</think>" not in r["hy_doc"]
        assert r["hy_doc"].startswith("Answer ") and r["reasoning"].startswith("Thinking it through")
    calls = server.state.calls["chat"]
    assert _expand(server, dataset_copy, cache, *argv, "--reasoning-format", "none") == 0
    assert server.state.calls["chat"] == calls, "the split is applied to cached answers: no new call"
    assert all(r["hy_doc"].startswith("<think>") for r in _records(_set_path(out, llm="r1-test")))


def test_the_sample_gets_its_set_in_the_expansions_folder(
    server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("R2MED_EXPANSIONS_DIR", str(tmp_path / "expansions"))
    assert _expand(server, "sample", tmp_path / "cache") == 0
    assert "validated with the dataset" in capfd.readouterr().out
    assert _set_path(tmp_path / "expansions" / "sample").is_file()
    sample = load_dataset("sample")
    assert len(sample.expansions[("hyde", MODEL)]) == len(sample.queries) == 300
    assert main(["datasets", "validate", "sample"]) == 0


def test_configuration_mistakes_are_clear(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    cases = [
        (["--method", "search-o1"], "search-o1 and search-r1 sets come from their agents"),
        (
            ["--llm-key-env", "R2MED_SURELY_UNSET_KEY"],
            "--llm-key-env R2MED_SURELY_UNSET_KEY: names R2MED_SURELY_UNSET_KEY, but that environment variable is not set",
        ),
        (["--reasoning-format", "thinky"], "--reasoning-format thinky: expected one of auto, none"),
        (["--llm-url", "ftp://x"], "expected an endpoint URL like http://127.0.0.1:8000/v1"),
        (
            ["--llm-url", "http://user:pw@127.0.0.1:1/v1"],
            "--llm-url http://<secret>@127.0.0.1:1/v1: credentials inside the endpoint URL are not accepted",
        ),
        (["--llm", " "], "--llm : expected a non-empty string, found an empty one"),
    ]
    for extra, message in cases:
        argv = ["expand", "--dataset", str(dataset_copy), "--method", "hyde", "--cache-dir", str(tmp_path)]
        argv += ["--quiet", *(["--llm", MODEL] if "--llm" not in extra else [])]
        argv += ["--llm-url", server.url] if "--llm-url" not in extra else []
        code = main([*argv, *extra])
        err = " ".join(capfd.readouterr().err.split())
        assert code == 2 and message in err, (extra, err)
    assert server.state.calls["chat"] == 0
    os.environ.pop("R2MED_SURELY_UNSET_KEY", None)


def _trec_top(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranked.setdefault(qid, []).append((int(rank), doc))
    return {qid: [d for _, d in sorted(rows)] for qid, rows in ranked.items()}


def test_lamer_answers_with_the_top_passages_of_its_own_bm25_first_stage(
    server: OpenAIServer, dataset_copy: Path, tmp_path: Path, es_url: str
) -> None:
    argv = ["expand", "--dataset", str(dataset_copy), "--method", "lamer", "--llm", MODEL]
    argv += ["--llm-url", server.url, "--cache-dir", str(tmp_path / "cache"), "--url", es_url, "--quiet"]
    assert main(argv) == 0
    path = _set_path(dataset_copy, method="lamer")
    meta = json.loads(path.with_name(path.name + META_SUFFIX).read_text())
    assert meta["first_stage"]["arm"] == "lexical" and meta["first_stage"]["depth"] == 10
    assert meta["prompt"]["source"] == "builtin:lamer"

    # the same arm, run independently through `harness run lexical`
    run = tmp_path / "run"
    base = [
        "run",
        "lexical",
        "--dataset",
        str(dataset_copy),
        "--url",
        es_url,
        "--records",
        "jsonl",
        "--no-progress",
    ]
    assert main([*base, "--output", str(run)]) == 0
    top = _trec_top(run / "runs" / "llm-expand" / "lexical.trec")
    dataset = load_dataset(str(dataset_copy))
    docs = {d.id: f"{d.title} {d.text}" for d in dataset.iter_corpus()}
    prompts = {b["messages"][-1]["content"]: b for b in server.state.bodies}
    assert len(server.state.bodies) == N_QUERIES
    for qid, query in dataset.queries.items():
        prompt = next(p for p in prompts if f"Question:\n{query}\n" in p)
        best = " ".join(docs[top[qid][0]].split()[:30])
        assert f"[1] {best}" in prompt, f"query {qid}: the first passage is the lexical arm's top hit"
        assert "[10] " in prompt and "[11] " not in prompt

    # and the set is usable as --expansion lamer:MODEL
    assert main([*base, "--expansion", f"lamer:{MODEL}", "--output", str(tmp_path / "run2")]) == 0
    results = json.loads((tmp_path / "run2" / "results.json").read_text())
    assert "lexical+lamer" in results["datasets"]["llm-expand"]["arms"]


def test_the_old_names_work_for_one_release_with_one_line_each(
    server: OpenAIServer,
    dataset_copy: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """--model, --base-url, --api-key-env and --no-progress are hidden now, and each still reaches what its
    new name reaches: every run (its own cache) asks the same model at the same endpoint with the key the
    server requires, and writes the same file."""
    monkeypatch.setenv("R2MED_TEST_LLM_KEY", "not-a-secret")
    server.state.required_key = "not-a-secret"
    new = {
        "--llm": ["--llm", MODEL],
        "--llm-url": ["--llm-url", server.url],
        "--llm-key-env": ["--llm-key-env", "R2MED_TEST_LLM_KEY"],
        "--quiet": ["--quiet"],
    }
    old = {
        "--llm": ["--model", MODEL],
        "--llm-url": ["--base-url", server.url],
        "--llm-key-env": ["--api-key-env", "R2MED_TEST_LLM_KEY"],
        "--quiet": ["--no-progress"],
    }

    def expand_with(spelled: dict[str, list[str]], cache: str) -> bytes:
        base = [
            "expand",
            "--dataset",
            str(dataset_copy),
            "--method",
            "hyde",
            "--cache-dir",
            str(tmp_path / cache),
        ]
        assert main([*base, *(a for s in spelled.values() for a in s)]) == 0
        return _set_path(dataset_copy).read_bytes()

    try:
        wanted = expand_with(new, "new")
        assert deprecated(capfd.readouterr().err) == []
        for name, spelled in old.items():
            assert expand_with({**new, name: spelled}, name) == wanted, name
            assert deprecated(capfd.readouterr().err) == [deprecation_line(spelled[0], name)]
    finally:
        server.state.required_key = None
    assert server.state.calls["chat"] == 5 * N_QUERIES and server.state.answered["chat"] == 5 * N_QUERIES
