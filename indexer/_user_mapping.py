"""A user's own index-creation body for a benchmark corpus (``harness index --mapping FILE.json``).

The user brings the settings, analyzers, similarities and mappings of their production index;
the harness fills only the fields the field map names: the document id always goes to
``_id``, the title and the text to their mapped fields (without a title field, the text
field gets title and text joined, so nothing of a document is lost), and one model's
vectors to the mapped vector field. Everything the engine could refuse later is checked
here first (a named field the mapping lacks, a text field that is not text, a vector
field of the wrong type for the engine or with the wrong dimensions), each error naming
the file and the JSON path, before anything is created.

The index is named from the data fingerprint and :attr:`UserMapping.sha256` (the canonical
body and the field map), so another mapping is another index and the same one resumes.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from base import ConfigError, slug
from indexer._layout import VectorOptions, alias_for, vector_spec
from indexer.backends import Backend

#: the field-map keys, and the fields of a document they name
FIELD_MAP_KEYS: tuple[str, ...] = ("title", "text", "vector")
#: mapping types the lexical arms can search with BM25
TEXT_TYPES: tuple[str, ...] = ("text", "match_only_text")
BODY_KEYS: tuple[str, ...] = ("settings", "mappings")


class FieldMapError(ConfigError):
    """A field map (``title=..,text=..,vector=..``) that does not parse: the caller names where it was written."""


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Which of the user's fields holds what (dotted paths for fields inside objects)."""

    text: str = "text"
    title: str | None = "title"
    vector: str | None = None  # None: the model's own field name (when the mapping has it)

    @staticmethod
    def pairs(spec: str) -> dict[str, str]:
        """``title=headline,text=body,vector=emb`` as a dict (any subset of the keys)."""
        given: dict[str, str] = {}
        for part in (p.strip() for p in spec.split(",") if p.strip()):
            key, sep, value = (s.strip() for s in part.partition("="))
            if not sep or not value or key not in FIELD_MAP_KEYS:
                raise FieldMapError(
                    f"expected key=field pairs with keys {', '.join(FIELD_MAP_KEYS)}, found {part!r}"
                )
            if key in given:
                raise FieldMapError(f"expected each key once, found {key!r} twice in {spec!r}")
            given[key] = value
        return given

    def to_dict(self) -> dict[str, str | None]:
        return {"title": self.title, "text": self.text, "vector": self.vector}


@dataclass(frozen=True, slots=True)
class UserMapping:
    """A validated index-creation body and the field map that says where the corpus goes."""

    source: str  # the file, as given
    body: dict[str, Any]  # {"settings": {...}, "mappings": {...}}
    field_map: FieldMap  # resolved: title None when neither named nor mapped
    sha256: str  # of the canonical body and the field map

    @property
    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = self.body["mappings"]["properties"]
        return props

    @property
    def label(self) -> str:
        """How the analysis of this index is named in summaries and manifests."""
        return f"custom:{self.sha256[:8]}"

    def identity(self) -> dict[str, Any]:
        """What a run's config hash and manifest record of the mapping (not where the file lies)."""
        return {"sha256": self.sha256, "field_map": self.field_map.to_dict()}

    def meta(self) -> dict[str, Any]:
        """What the index's ``_meta`` records of the mapping."""
        return {"source": self.source, **self.identity()}

    def alias(self, dataset_name: str) -> str:
        """The stable alias of this dataset under this user's mappings: named after the file."""
        return f"{alias_for(dataset_name)}-{slug(Path(self.source).stem, fallback='custom')}"

    def index_name(self, dataset_name: str, corpus_fingerprint: str) -> str:
        return f"{self.alias(dataset_name)}-{corpus_fingerprint[:12]}-u{self.sha256[:10]}"

    def setting(self, key: str) -> Any:
        """An index setting of the body (``{"index": {key}}``, ``"index.key"`` or ``key``), or None."""
        settings: dict[str, Any] = self.body.get("settings", {})
        nested = settings.get("index", {})
        found = nested.get(key) if isinstance(nested, dict) else None
        return found if found is not None else settings.get(f"index.{key}", settings.get(key))

    def creation_body(self, meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(settings, mappings) to create the index with: the user's, their ``_meta`` extended with ours."""
        body = copy.deepcopy(self.body)
        mappings = body["mappings"]
        mappings["_meta"] = {**mappings.get("_meta", {}), **meta}
        return body.get("settings", {}), mappings

    def source_doc(self, title: str | None, text: str | None) -> dict[str, Any]:
        """A document's text in the user's fields (dotted names: the engine expands them into objects)."""
        if self.field_map.title is None:
            joined = " ".join(p.strip() for p in (title or "", text or "") if p and p.strip())
            return {self.field_map.text: joined}
        return {self.field_map.title: title or "", self.field_map.text: text or ""}

    def vector_field(self, model_field: str) -> str:
        """The field the model's vectors go to: the named one, or the model's own name if mapped."""
        name = self.field_map.vector or model_field
        if _lookup(self.properties, name) is None:
            raise ConfigError(
                f"{self.source}: {_path(name)} is missing: the vectors need a field "
                + (
                    f"(the field map's vector={name} names it)"
                    if self.field_map.vector
                    else f"(map one and name it in the field map, vector=FIELD, or map {model_field}); "
                    "or index the text side only (no vectors)"
                )
                + f". The mapping defines: {', '.join(_leaves(self.properties)) or 'nothing'}"
            )
        return name


def _path(field: str) -> str:
    """The JSON path of a (dotted) field in an index-creation body."""
    return "mappings.properties." + ".properties.".join(field.split("."))


def _lookup(properties: dict[str, Any], field: str) -> dict[str, Any] | None:
    node: dict[str, Any] | None = {"properties": properties}
    for part in field.split("."):
        children = node.get("properties") if isinstance(node, dict) else None
        node = children.get(part) if isinstance(children, dict) else None
        if not isinstance(node, dict):
            return None
    return node


def _leaves(properties: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, prop in properties.items():
        if isinstance(prop, dict) and isinstance(prop.get("properties"), dict):
            out += _leaves(prop["properties"], f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def _read_body(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: expected a readable index-creation body (JSON), found: {exc}") from None
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: expected JSON (an index-creation body), found: {exc.msg}"
        ) from None
    if not isinstance(body, dict):
        raise ConfigError(
            f"{path}: expected a JSON object with settings and mappings, found {type(body).__name__}"
        )
    extra = sorted(set(body) - set(BODY_KEYS))
    if extra:
        raise ConfigError(
            f"{path}: expected only {' and '.join(BODY_KEYS)} at the top, found {', '.join(extra)}"
        )
    if not isinstance(body.get("settings", {}), dict):
        raise ConfigError(f"{path}: settings: expected an object, found {type(body['settings']).__name__}")
    props = body.get("mappings", {}).get("properties") if isinstance(body.get("mappings"), dict) else None
    if not isinstance(props, dict) or not props:
        raise ConfigError(
            f"{path}: mappings.properties: expected an object naming the index's fields, found none"
        )
    return body


def _check_text_field(path: Path, properties: dict[str, Any], role: str, field: str) -> None:
    prop = _lookup(properties, field)
    if prop is None:
        raise ConfigError(
            f"{path}: {_path(field)} is missing: the {role} goes there (the field map's {role}={field}). "
            f"The mapping defines: {', '.join(_leaves(properties))}"
        )
    if prop.get("type", "object") not in TEXT_TYPES:
        raise ConfigError(
            f"{path}: {_path(field)}.type is {prop.get('type', 'object')!r}: the {role} field must be one "
            f"of {', '.join(TEXT_TYPES)} for BM25"
        )


def load_user_mapping(path: str | Path, field_map: str | None = None) -> UserMapping:
    """Read and check ``path`` (an index-creation body) and ``field_map`` (``title=..,text=..,vector=..``).

    Without a field map the mapping must use the harness's names (``text``, and ``title`` if mapped).
    """
    path = Path(path)
    body = _read_body(path)
    given = FieldMap.pairs(field_map or "")
    props = body["mappings"]["properties"]
    default_title = "title" if _lookup(props, "title") is not None else None  # optional unless named
    fields = FieldMap(given.get("text", "text"), given.get("title", default_title), given.get("vector"))
    _check_text_field(path, props, "text", fields.text)
    if fields.title is not None:
        _check_text_field(path, props, "title", fields.title)
    canonical = json.dumps({"body": body, "field_map": fields.to_dict()}, sort_keys=True)
    return UserMapping(str(path), body, fields, hashlib.sha256(canonical.encode()).hexdigest())


def check_vector_field(backend: Backend, mapping: UserMapping, field: str, dims: int, model_id: str) -> None:
    """The user's vector ``field`` must be the engine's vector type with the model's dimensions."""
    prop = _lookup(mapping.properties, field) or {}
    expected = backend.vector_mapping(vector_spec(dims, VectorOptions()))["type"]
    have = backend.vector_dims(prop)
    if prop.get("type") != expected:
        raise ConfigError(
            f"{mapping.source}: {_path(field)}.type is {prop.get('type', 'object')!r}, expected {expected!r}: "
            f"{backend.product} keeps model {model_id}'s vectors in {expected} fields"
        )
    if have is None:
        raise ConfigError(
            f"{mapping.source}: {_path(field)} is a {expected} without its dimensions: expected {dims} "
            f"(model {model_id})"
        )
    if have != dims:
        key = next((k for k, v in prop.items() if v == have), "dims")
        raise ConfigError(
            f"{mapping.source}: {_path(field)}.{key} is {have}, model {model_id} produces {dims}"
        )
