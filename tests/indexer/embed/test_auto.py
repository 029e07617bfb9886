"""``--embed-backend auto``: candidates from the CPU, the measured numerics rule, the check on real models,
the per-machine record, and that a changed default never reuses vectors of other numerics."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from indexer.embed import (
    NDCG_TOLERANCE,
    SAMPLE_NDCG,
    AutoChoice,
    CachedEmbedder,
    EmbeddingCache,
    Encoder,
    ModelSpec,
    choose_numerics,
    cpu_flags,
    get_backend,
)
from indexer.embed._auto import (
    AUTO_FILE,
    COSINE_FLOOR,
    MEASURED_MODEL,
    Embed,
    allowed_by_rule,
    check,
    decide,
    load_choice,
    machine_key,
    plan_candidates,
    probe_texts,
    save_choice,
    verdict,
)
from indexer.embed._backends._export import default_models_dir
from tests._support import own_cache, record_auto_choice

NO_AMX = frozenset({"avx2", "fma"})  # a CPU with neither AMX nor VNNI: only the fp32 runtimes are native


@pytest.fixture(scope="module")
def make(minilm: ModelSpec) -> Callable[[str, str], Embed]:
    """Real encoders of each numerics, as auto's check builds them (the machine's ONNX exports)."""
    return Encoder(minilm, device="cpu", backend="auto", models_dir=default_models_dir())._checker("cpu")


@pytest.fixture(scope="module")
def decided(minilm: ModelSpec, make: Callable[[str, str], Embed]) -> AutoChoice:
    """One real decision on a CPU without AMX or VNNI (so the fp32 runtimes are what gets checked)."""
    return decide(minilm, make, NO_AMX, "test machine")


def test_cpu_flags_come_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu avx2 amx_bf16\n\nprocessor\t: 1\n"
    )
    assert cpu_flags(info) == {"fpu", "avx2", "amx_bf16"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_the_rule_takes_lower_precisions_only_where_measured_within_the_tolerance() -> None:
    table = {"torch/fp32": 0.6451, "x/bf16": 0.6440, "y/int8": 0.6400, "z/fp32": 0.6300}
    assert allowed_by_rule(MEASURED_MODEL, "x/bf16", "bf16", table) is None  # -0.0011
    assert "-0.0051 from torch fp32" in str(allowed_by_rule(MEASURED_MODEL, "y/int8", "int8", table))
    assert "-0.0151" in str(allowed_by_rule(MEASURED_MODEL, "z/fp32", "fp32", table))  # measured: it counts
    # another model: no lower precision without a measurement, fp32 on another runtime keeps fp32 numerics
    assert "not measured" in str(allowed_by_rule("local/other", "x/bf16", "bf16", table))
    assert allowed_by_rule("local/other", "w/fp32", "fp32", table) is None
    # the shipped table, as measured: every entry is judged by the same rule
    reference = SAMPLE_NDCG["torch/fp32"]
    for numerics, ndcg in SAMPLE_NDCG.items():
        precision = numerics.split("/")[1]
        allowed = allowed_by_rule(MEASURED_MODEL, numerics, precision) is None
        assert allowed == (abs(ndcg - reference) <= NDCG_TOLERANCE), numerics


def test_candidates_follow_the_cpu_flags() -> None:
    planned = {c.numerics: why for c, why in plan_candidates(MEASURED_MODEL, NO_AMX)}
    assert planned["openvino/bf16"] == "not native here (needs amx_bf16)"
    assert planned["onnx-int8/int8"] == "not native here (needs avx512_vnni or avx_vnni)"
    assert planned["openvino/fp32"] == planned["onnx/fp32"] == ""  # both installed here (scripts/setup)
    amx = {c.numerics: why for c, why in plan_candidates(MEASURED_MODEL, NO_AMX | {"amx_bf16"})}
    offered = get_backend("openvino").precisions("cpu")  # the runtime asks the real CPU, not the flags given
    if "bf16" in offered:
        assert amx["openvino/bf16"] == (allowed_by_rule(MEASURED_MODEL, "openvino/bf16", "bf16") or "")
    else:  # flags that claim AMX on a CPU without it: the runtime's own answer decides
        assert amx["openvino/bf16"] == f"openvino offers {', '.join(offered)} here"
    other_model = {c.numerics: w for c, w in plan_candidates("local/x", NO_AMX | {"amx_bf16"})}[
        "openvino/bf16"
    ]
    assert ("not measured" if "bf16" in offered else "offers fp32 here") in other_model
    assert plan_candidates(MEASURED_MODEL, frozenset())[-1][1].startswith("not native")  # e.g. an ARM CPU


def test_the_check_compares_with_torch_fp32_and_times_both(make: Callable[[str, str], Embed]) -> None:
    texts = probe_texts(8)
    assert len(texts) == 8 and all(texts)
    cosine, speedup = check(make("onnx", "fp32"), make("torch", "fp32"), texts)
    assert cosine >= COSINE_FLOOR["fp32"] and speedup > 0
    int8, _ = check(make("onnx-int8", "int8"), make("torch", "fp32"), texts)
    assert COSINE_FLOOR["int8"] <= int8 < COSINE_FLOOR["fp32"]  # other numerics, within their floor
    assert verdict("a/fp32", "fp32", int8, 3.0).verdict.startswith("check failed: min cosine")
    assert verdict("a/fp32", "fp32", 1.0, 1.1).verdict == "not faster: 1.10x torch fp32 < 1.2x"
    assert verdict("a/int8", "int8", int8, 2.0).verdict == "passed"


def test_a_decision_takes_the_first_candidate_that_passes(decided: AutoChoice) -> None:
    trials = {t.numerics: t for t in decided.trials}
    assert trials["openvino/bf16"].min_cosine is None  # not native: never loaded
    checked = [t for t in decided.trials if t.min_cosine is not None]
    assert checked and all(t.min_cosine is not None and t.min_cosine >= 0.9999 for t in checked)
    passed = [t.numerics for t in decided.trials if t.verdict == "passed"]
    if passed:
        assert decided.numerics == passed[0] and decided.trials[-1].numerics == passed[0]  # checks stop there
        assert "passed the check" in decided.reason
    else:
        assert decided.numerics == "torch/fp32" and "no faster numerics passed" in decided.reason


def test_the_decision_is_kept_per_machine_and_model(
    minilm: ModelSpec, decided: AutoChoice, tmp_path: Path
) -> None:
    path = tmp_path / AUTO_FILE
    key, machine = machine_key(minilm, NO_AMX)
    assert "cores" in machine and "avx2" in machine
    save_choice(key, decided, path)
    found = load_choice(key, path)
    assert found is not None and found.cached and dataclasses.replace(found, cached=False) == decided
    other_weights = ModelSpec(minilm.model_id, minilm.path_or_name, "another-revision")
    assert machine_key(other_weights, NO_AMX)[0] != key
    assert machine_key(minilm, NO_AMX | {"amx_bf16"})[0] != key
    path.write_text("{ damaged")
    assert load_choice(key, path) is None  # decided again, then rewritten


def test_a_recorded_decision_is_used_without_loading_any_model(minilm: ModelSpec, tmp_path: Path) -> None:
    path = tmp_path / AUTO_FILE
    key, _ = machine_key(minilm, cpu_flags())
    save_choice(key, AutoChoice("onnx", "fp32", "recorded earlier", machine="here"), path)

    def no_model(backend: str, precision: str) -> Embed:
        raise AssertionError(f"the check ran ({backend}/{precision}) though a decision was recorded")

    choice = choose_numerics(minilm, "cpu", no_model, path=path)
    assert (choice.numerics, choice.cached, choice.reason) == ("onnx/fp32", True, "recorded earlier")
    gpu = choose_numerics(minilm, "cuda:0", no_model, path=path)
    assert gpu.numerics == "torch/fp16" and not gpu.cached  # a GPU: torch at its own precision, no check


def test_a_changed_default_never_reuses_vectors_of_other_numerics(
    minilm: ModelSpec, scifact_docs: list[tuple[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own_cache(monkeypatch, tmp_path / "cache")  # this test's auto record
    docs = scifact_docs[:12]
    with EmbeddingCache(tmp_path / "vectors") as cache:
        before = CachedEmbedder(Encoder(minilm, backend="torch"), cache)  # what the old default stored
        torch_vectors = np.concatenate([v for _, v in before.embed_documents(docs)])
        record_auto_choice(minilm, "onnx-int8", "int8")
        after = CachedEmbedder(Encoder(minilm, backend="auto"), cache)
        assert after.spec.numerics == "onnx-int8/int8"
        assert after.spec.chosen_by.startswith("auto: onnx-int8/int8 on ")
        vectors = np.concatenate([v for _, v in after.embed_documents(docs)])
        assert after.stats.cache_hits == 0 and after.stats.texts_encoded == 12
        direct = Encoder(minilm, backend="onnx-int8").encode_documents([t for _, t in docs])
        np.testing.assert_allclose(vectors, direct, atol=1e-6)
        assert not np.allclose(vectors, torch_vectors, atol=1e-4)
        # auto deciding for the reference numerics finds the reference's vectors: the same numerics
        record_auto_choice(minilm, "torch", "fp32")
        same = CachedEmbedder(Encoder(minilm, backend="auto"), cache)
        again = np.concatenate([v for _, v in same.embed_documents(docs)])
        assert same.stats.cache_hits == 12 and not same.encoder.loaded
        assert np.array_equal(again, torch_vectors)
