"""Managed services through their local stand-ins (tests/engines/_standins.py), real processes in front of the
session's real engines: Amazon OpenSearch Service (SigV4, service es), Amazon OpenSearch Serverless (SigV4,
service aoss) and Elastic Cloud Serverless (API key, build_flavor serverless). The harness runs its real
client code against them; what the stand-ins do not emulate is listed in docs/engines.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from base import RequestFailed
from harness.cli import main as harness_main
from harness.results import RunResults
from indexer import ConnectionSettings
from indexer.backends._elasticsearch import ElasticsearchBackend
from tests._support import REPO, scifact_subset
from tests.engines._standins import ACCESS_KEY, API_KEY, REGION, SECRET_KEY

SIGV4 = ["--set", "connection.auth=sigv4", "--set", f"connection.region={REGION}"]


@contextmanager
def standin(mode: str, upstream: str) -> Iterator[str]:
    """The stand-in ``mode`` as a process of its own on 127.0.0.1, in front of ``upstream``; its URL."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.engines._standins", mode, "--upstream", upstream],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on ")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The AWS chain as a user would set it: keys in the environment, no profile files, no instance role."""
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "ES_URL", "ES_AUTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scifact_subset(
        tmp_path_factory.mktemp("standins") / "standin-slice", n_docs=80, n_test=8, n_train=0
    )


def _run(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = harness_main(argv)
    out = capfd.readouterr()
    return code, " ".join((out.out + " " + out.err).split())


def _argv(mode: str, data: Path, url: str, out: Path) -> list[str]:
    return [
        "run",
        mode,
        "--dataset",
        str(data),
        "--url",
        url,
        "--output",
        str(out),
        "--quiet",
        "--records",
        "jsonl",
    ]


def test_amazon_opensearch_service_signs_every_request(
    os_settings: ConnectionSettings,
    small: Path,
    tmp_path: Path,
    aws: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    with standin("sigv4", os_settings.url) as url:
        code, said = _run([*_argv("hybrid", small, url, tmp_path / "ok"), *SIGV4], capfd)
        assert code == 0, said
        engine = RunResults.load(tmp_path / "ok").manifest.engine
        assert (engine.auth, engine.serverless, engine.connection["service"]) == ("sigv4", False, "es")
        assert SECRET_KEY not in "".join(p.read_text() for p in (tmp_path / "ok").glob("*.json*"))
        aws.setenv("AWS_SECRET_ACCESS_KEY", "not/the/secret")
        code, said = _run([*_argv("lexical", small, url, tmp_path / "wrong"), *SIGV4], capfd)
        assert code != 0
        assert (
            f"{url} refused the SigV4 signature of access key {ACCESS_KEY} (GET / answered HTTP 403: The request "
            "signature we calculated does not match the signature you provided." in said
        )
        assert "found them refused; check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID)" in said
        assert "not/the/secret" not in said
        code, said = _run(
            ["run", "lexical", "--dataset", str(small), "--url", url, "--set", "connection.auth=sigv4"], capfd
        )
        assert (
            code != 0
            and f"SigV4 for {url} needs an AWS region: expected connection.region (or AWS_REGION" in said
        )


def test_amazon_opensearch_serverless(
    os_settings: ConnectionSettings,
    small: Path,
    tmp_path: Path,
    aws: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    with standin("aoss", os_settings.url) as url:
        code, said = _run(
            [*_argv("hybrid", small, url, tmp_path / "ok"), *SIGV4, "--set", "connection.service=aoss"], capfd
        )
        assert code == 0, said
        assert said.count("serverless mode (Amazon OpenSearch Serverless)") == 1
        engine = RunResults.load(tmp_path / "ok").manifest.engine
        assert (engine.auth, engine.serverless, engine.connection["service"]) == ("sigv4", True, "aoss")
        # signed for the domain service, a collection refuses it: the scope is part of the signature
        code, said = _run([*_argv("lexical", small, url, tmp_path / "es"), *SIGV4], capfd)
        assert code != 0 and "Credential should be scoped to a valid region and service" in said


def test_elastic_serverless(
    es_settings: ConnectionSettings, small: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with standin("elastic-serverless", es_settings.url) as url:
        code, said = _run(
            [*_argv("hybrid", small, url, tmp_path / "ok"), "--set", f"connection.api_key={API_KEY}"], capfd
        )
        assert code == 0, said
        assert said.count("serverless mode (Elastic Cloud Serverless)") == 1
        engine = RunResults.load(tmp_path / "ok").manifest.engine
        assert (engine.auth, engine.serverless) == ("api-key", True)
        code, said = _run(
            [*_argv("lexical", small, url, tmp_path / "bad"), "--set", "connection.api_key=d3Jvbmc6a2V5"],
            capfd,
        )
        assert code != 0 and f"{url} rejected the credentials (GET / answered HTTP 401" in said
        assert "d3Jvbmc6a2V5" not in said
        # a client that did not ask first would call _cluster/health: the service's refusal is one sentence
        blind = ElasticsearchBackend(ConnectionSettings.resolve({"url": url, "api_key": API_KEY}, env={}))
        try:
            with pytest.raises(RequestFailed) as err:
                blind.health()
        finally:
            blind.close()
        assert str(err.value).startswith(
            f"{url} is serverless and refused the API used while reading cluster health (HTTP 410 "
            "api_not_available_exception: Request for uri [/_cluster/health]"
        )
