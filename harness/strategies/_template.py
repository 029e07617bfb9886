"""Template arms: the user's own search body, a mustache template rendered for every query.

A :class:`TemplateArm` says where it searches (an index or alias, on the run's cluster or
its own), which ``_source`` field names the documents (``id_field``), the embedding model
its template's ``{{query_vector}}`` needs, and the template's own ``params``. Its strategy,
:class:`TemplateStrategy`, fills the variables (``harness.templates.HARNESS_VARIABLES``)
and renders the body; a render that fails names the arm, the template and the query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from base import ConfigError
from harness.strategies._base import QueryInput, RetrievalStrategy, SearchContext
from harness.templates import BUILTIN_PREFIX, QueryTemplate, builtin_template
from indexer import ConnectionSettings, QueryDialect

ID_FIELD = "_id"
ANY_ENGINE = ""


@dataclass(frozen=True, slots=True)
class TemplateArm:
    """An arm answered by the engine with a rendered template (an experiment's ``[[arms]]``)."""

    name: str
    #: engine product -> template ("" for any engine); built-in templates differ by kNN dialect
    templates: Mapping[str, QueryTemplate]
    params: Mapping[str, Any] = field(default_factory=dict)
    index: str | None = None  # None: the dataset's harness index (its alias)
    id_field: str = ID_FIELD
    model: str | None = None
    query_prompt: str | None = None
    connection: ConnectionSettings | None = None  # None: the run's cluster
    compare_to: tuple[str, ...] = ()
    needs_capability: None = None
    #: the id of a search template stored on the cluster (rendered by the engine: _msearch/template)
    stored_template: str | None = None
    #: an OpenSearch search pipeline the arm's searches run through (its definition is sent with each)
    search_pipeline: str | None = None

    def template(self, product: str) -> QueryTemplate:
        found = self.templates.get(product) or self.templates.get(ANY_ENGINE)
        if found is None:
            raise ConfigError(f"arm {self.name}: its template has no version for {product}")
        return found

    @property
    def needs_vector(self) -> bool:
        if self.stored_template is not None:  # the engine renders it: its model says it needs a vector
            return self.model is not None
        return any(t.needs_vector for t in self.templates.values())

    @property
    def source(self) -> str:
        """Where the template is: its file (or ``FILE: arms[i].template``), or the stored template's id."""
        if self.stored_template is not None:
            return f"stored template {self.stored_template}"
        return next(iter(self.templates.values())).source


class TemplateStrategy(RetrievalStrategy):
    """Renders ``arm``'s template for one query: the harness's variables, then the arm's params."""

    def __init__(self, ctx: SearchContext, arm: TemplateArm, product: str) -> None:
        super().__init__(ctx)
        self.arm = arm
        self.template = arm.template(product) if arm.stored_template is None else None

    def values(self, query: QueryInput) -> dict[str, Any]:
        ctx = self.ctx
        values: dict[str, Any] = {
            "query": query.text,
            "query_id": query.qid,
            "size": ctx.depth,
            "k": ctx.depth,
            "num_candidates": max(ctx.candidates, ctx.depth),
        }
        if query.vector is not None:
            values["query_vector"] = list(query.vector)
        if ctx.vector_field is not None:
            values["vector_field"] = ctx.vector_field
        return {**values, **self.arm.params}

    def body(self, query: QueryInput) -> dict[str, Any]:
        if self.template is None:  # a stored template: the engine renders it with these params
            return {"id": self.arm.stored_template, "params": self.values(query)}
        try:
            body = self.template.render(self.values(query))
        except ConfigError as exc:
            raise ConfigError(f"arm {self.arm.name}, query {query.qid}: {exc}") from None
        if self.arm.id_field != ID_FIELD:  # the id comes back in _source: ask for that field alone
            body["_source"] = [self.arm.id_field]
        return body


def builtin_body(
    name: str, ctx: SearchContext, query: QueryInput, params: Mapping[str, Any], dialect: QueryDialect | None
) -> dict[str, Any]:
    """The body of a built-in arm: its packaged template ``name`` (for the engine's dialect), rendered by
    the strategy every template arm uses, so that the built-in arms and templates share one code path."""
    product = dialect.product if dialect is not None else ANY_ENGINE
    variant = dialect.template_dialect if dialect is not None else ANY_ENGINE
    arm = TemplateArm(f"{BUILTIN_PREFIX}{name}", {ANY_ENGINE: builtin_template(name, variant)}, params)
    return TemplateStrategy(ctx, arm, product).body(query)
