"""The judge's client behaves as the expansion command's: cache (no pair judged twice by one judge),
Retry-After, resumable, the key never stored or printed, costs printed before any call."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from harness.cli import main
from tests._openai_server import Fault, OpenAIServer, rate_limited
from tests.harness.judgments.judge.conftest import ARMS, answers, qrels_file, run_judge

KEY = "sk-judge-secret-0123456789abcdef"


def test_a_second_run_makes_no_call_and_another_judge_makes_its_own(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (str(base_run), "--arms", ARMS, "--llm", "truth")
    code, first = run_judge(capsys, standins, tmp_path / "c", tmp_path / "o1", *args)
    assert code == 0, first
    n = standins.state.calls["chat"]
    assert n > 500 and f"{n:,} pairs, 0 answers cached, {n:,} calls to make" in first
    assert f"calls made {n:,} (answers from the cache: 0, retries: 0)" in first
    code, second = run_judge(capsys, standins, tmp_path / "c", tmp_path / "o2", *args)
    assert code == 0 and standins.state.calls["chat"] == n, "the same judge judges no pair twice"
    assert f"{n:,} pairs, {n:,} answers cached, 0 calls to make (~0 prompt tokens" in second
    assert qrels_file(tmp_path / "o1").read_bytes() == qrels_file(tmp_path / "o2").read_bytes()
    code, _other = run_judge(capsys, standins, tmp_path / "c", tmp_path / "o3", *args, "--template", "binary")
    assert code == 0 and standins.state.calls["chat"] == 2 * n, "another prompt is another judge"


def test_costs_are_printed_before_any_call(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standins.state.required_key = KEY  # every call is refused (401): the first one stops the run
    code, text = run_judge(
        capsys,
        standins,
        tmp_path / "c",
        tmp_path / "o",
        str(base_run),
        "--llm",
        "truth",
        "--concurrency",
        "1",
    )
    assert code != 0 and standins.state.answered["chat"] == 0
    # the run stopped at its first call, and the plan had been printed
    assert "calls to make (~" in text and "prompt tokens, counted as words and punctuation" in text
    assert (
        "no answer from model 'truth': HTTP 401" in text
        and "--llm-key-env names the variable" in text
        and KEY not in text
    )
    assert not (tmp_path / "o").exists(), "nothing written"


def test_an_endpoint_that_is_not_there_fails_within_seconds(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27: with a typo in the URL, `harness judge` printed 0/300 pairs every 10 s for 90 s, until stopped."""
    with socket.socket() as sock:  # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    argv = ["judge", str(base_run), "--llm", "judge-x", "--llm-url", url, "--depth", "1", "--arms", "lexical"]
    began = time.monotonic()
    code = main([*argv, "--cache-dir", str(tmp_path / "c"), "--output", str(tmp_path / "o")])
    took = time.monotonic() - began
    err = " ".join(capsys.readouterr().err.split())
    assert code != 0 and took < 20, (code, took, err)
    assert (
        f"no answer from model 'judge-x': expected an OpenAI-compatible endpoint at {url} (--llm-url), found "
        "nothing listening there (connection refused)"
    ) in err
    assert not (tmp_path / "o").exists()


def test_retry_after_is_honoured(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standins.state.fail_next("chat", rate_limited(retry_after="1"))
    code, text = run_judge(
        capsys,
        standins,
        tmp_path / "c",
        tmp_path / "o",
        str(base_run),
        "--llm",
        "truth",
        "--concurrency",
        "1",
    )
    assert code == 0, text
    assert "retries: 1)" in text
    times = [t for t, route, _ in standins.state.log if route == "chat"]
    statuses = [s for _, route, s in standins.state.log if route == "chat"]
    first = statuses.index(429)
    assert statuses.count(429) == 1 and statuses[first + 1] == 200 and times[first + 1] - times[first] >= 0.95


def test_an_interrupted_run_resumes_with_only_the_missing_calls(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = (str(base_run), "--arms", "hybrid", "--llm", "truth", "--max-retries", "0")
    rows = [
        line.split() for line in (base_run / "runs" / "gate-subset" / "hybrid.trec").read_text().splitlines()
    ]
    doc = rows[0][2]
    marker = json.dumps(f'<document id="{doc}">')[1:-1]  # as the request body (JSON) holds it
    standins.state.fail_matching(marker, Fault(500))
    code, text = run_judge(capsys, standins, tmp_path / "c", tmp_path / "o", *args)
    assert code != 0 and f"doc {doc}: HTTP 500" in text and "no judgments were written" in text
    assert not (tmp_path / "o").exists()
    answered = standins.state.answered["chat"]
    standins.state.fail_matching(marker, None)
    standins.state.reset_counts()
    code, text = run_judge(capsys, standins, tmp_path / "c", tmp_path / "o", *args)
    failed = sum(1 for r in rows if r[2] == doc and int(r[3]) <= 10)
    assert code == 0 and standins.state.calls["chat"] == failed, "only the pairs that got no answer"
    assert f"{answered:,} answers cached, {failed:,} calls to make" in text


def test_the_key_is_used_and_never_stored_or_printed(
    standins: OpenAIServer, base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("JUDGE_KEY", KEY)
    standins.state.required_key = KEY
    code, text = run_judge(
        capsys,
        standins,
        tmp_path / "c",
        tmp_path / "o",
        str(base_run),
        "--llm",
        "truth",
        "--llm-key-env",
        "JUDGE_KEY",
    )
    assert code == 0, text
    assert KEY not in text
    for path in (tmp_path / "o").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8"), path
    side = json.loads((tmp_path / "o" / "gate-subset" / "judgments.qrels.judge.json").read_text())
    assert side["endpoint"]["api_key_env"] == "JUDGE_KEY" and side["endpoint"]["api_key_set"] is True
    for path in (tmp_path / "c").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert answers(tmp_path / "o")
