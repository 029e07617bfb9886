"""``--embed-backend auto`` (the default): the fastest numerics this machine runs within tolerance of torch fp32.

Decided where it runs, once per machine and model, and cached:

1. **Candidates**: the numerics of :data:`CPU_CANDIDATES` whose CPU features this processor has
   (``/proc/cpuinfo`` flags: AMX bf16 units, VNNI int8 dot products, AVX2) and whose packages are
   installed, in the order they are fastest where they are native (``bench/embedding.py``, figure e).
2. **The numerics rule**: a precision other than fp32 is a candidate only for a model whose
   sample vector nDCG@10 was measured with it within :data:`NDCG_TOLERANCE` of torch fp32
   (:data:`SAMPLE_NDCG`, from ``bench/embedding.py --only ndcg``); fp32 on another runtime keeps
   the fp32 numerics and is a candidate for any model.
3. **The check**: :data:`PROBE_TEXTS` abstracts of the bundled sample are embedded by the candidate
   and by torch fp32, alternating, twice. The candidate passes when every vector's cosine with the
   reference reaches :data:`COSINE_FLOOR` for its precision and it is at least :data:`MIN_SPEEDUP`
   times as fast. The first candidate that passes wins; none: torch fp32.

On a GPU (cuda, mps) auto is torch at its own precision (fp16 on CUDA), as before auto existed.
The decision is kept in ``<cache>/embed-auto.json`` under a key of the CPU (model name, flags, usable
cores), the runtime versions, the model (id, revision, pooling) and the rule (its constants below and
:data:`RULE_VERSION`), so the check is paid once; it travels with the model spec (``chosen_by``) into
the index ``_meta`` and the run manifest.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata, resources
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from base import ConfigError, EmbeddingError, default_cache_dir
from base import progress as show_progress
from indexer.embed._backend import get_backend
from indexer.embed._models import REFERENCE_BACKEND, REFERENCE_PRECISION, ModelSpec
from indexer.embed._threads import usable_cores

#: bump when the check changes in a way its constants below do not show (they are in the record's key too):
#: every machine decides again
RULE_VERSION = 1
#: how far the sample's vector nDCG@10 may move from torch fp32 for a lower precision to be chosen
NDCG_TOLERANCE = 0.002
#: the model the nDCG figures are of (the default model, bundled)
MEASURED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: vector nDCG@10 of ``harness run vector --dataset sample`` per numerics (``python bench/embedding.py
#: --only ndcg --backends onnx,onnx-int8,openvino,openvino/fp32``, 2026-12-01, Xeon with AMX on 2 cores; exact
#: search over the same vectors gives the same figures; see docs/embedding-numerics.md)
SAMPLE_NDCG: dict[str, float] = {
    "torch/fp32": 0.645082,
    "onnx/fp32": 0.645082,
    "openvino/fp32": 0.645082,
    "openvino/bf16": 0.645454,  # +0.000372: within the tolerance
    "onnx-int8/int8": 0.649305,  # +0.004223: outside it (above, but other numerics all the same)
}
#: the least cosine with torch fp32 every probe vector must reach, by precision
COSINE_FLOOR: dict[str, float] = {"fp32": 0.9999, "bf16": 0.995, "fp16": 0.999, "int8": 0.98}
#: the least speed-up over torch fp32 on the probe texts worth leaving the reference for
MIN_SPEEDUP = 1.2
PROBE_TEXTS = 24
AUTO_FILE = "embed-auto.json"


@dataclass(frozen=True, slots=True)
class Candidate:
    """Numerics ``auto`` may choose on a CPU, and the CPU flags (any one) that make them native there."""

    backend: str
    precision: str
    needs: tuple[str, ...]

    @property
    def numerics(self) -> str:
        return f"{self.backend}/{self.precision}"


#: fastest first where native (bench/embedding.py figure e on CPUs with and without AMX)
CPU_CANDIDATES: tuple[Candidate, ...] = (
    Candidate("openvino", "bf16", ("amx_bf16",)),
    Candidate("onnx-int8", "int8", ("avx512_vnni", "avx_vnni")),
    Candidate("openvino", "fp32", ("avx2",)),
    Candidate("onnx", "fp32", ("avx2",)),
)


@dataclass(frozen=True, slots=True)
class Trial:
    """What became of one candidate: ``verdict`` in a few words, the check's figures when it ran."""

    numerics: str
    verdict: str
    min_cosine: float | None = None
    speedup: float | None = None


@dataclass(frozen=True, slots=True)
class AutoChoice:
    """The numerics ``auto`` chose here, and why (``reason``: one line, as the manifest records it)."""

    backend: str
    precision: str
    reason: str
    trials: tuple[Trial, ...] = ()
    machine: str = ""
    decided: str = ""
    cached: bool = False

    @property
    def numerics(self) -> str:
        return f"{self.backend}/{self.precision}"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's feature flags (empty where there is no ``/proc/cpuinfo``)."""
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("flags", "Features")):
                return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def _cpu_name(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    with contextlib.suppress(OSError):
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return sys.platform


def allowed_by_rule(
    model_id: str, numerics: str, precision: str, measured_ndcg: Mapping[str, float] = SAMPLE_NDCG
) -> str | None:
    """None when the numerics rule lets ``numerics`` stand in for torch fp32 for ``model_id``; else why not."""
    reference = measured_ndcg[f"{REFERENCE_BACKEND}/{REFERENCE_PRECISION}"]
    measured = measured_ndcg.get(numerics) if model_id == MEASURED_MODEL else None
    if measured is not None:
        delta = measured - reference
        if abs(delta) <= NDCG_TOLERANCE:
            return None
        return f"sample nDCG@10 {measured:.4f} is {delta:+.4f} from torch fp32 (tolerance {NDCG_TOLERANCE})"
    if precision == REFERENCE_PRECISION:
        return None  # fp32 on another runtime: the same numerics up to rounding (the check confirms)
    return f"{precision} is not measured within {NDCG_TOLERANCE} nDCG@10 of torch fp32 for this model"


def plan_candidates(model_id: str, flags: frozenset[str], device: str = "cpu") -> list[tuple[Candidate, str]]:
    """Every CPU candidate with ``""`` when it goes to the check, else why it does not."""
    planned = []
    for candidate in CPU_CANDIDATES:
        backend = get_backend(candidate.backend)
        if not any(flag in flags for flag in candidate.needs):
            why = f"not native here (needs {' or '.join(candidate.needs)})"
        elif not backend.available():
            why = f"not installed (pip extra {backend.extra})"
        elif candidate.precision not in backend.precisions(device):
            why = f"{candidate.backend} offers {', '.join(backend.precisions(device))} here"
        else:
            why = allowed_by_rule(model_id, candidate.numerics, candidate.precision) or ""
        planned.append((candidate, why))
    return planned


def probe_texts(n: int = PROBE_TEXTS) -> list[str]:
    """The first ``n`` abstracts (title + text) of the bundled sample corpus."""
    corpus = resources.files("indexer.data").joinpath("resources", "scifact", "corpus.jsonl.gz")
    with corpus.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in islice(handle, n)]
    return [" ".join(p for p in (r.get("title", ""), r.get("text", "")) if p) for r in rows]


Embed = Callable[[Sequence[str]], np.ndarray]


def check(candidate: Embed, reference: Embed, texts: Sequence[str]) -> tuple[float, float]:
    """(min cosine, speed-up) of ``candidate`` against ``reference`` on ``texts``: both warmed up, then
    timed twice, alternating which goes first; the vectors must be unit length (the encoders normalise)."""
    candidate(texts[:2])
    reference(texts[:2])
    spent = {"candidate": 0.0, "reference": 0.0}
    vectors: dict[str, np.ndarray] = {}
    for order in (("reference", "candidate"), ("candidate", "reference")):
        for side in order:
            started = time.perf_counter()
            vectors[side] = (candidate if side == "candidate" else reference)(texts)
            spent[side] += time.perf_counter() - started
    cosine = float((vectors["candidate"] * vectors["reference"]).sum(axis=1).min())
    return cosine, spent["reference"] / max(spent["candidate"], 1e-9)


def verdict(numerics: str, precision: str, cosine: float, speedup: float) -> Trial:
    floor = COSINE_FLOOR[precision]
    if cosine < floor:
        why = f"check failed: min cosine {cosine:.5f} < {floor}"
    elif speedup < MIN_SPEEDUP:
        why = f"not faster: {speedup:.2f}x torch fp32 < {MIN_SPEEDUP}x"
    else:
        why = "passed"
    return Trial(numerics, why, round(cosine, 6), round(speedup, 3))


def machine_key(spec: ModelSpec, flags: frozenset[str]) -> tuple[str, str]:
    """(key, description) of this machine for ``spec``: what the decision depends on."""
    versions = {}
    for package in ("torch", "onnxruntime", "openvino"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = ""
    wanted = sorted({f for c in CPU_CANDIDATES for f in c.needs} & flags)
    machine = f"{_cpu_name()}, {usable_cores()} cores, {' '.join(wanted) or 'no listed flags'}"
    parts = {
        "rule": _rule(),
        "machine": machine,
        "versions": versions,
        "model": spec.identity(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16], machine


def _rule() -> dict[str, Any]:
    """Everything the decision follows from besides the machine and the model: a change decides again."""
    return {
        "version": RULE_VERSION,
        "candidates": [asdict(c) for c in CPU_CANDIDATES],
        "sample_ndcg": SAMPLE_NDCG,
        "tolerance": NDCG_TOLERANCE,
        "floors": COSINE_FLOOR,
        "min_speedup": MIN_SPEEDUP,
        "probe_texts": PROBE_TEXTS,
    }


def auto_file() -> Path:
    return default_cache_dir() / AUTO_FILE


def _read_records(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or damaged: decide again (and rewrite it)
    return found if isinstance(found, dict) else {}


def load_choice(key: str, path: Path) -> AutoChoice | None:
    record = _read_records(path).get(key)
    if not isinstance(record, dict):
        return None
    try:
        trials = tuple(Trial(**t) for t in record.get("trials", ()))
        fields = {k: v for k, v in record.items() if k not in ("trials", "cached")}
        return AutoChoice(**fields, trials=trials, cached=True)
    except (TypeError, ValueError):
        return None


def save_choice(key: str, choice: AutoChoice, path: Path) -> None:
    """Add ``choice`` under ``key`` (other machines' and models' records kept), atomically."""
    records = _read_records(path)
    record = asdict(choice)
    record.pop("cached")
    records[key] = record
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".embed-auto-", delete=False) as out:
        json.dump(records, out, indent=1, sort_keys=True)
    os.replace(out.name, path)


def reason_line(choice: AutoChoice) -> str:
    """One line for the manifest: what auto chose here and why."""
    return f"auto: {choice.numerics} on {choice.machine}; {choice.reason}"


#: makes the embedding function of one numerics (backend, precision) for the check
EmbedFactory = Callable[[str, str], Embed]


def _try(candidate: Candidate, make: EmbedFactory, reference: Embed, texts: Sequence[str]) -> Trial:
    try:
        cosine, speedup = check(make(candidate.backend, candidate.precision), reference, texts)
    except (ConfigError, EmbeddingError) as exc:  # e.g. a model only torch can run (a Dense module)
        return Trial(candidate.numerics, f"cannot run: {str(exc).splitlines()[0][:160]}")
    return verdict(candidate.numerics, candidate.precision, cosine, speedup)


def decide(
    spec: ModelSpec, make: EmbedFactory, flags: frozenset[str], machine: str, *, progress: bool = False
) -> AutoChoice:
    """Run the candidates' checks in order; the first that passes wins, else torch fp32."""
    trials: list[Trial] = []
    reference: Embed | None = None
    texts = probe_texts()
    planned = plan_candidates(spec.model_id, flags)
    checks = sum(1 for _, why in planned if not why)
    what = f"choosing the embedding numerics for this machine (once; the first of {checks} that passes)"
    with show_progress(what, checks, unit="checks", enabled=progress) as bar:
        for candidate, why in planned:
            if why:
                trials.append(Trial(candidate.numerics, why))
                continue
            reference = reference or make(REFERENCE_BACKEND, REFERENCE_PRECISION)
            trial = _try(candidate, make, reference, texts)
            trials.append(trial)
            bar.advance(1)
            if trial.verdict == "passed":
                reason = (
                    f"{candidate.numerics} passed the check (min cosine {trial.min_cosine:.5f} with torch "
                    f"fp32, {trial.speedup:.2f}x its speed on {len(texts)} sample abstracts)"
                )
                return _choice(candidate.backend, candidate.precision, reason, trials, machine)
    reason = "no faster numerics passed here: " + "; ".join(f"{t.numerics}: {t.verdict}" for t in trials)
    return _choice(REFERENCE_BACKEND, REFERENCE_PRECISION, reason, trials, machine)


def _choice(backend: str, precision: str, reason: str, trials: list[Trial], machine: str) -> AutoChoice:
    decided = datetime.now(UTC).isoformat(timespec="seconds")
    return AutoChoice(backend, precision, reason, tuple(trials), machine, decided)


def choose_numerics(
    spec: ModelSpec, device: str, make: EmbedFactory, *, path: Path | None = None, progress: bool = False
) -> AutoChoice:
    """The numerics ``auto`` uses for ``spec`` on ``device``: on a GPU torch at its own precision; on a CPU
    the record of this machine and model, or a fresh decision (:func:`decide`), saved for next time."""
    kind = device.split(":", 1)[0]
    if kind != "cpu":
        torch = get_backend(REFERENCE_BACKEND)
        return AutoChoice(REFERENCE_BACKEND, torch.precision(device), f"torch on {kind}", machine=device)
    flags = cpu_flags()
    key, machine = machine_key(spec, flags)
    path = path or auto_file()
    found = load_choice(key, path)
    if found is not None:
        return found
    choice = decide(spec, make, flags, machine, progress=progress)
    with contextlib.suppress(OSError):  # a read-only cache: decide again next time
        save_choice(key, choice, path)
    return choice
