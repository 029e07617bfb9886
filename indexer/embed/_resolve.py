"""``--model`` to :class:`ModelSpec`: an endpoint model, a local folder, or any hub model id.

The first resolver in :data:`RESOLVERS` that claims the name decides. Settings come from the model's own
files (:mod:`indexer.embed._folder`), then from the known-model defaults (:mod:`indexer.embed._known`), and
``--query-prompt`` / ``--document-prompt`` override both. A model that ships code of its own is refused
unless ``trust_remote_code`` (``--trust-remote-code``) is given.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from base import ConfigError, EmbeddingError
from indexer.embed._endpoint import endpoint_spec, is_endpoint_model
from indexer.embed._folder import folder_revision, is_model_folder, read_folder
from indexer.embed._hub import parse_hub_id, resolve_hub, snapshot_repo
from indexer.embed._known import KNOWN_MODELS, KnownModel, find_known
from indexer.embed._models import BUNDLED_PACKAGE, ModelSpec, bundled_model_path, field_name_for

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_ID = "sentence-transformers/all-MiniLM-L6-v2"
TRUST_FLAG = "--trust-remote-code"
log = logging.getLogger("indexer.embed")


@dataclass(frozen=True, slots=True)
class Request:
    """What the user asked for: the name as given, and whether code shipped with a model may run."""

    name: str
    trust_remote_code: bool = False


def known_models() -> dict[str, tuple[str, ...]]:
    """Hub ids with built-in defaults, and their short names."""
    return {m.hub_id: m.aliases for m in KNOWN_MODELS}


def _short_names() -> str:
    return ", ".join(a[0] for a in known_models().values() if a)


def _bundled_minilm() -> ModelSpec:
    return ModelSpec(
        model_id=BUNDLED_ID,
        path_or_name=str(bundled_model_path()),
        revision=f"{BUNDLED_PACKAGE}=={metadata.version(BUNDLED_PACKAGE)}",
        dims=384,
    )


def _check_remote_code(model_id: str, folder: Path, reasons: list[str], request: Request) -> bool:
    """True when the model runs code of its own (and the user allowed it); refused otherwise."""
    if not reasons:
        return False
    if not request.trust_remote_code:
        raise ConfigError(
            f"embedding model {model_id!r} ships Python code that loading it would run on this machine "
            f"({'; '.join(reasons)}). Read that code (in {folder}) and, to run it, pass {TRUST_FLAG}; "
            "the run manifest then records trust_remote_code: true"
        )
    return True


def _similarity(declared: str | None, normalize_module: bool, model_id: str) -> str:
    if normalize_module or declared in (None, "cosine"):
        return "cosine"
    log.warning(
        "model %s declares %s similarity without a Normalize module; its vectors are L2-normalised here, so "
        "the engine ranks by cosine, not by %s (recorded as the model's similarity in the manifest)",
        model_id,
        declared,
        declared,
    )
    return declared


def _folder_spec(
    folder: Path,
    *,
    model_id: str,
    revision: str,
    request: Request,
    known: KnownModel | None = None,
    path_or_name: str | None = None,
    field_name: str = "",
) -> ModelSpec:
    """A spec from a folder's own settings, with ``known``'s defaults where the folder is silent."""
    config = read_folder(folder)
    reasons = list(config.custom_code)
    if known is not None and known.trust_remote_code and not reasons:
        reasons.append(f"{known.hub_id}: {known.note or 'custom modeling code'}")
    query, document = (known.query_prompt, known.document_prompt) if known is not None else ("", "")
    return ModelSpec(
        model_id=model_id,
        path_or_name=path_or_name or str(folder),
        revision=revision,
        query_prompt=query if config.query_prompt is None else config.query_prompt,
        document_prompt=document if config.document_prompt is None else config.document_prompt,
        field_name=field_name,
        pooling=known.pooling if known is not None and not config.has_modules else None,
        trust_remote_code=_check_remote_code(model_id, folder, reasons, request),
        similarity=_similarity(config.similarity, config.normalize_module, model_id),
    )


def _from_folder(request: Request) -> ModelSpec | None:
    folder = Path(request.name).expanduser()
    if not folder.is_dir():
        return None
    folder = folder.resolve()
    if folder == bundled_model_path():
        return _bundled_minilm()
    if not is_model_folder(folder):
        raise EmbeddingError(
            f"{folder} is not a model folder: expected modules.json or config.json (a sentence-transformers "
            "or Hugging Face model)"
        )
    snapshot = snapshot_repo(folder)
    if snapshot is not None:  # a hub cache snapshot given by path: the hub id at that commit
        repo_id, commit = snapshot
        return _folder_spec(
            folder, model_id=repo_id, revision=commit, request=request, known=find_known(repo_id)
        )
    revision = folder_revision(folder)
    slug = field_name_for(folder.name)
    return _folder_spec(
        folder,
        model_id=f"local/{folder.name}",
        revision=revision,
        request=request,
        field_name=f"{slug}_{revision.split(':', 1)[1][:8]}",
    )


def _from_hub(request: Request) -> ModelSpec | None:
    base, _, revision = request.name.strip().partition("@")
    known = find_known(base)
    if known is not None and known.hub_id == BUNDLED_ID and not revision:
        return _bundled_minilm()
    repo = known.hub_id if known is not None else base
    parsed = parse_hub_id(f"{repo}@{revision}" if revision else repo)
    if parsed is None:
        return None
    repo_id, rev = parsed
    hint = f"; no local folder {request.name!r} exists either"
    if known is None and "/" not in repo_id:
        hint += f", nor is it a short name ({_short_names()})"
    hub = resolve_hub(repo_id, rev, hint=hint)
    return _folder_spec(
        hub.folder,
        model_id=repo_id,
        revision=hub.commit,
        request=request,
        known=known,
        path_or_name=str(hub.folder) if hub.complete else repo_id,
    )


def _from_endpoint(request: Request) -> ModelSpec | None:
    return endpoint_spec(request.name) if is_endpoint_model(request.name) else None


#: tried in order; the first that returns a spec wins (``None``: not mine)
RESOLVERS: tuple[Callable[[Request], ModelSpec | None], ...] = (_from_endpoint, _from_folder, _from_hub)


def resolve_model(
    name_or_path: str | Path | None = None,
    *,
    query_prompt: str | None = None,
    document_prompt: str | None = None,
    trust_remote_code: bool = False,
) -> ModelSpec:
    """The :class:`ModelSpec` for a short name, a hub model id (``org/name[@REVISION]``), a local folder, or
    ``openai:MODEL[@REVISION]`` (embedded through an OpenAI-compatible endpoint).

    ``None`` gives the default (all-MiniLM-L6-v2, bundled). Prompts given here replace the model's own and
    the built-in defaults. A hub id is resolved to a commit (offline: through the local cache's refs; a model
    not cached is an :class:`EmbeddingError` saying how to place it). A model with code of its own is a
    :class:`ConfigError` unless ``trust_remote_code``.
    """
    request = Request(DEFAULT_MODEL if name_or_path is None else str(name_or_path), trust_remote_code)
    for resolver in RESOLVERS:
        spec = resolver(request)
        if spec is not None:
            return spec.with_prompts(query_prompt=query_prompt, document_prompt=document_prompt)
    raise EmbeddingError(
        f"unknown embedding model {request.name!r}: expected a sentence-transformers model id from the hub "
        "(org/name[@REVISION]), a local model folder (no such folder exists), a short name "
        f"({_short_names()}), or openai:MODEL with --embed-url "
        "(an OpenAI-compatible endpoint)"
    )
