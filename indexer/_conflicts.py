"""What an index build refuses before it changes anything: vectors that must not go where they would.

A field of the same name holding another size, another model's weights, another document prompt, or (in
the same index) other numerics is refused. The index the dataset's alias publishes is held to the same
rules, numerics aside (other numerics get an index of their own), so what a user gets does not depend on
the numerics ``--embed-backend auto`` chose on the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from base import MappingConflictError
from indexer.backends import Backend
from indexer.embed import REFERENCE_BACKEND, REFERENCE_PRECISION, CachedEmbedder, ModelSpec


def check_vector_conflicts(
    backend: Backend,
    index: str,
    embedders: Sequence[CachedEmbedder],
    fields: Sequence[str],
    dims: dict[str, int],
    *,
    published_by: str | None = None,
) -> None:
    """Refuse (:class:`MappingConflictError`, nothing changed) vectors that cannot join ``index``'s fields.

    ``published_by``: ``index`` is not the one being built but the one this alias publishes (the build
    goes to an index of other numerics); it is held to every rule but the numerics one.
    """
    mapping = backend.get_mapping(index)
    meta_models = mapping.meta.get("models", {})
    where = f"index {index}" if published_by is None else f"index {index} (published as {published_by})"
    for emb, field_name in zip(embedders, fields, strict=True):
        spec = emb.spec
        existing = mapping.properties.get(field_name)
        if existing is None:
            continue
        have = backend.vector_dims(existing)
        if have is None:
            raise MappingConflictError(
                f"mapping conflict on {where}, field {field_name}: it exists as "
                f"{existing.get('type', 'an object')!r}, not as a {backend.product} vector field, so model "
                f"{spec.model_id}'s vectors cannot go there (nothing was changed). Delete the index "
                "(`harness indices delete`) or rename the field"
            )
        if have != dims[field_name]:
            raise MappingConflictError(
                f"{where} field {field_name} holds {have}-dimensional vectors, "
                f"but model {spec.model_id} produces {dims[field_name]}; delete the index "
                f"(`harness indices delete`) or use a model with {have} dimensions"
            )
        check_same_model(where, spec, meta_models.get(field_name), numerics=published_by is None)


def check_published(
    backend: Backend,
    alias: str,
    name: str,
    embedders: Sequence[CachedEmbedder],
    fields: Sequence[str],
    dims: dict[str, int],
) -> None:
    """Hold the indices ``alias`` publishes, other than ``name`` (the one being built), to the same rules."""
    for published in backend.alias_targets(alias):
        if published != name:
            check_vector_conflicts(backend, published, embedders, fields, dims, published_by=alias)


def check_same_model(
    where: str, spec: ModelSpec, known: dict[str, Any] | None, *, numerics: bool = True
) -> None:
    """The vectors a field holds (``known``: its ``_meta`` record) and ``spec``'s must be the same model's,
    with the same document prompt and (``numerics``) the same numerics."""
    if not known:
        return
    if known.get("document_prompt", "") != spec.document_prompt:
        raise MappingConflictError(
            f"{where} field {spec.field_name} was embedded with document prompt "
            f"{known.get('document_prompt', '')!r}, not {spec.document_prompt!r}: vectors made with different "
            "prompts must not mix"
        )
    # indices made before backends existed hold the reference numerics (torch fp32)
    held = f"{known.get('backend', REFERENCE_BACKEND)}/{known.get('precision', REFERENCE_PRECISION)}"
    if numerics and held != spec.numerics:
        raise MappingConflictError(
            f"{where} field {spec.field_name} holds vectors computed with {held}, not "
            f"{spec.numerics}: vectors from different numerics must not mix (indices of other numerics than "
            f"torch/fp32 have names of their own; this one was built before they had); use --embed-backend "
            f"{held}, or delete the index (`harness indices delete`) to rebuild it"
        )
    if (known.get("model_id"), known.get("revision")) != (spec.model_id, spec.revision):
        raise MappingConflictError(
            f"{where} field {spec.field_name} was built with {known.get('model_id')}@{known.get('revision')}, "
            f"not {spec.model_id}@{spec.revision}: vectors from different weights must not mix"
        )
