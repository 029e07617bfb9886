"""The helpers every layer shares: one progress factory, one retry policy, atomic writes, one slug."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from base import ConfigError, Retry, slug, write_jsonl_atomic, write_text_atomic


def test_retry_resends_what_failed_and_gives_up_with_the_callers_error() -> None:
    sent: list[list[int]] = []

    def send(items: list[int], may_retry: bool) -> list[int]:
        sent.append(list(items))
        if len(sent) == 1:
            raise ConnectionError("dropped")
        return [i for i in items if i % 2] if may_retry and len(sent) == 2 else []

    retry = Retry(max_retries=3, initial_backoff_s=0.001, max_backoff_s=0.002)
    events: list[tuple[int, int, bool]] = []
    retries = retry.deliver(
        [1, 2, 3], send, transient=lambda e: isinstance(e, ConnectionError), give_up=lambda e, n: e,
        on_retry=lambda n, items, failure: events.append((n, items, failure is not None)),
    )  # fmt: skip
    assert retries == 2 and sent == [[1, 2, 3], [1, 2, 3], [1, 3]]
    assert events == [(1, 3, True), (2, 2, False)]

    def always_down(items: list[int], may_retry: bool) -> list[int]:
        raise ConnectionError("down")

    with pytest.raises(RuntimeError, match="gave up after 3 retries"):
        retry.deliver(
            [1],
            always_down,
            transient=lambda e: True,
            give_up=lambda e, n: RuntimeError(f"gave up after {n} retries"),
        )
    with pytest.raises(ValueError, match="not transient"):
        retry.call(
            lambda: (_ for _ in ()).throw(ValueError("not transient")),
            transient=lambda e: False,
            give_up=lambda e, n: e,
        )
    assert (
        retry.delay(1, hint=0.5) >= 0.002 and retry.delay(10) <= 0.002
    )  # hint floors (capped), backoff caps
    with pytest.raises(ConfigError, match="expected between 0 and 100 retries"):
        Retry(max_retries=-1)


def test_atomic_write_leaves_the_old_file_when_interrupted(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    write_text_atomic(target, "old")

    class Boom(Exception):
        pass

    def rows() -> Iterator[dict[str, str]]:
        yield {"half": "of the new"}
        raise Boom

    with pytest.raises(Boom):
        write_jsonl_atomic(target, rows())
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_one_slug() -> None:
    assert slug("R2MED/Biology") == "r2med-biology"
    assert slug("???", fallback="x") == "x"
    with pytest.raises(ConfigError, match="expected a name with letters or digits"):
        slug("???")
