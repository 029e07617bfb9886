"""Scoring protocols: how a run is scored and expanded, named (``eval.protocol``).

``trec_eval`` (the default) is trec_eval's own: trec_eval's ``-c`` (every judged query counts, those
without results as 0), every result scored, expansions read as :mod:`harness.expand` documents.
``r2med`` is what R2MED's evaluation code does (R2MED/R2MED, ``src/``), where it differs:

* its mean is over the queries that returned results: ``calculate_retrieval_metrics`` divides each sum
  by ``len(scores)``, and pytrec_eval scores only the queries of the run (``src/eval_BM25.py`` lines
  37-52), which is trec_eval without ``-c``;
* its dense evaluation drops a result whose id is the query's id: ``retriever.evaluate(...,
  ignore_identical_ids=True)`` (``src/eval_retrieval.py`` line 110, BEIR's ``EvaluateRetrieval``);
* its BM25 query2doc query is the query's text twice with no space between the copies, then a space and
  the generated document: ``e["text"]*2+" "+e["hy_doc"]`` (``src/eval_BM25.py`` line 129);
* its dense HyDE (and LameR, and reasoning models' answers) encodes the query with the model's query
  instruction and the generated document without it, then averages the two vectors: ``encode_queries``
  (``src/utils.py`` lines 79-89).
"""

from __future__ import annotations

from dataclasses import dataclass

from base import ConfigError


@dataclass(frozen=True, slots=True)
class Protocol:
    """What a protocol decides: the mean's denominator, dense self-matches, how expansions read."""

    name: str
    doc: str
    complete: bool
    """trec_eval's ``-c``: judged queries without results score 0 and count in the mean."""
    drop_query_id: bool
    """Dense (vector) arms: a result whose document id equals the query id is dropped before scoring."""
    query2doc_join: str
    """What joins the query's two copies in BM25 query2doc."""
    prompt_expansion: bool
    """Dense expansions encoded apart: whether the generated document gets the query prompt too."""


DEFAULT_PROTOCOL = "trec_eval"
PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            "trec_eval",
            "trec_eval's (-c: judged queries without results count as 0; every result scored)",
            complete=True,
            drop_query_id=False,
            query2doc_join=" ",
            prompt_expansion=True,
        ),
        Protocol(
            "r2med",
            "R2MED's code: mean over queries with results, dense results equal to the query id dropped, "
            "query2doc's copies joined with no space, HyDE's document encoded without the query prompt",
            complete=False,
            drop_query_id=True,
            query2doc_join="",
            prompt_expansion=False,
        ),
    )
}


def protocol(name: str) -> Protocol:
    """The protocol called ``name``."""
    found = PROTOCOLS.get(name)
    if found is None:
        raise ConfigError(f"expected a scoring protocol among {', '.join(PROTOCOLS)}, found {name!r}")
    return found


def drop_query_ids(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """``run`` without any result whose document id is its query's id (BEIR's ``ignore_identical_ids``)."""
    return {qid: {d: s for d, s in results.items() if d != qid} for qid, results in run.items()}
