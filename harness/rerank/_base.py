"""What a reranker is: it scores (query, document) pairs; the run re-orders an arm's top-k by those scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from base import ConfigError
from harness._errors import RunError

DEFAULT_DEPTH = 100


class Reranker(Protocol):
    """Scores candidate documents of each query; higher is better."""

    @property
    def kind(self) -> str:
        """``cross`` (a cross-encoder) or ``bi`` (exact similarity under an embedding model)."""
        ...

    @property
    def identity(self) -> dict[str, str]:
        """What fixes the scores (model id and revision, prompts): part of the run's config hash."""
        ...

    def score(
        self, queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]], texts: Mapping[str, str]
    ) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}`` for every candidate of every query (texts by doc id)."""
        ...


@dataclass(frozen=True, slots=True)
class RerankSpec:
    """``--rerank [cross:|bi:]MODEL[@DEPTH]``, parsed."""

    model: str
    depth: int = DEFAULT_DEPTH
    kind: str | None = None  # None: decided by what MODEL is

    @classmethod
    def parse(cls, text: str) -> RerankSpec:
        body, _, depth = text.strip().rpartition("@") if "@" in text else (text.strip(), "", "")
        kind, sep, model = body.partition(":")
        if not sep or kind not in ("cross", "bi"):
            kind, model = "", body
        if not model:
            raise ConfigError(f"expected MODEL[@DEPTH] (e.g. minilm@100), found {text!r}")
        try:
            n = int(depth) if depth else DEFAULT_DEPTH
        except ValueError:
            raise ConfigError(
                f"expected a number of documents after the last @, found {depth!r} (a hub "
                "model's revision goes before the depth: MODEL@REVISION@DEPTH)"
            ) from None
        if not 1 <= n <= 1000:
            raise ConfigError(f"expected a rerank depth between 1 and 1000, found {n}")
        return cls(model, n, kind or None)


def check_texts(candidates: Mapping[str, Sequence[str]], texts: Mapping[str, str]) -> None:
    missing = sorted({d for docs in candidates.values() for d in docs if d not in texts})
    if missing:
        raise RunError(
            f"rerank: expected the text of every candidate document, found none for {len(missing)}: "
            + ", ".join(missing[:10])
        )
