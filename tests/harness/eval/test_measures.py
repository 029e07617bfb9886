"""Measure parsing: round trips, aliases, registry, errors."""

from __future__ import annotations

import ir_measures
import pytest

from base import ConfigError
from harness.eval import DEFAULT_MEASURES, FAMILIES, PRIMARY_MEASURE, Measure, parse_measures


@pytest.mark.parametrize("measure", DEFAULT_MEASURES, ids=str)
def test_canonical_string_round_trips(measure):
    assert Measure.parse(str(measure)) == measure
    assert Measure.parse(measure.key) == measure
    assert Measure.parse(str(measure).upper()) == measure


@pytest.mark.parametrize("measure", DEFAULT_MEASURES, ids=str)
def test_ir_measures_knows_the_equivalent(measure):
    parsed = ir_measures.parse_measure(measure.ir_measures_name)
    assert str(parsed) == measure.ir_measures_name


def test_defaults_and_names():
    assert PRIMARY_MEASURE == Measure.parse("nDCG@10") == DEFAULT_MEASURES[0]
    assert [str(m) for m in DEFAULT_MEASURES] == [
        "nDCG@10",
        "nDCG_judged@10",
        "nDCG@100",
        "Recall@10",
        "Recall@100",
        "MAP@100",
        "MRR@100",
        "P@10",
        "Unjudged@10",
    ]
    assert Measure.parse("ndcg@10").ranx_name() == "ndcg@10"
    assert Measure.parse("P@10").ranx_name() == "precision@10"
    assert Measure.parse("P@10").ranx_name(2) == "precision@10-l2"
    assert Measure.parse("nDCG@10").ranx_name(2) == "ndcg@10"  # gains: the grades at any level
    assert Measure.parse("precision@10").key == "p@10"
    assert Measure.parse("Unjudged@10").ranx_name() is None  # computed by us
    assert Measure.parse(" nDCG @ 10 ") == PRIMARY_MEASURE


def test_parse_measures_lists():
    assert parse_measures("nDCG@10, Recall@100,ndcg@10") == (Measure("nDCG", 10), Measure("Recall", 100))
    assert parse_measures(["P@10", Measure("MAP", 100)]) == (Measure("P", 10), Measure("MAP", 100))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("BLEU@10", "unknown measure 'BLEU'"),
        ("P", "expected a cutoff"),
        ("nDCG(rel=2)@10", "only binary measures"),
        ("nDCG@0", "cutoff must be"),
        ("nDCG@ten", "expected NAME@CUTOFF"),
        ("", "expected NAME@CUTOFF"),
    ],
)
def test_bad_measures_name_the_known_ones(text, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        Measure.parse(text)
    if "unknown" in fragment or "NAME@CUTOFF" in fragment:
        for name in FAMILIES:
            assert name in str(info.value)
    with pytest.raises(ConfigError):
        parse_measures([])


def test_measures_are_hashable_and_ordered():
    assert len({Measure.parse("nDCG@10"), Measure.parse("ndcg@10")}) == 1
    assert sorted([Measure("nDCG", 100), Measure("nDCG", 10)])[0].cutoff == 10


@pytest.mark.parametrize(
    ("text", "measure"),
    [
        ("ndcg_cut_10", Measure("nDCG", 10)),
        ("ndcg_cut.10", Measure("nDCG", 10)),
        ("P_10", Measure("P", 10)),
        ("P.5", Measure("P", 5)),
        ("recall_100", Measure("Recall", 100)),
        ("map", Measure("MAP")),
        ("map_cut_100", Measure("MAP", 100)),
        ("recip_rank", Measure("MRR")),
        ("bpref", Measure("Bpref")),
        ("ndcg", Measure("nDCG")),
        ("unj_10", Measure("Unjudged", 10)),
        ("success_5", Measure("Success", 5)),
        ("nDCG@10", Measure("nDCG", 10)),
        ("R@100", Measure("Recall", 100)),
        ("P(rel=2)@10", Measure("P", 10, 2)),
        ("AP", Measure("MAP")),
        ("RR@10", Measure("MRR", 10)),
        ("nDCG(judged_only=True)@10", Measure("nDCG_judged", 10)),
    ],
)
def test_trec_eval_and_ir_measures_spellings(text, measure):
    assert Measure.parse(text) == measure
    assert Measure.parse(str(measure)) == measure
    assert Measure.parse(measure.key) == measure


def test_trec_eval_names_round_trip():
    for text in ("ndcg_cut_10", "P_10", "recall_100", "map", "map_cut_100", "recip_rank", "bpref", "unj_10"):
        assert Measure.parse(text).trec_name == text
    assert Measure.parse("P(rel=2)@10").trec_name is None
    assert Measure.parse("P(rel=2)@10").ir_measures_name == "P(rel=2)@10"
    assert str(ir_measures.parse_measure(Measure.parse("AP").ir_measures_name)) == "AP"
