"""Regenerate ``harness-eval.ndjson`` (Kibana saved objects over the evaluation records) and
``harness-metrics.ndjson`` (over the load samples and ANN sweep points, ``harness-metrics*``).

Run ``python docker/kibana/generate.py`` after changing the objects below; the NDJSON files are
what gets committed and imported (compose ``kibana-import`` service, ``harness kibana import``).

Migration versions: Kibana imports objects whose ``typeMigrationVersion`` is at or below the
version its own types know and migrates them up; one above is refused. The values below are
those Kibana 9.x writes for these types (data view 8.0.0, saved search 10.5.0, dashboard 10.2.0,
legacy visualization 8.5.0; ``coreMigrationVersion`` 8.8.0), so Kibana 9.5.4 imports them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA_VIEW_ID = "harness-eval"
CORE = "8.8.0"
TYPE_VERSIONS = {
    "index-pattern": "8.0.0",
    "search": "10.5.0",
    "dashboard": "10.2.0",
    "visualization": "8.5.0",
}
KUERY = {"query": "", "language": "kuery"}


def obj(type_: str, id_: str, attributes: dict[str, Any], references: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "type": type_,
        "id": id_,
        "attributes": attributes,
        "references": references,
        "managed": False,
        "coreMigrationVersion": CORE,
        "typeMigrationVersion": TYPE_VERSIONS[type_],
    }


def data_view(id_: str = DATA_VIEW_ID, name: str = "harness-eval (evaluation records)") -> dict[str, Any]:
    return obj(
        "index-pattern",
        id_,
        {
            "title": f"{id_}*",
            "name": name,
            "timeFieldName": "@timestamp",
            "fields": "[]",
            "fieldFormatMap": "{}",
            "runtimeFieldMap": "{}",
            "sourceFilters": "[]",
            "allowHidden": False,
        },
        [],
    )


def saved_search(
    id_: str, title: str, description: str, query: str, columns: list[str], sort: list[list[str]]
) -> dict[str, Any]:
    source = {
        "query": {"query": query, "language": "kuery"},
        "filter": [],
        "indexRefName": "kibanaSavedObjectMeta.searchSourceJSON.index",
    }
    return obj(
        "search",
        id_,
        {
            "title": title,
            "description": description,
            "columns": columns,
            "sort": sort,
            "grid": {},
            "hideChart": True,
            "isTextBasedQuery": False,
            "timeRestore": False,
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps(source)},
        },
        [
            {
                "id": DATA_VIEW_ID,
                "name": "kibanaSavedObjectMeta.searchSourceJSON.index",
                "type": "index-pattern",
            }
        ],
    )


def lens_xy(
    title: str,
    layer: str,
    columns: dict[str, Any],
    x: str,
    y: str | list[str],
    split: str | None,
    *,
    view: str = DATA_VIEW_ID,
    query: str = "",
) -> dict[str, Any]:
    layer_vis: dict[str, Any] = {
        "layerId": layer,
        "accessors": [y] if isinstance(y, str) else y,
        "position": "top",
        "seriesType": "bar",
        "showGridlines": False,
        "layerType": "data",
        "xAccessor": x,
    }
    if split:
        layer_vis["splitAccessor"] = split
    return {
        "title": title,
        "visualizationType": "lnsXY",
        "type": "lens",
        "references": [
            {"type": "index-pattern", "id": view, "name": f"indexpattern-datasource-layer-{layer}"}
        ],
        "state": {
            "visualization": {
                "legend": {"isVisible": True, "position": "right"},
                "valueLabels": "hide",
                "preferredSeriesType": "bar",
                "layers": [layer_vis],
            },
            "query": {"query": query, "language": "kuery"},
            "filters": [],
            "datasourceStates": {
                "formBased": {
                    "layers": {
                        layer: {"columns": columns, "columnOrder": list(columns), "incompleteColumns": {}}
                    }
                }
            },
            "internalReferences": [],
            "adHocDataViews": {},
        },
    }


def terms(field: str, size: int) -> dict[str, Any]:
    return {
        "label": field,
        "dataType": "string",
        "operationType": "terms",
        "scale": "ordinal",
        "sourceField": field,
        "isBucketed": True,
        "params": {
            "size": size,
            "orderBy": {"type": "alphabetical", "fallback": True},
            "orderDirection": "asc",
            "otherBucket": False,
            "missingBucket": False,
        },
    }


NDCG_BY_ARM = lens_xy(
    "nDCG@10 per dataset and arm (mean over queries)",
    "ndcg-layer",
    {
        "dataset": terms("dataset", 20),
        "arm": terms("arm", 12),
        "ndcg": {
            "label": "mean nDCG@10",
            "dataType": "number",
            "operationType": "average",
            "sourceField": "metrics.ndcg_at_10",
            "isBucketed": False,
            "scale": "ratio",
            "params": {"emptyAsNull": True},
        },
    },
    "dataset",
    "ndcg",
    "arm",
)

FIRST_RANK = lens_xy(
    "Rank of the first relevant document",
    "rank-layer",
    {
        "rank": {
            "label": "first relevant rank",
            "dataType": "number",
            "operationType": "range",
            "sourceField": "first_relevant_rank",
            "isBucketed": True,
            "scale": "interval",
            "params": {
                "type": "histogram",
                "ranges": [{"from": 0, "to": 1000, "label": ""}],
                "maxBars": "auto",
                "includeEmptyRows": True,
            },
        },
        "arm": terms("arm", 12),
        "count": {
            "label": "queries",
            "dataType": "number",
            "operationType": "count",
            "sourceField": "___records___",
            "isBucketed": False,
            "scale": "ratio",
            "params": {"emptyAsNull": True},
        },
    },
    "rank",
    "count",
    "arm",
)


def vega_hits(index: str, source: list[str], term: dict[str, str]) -> dict[str, Any]:
    """Vega data: the hits of ``index`` that match ``term``, under the dashboard's filters and time."""
    query = {
        "bool": {
            "must": ["%dashboard_context-must_clause%", {"term": term}],
            "filter": [
                "%dashboard_context-filter_clause%",
                {"range": {"@timestamp": {"%timefilter%": True}}},
            ],
            "must_not": ["%dashboard_context-must_not_clause%"],
        }
    }
    return {
        "url": {"index": index, "body": {"size": 10000, "_source": source, "query": query}},
        "format": {"property": "hits.hits"},
    }


def vega_visualization(id_: str, title: str, description: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A legacy Vega visualization saved object over ``spec``."""
    vis_state = {"title": title, "type": "vega", "aggs": [], "params": {"spec": json.dumps(spec, indent=2)}}
    attributes = {
        "title": title,
        "description": description,
        "visState": json.dumps(vis_state),
        "uiStateJSON": "{}",
        "version": 1,
        "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
    }
    return obj("visualization", id_, attributes, [])


SCATTER_SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": "Per-query nDCG@10: lexical (x) vs vector (y)",
    "data": vega_hits(
        "harness-eval*",
        ["dataset", "query.id", "arms_ndcg_at_10.lexical", "arms_ndcg_at_10.vector"],
        {"arm": "lexical"},
    ),
    "transform": [
        {"calculate": "datum._source.arms_ndcg_at_10.lexical", "as": "lexical"},
        {"calculate": "datum._source.arms_ndcg_at_10.vector", "as": "vector"},
        {"calculate": "datum._source.dataset", "as": "dataset"},
        {"calculate": "datum._source.query.id", "as": "query"},
    ],
    "mark": {"type": "point", "tooltip": True, "filled": True, "opacity": 0.6},
    "encoding": {
        "x": {
            "field": "lexical",
            "type": "quantitative",
            "scale": {"domain": [0, 1]},
            "title": "lexical nDCG@10",
        },
        "y": {
            "field": "vector",
            "type": "quantitative",
            "scale": {"domain": [0, 1]},
            "title": "vector nDCG@10",
        },
        "color": {"field": "dataset", "type": "nominal"},
        "tooltip": [{"field": "query"}, {"field": "dataset"}, {"field": "lexical"}, {"field": "vector"}],
    },
}


def scatter() -> dict[str, Any]:
    return vega_visualization(
        "harness-eval-lexical-vs-vector",
        "Per-query lexical vs vector nDCG@10",
        "One point per query (records of the lexical arm carry every arm's nDCG@10).",
        SCATTER_SPEC,
    )


def _grid(i: str, x: int, y: int) -> dict[str, Any]:
    """A half-width panel (24 x 15) at column x, row y."""
    return {"x": x, "y": y, "w": 24, "h": 15, "i": i}


def lens_panel(i: str, x: int, y: int, attributes: dict[str, Any]) -> dict[str, Any]:
    """A Lens panel whose visualization is stored inline in the dashboard."""
    return {
        "type": "lens",
        "panelIndex": i,
        "gridData": _grid(i, x, y),
        "embeddableConfig": {"attributes": attributes, "enhancements": {}},
    }


def ref_panel(type_: str, i: str, x: int, y: int) -> dict[str, Any]:
    """A panel showing a saved object, referenced as ``panel_<i>``."""
    return {
        "type": type_,
        "panelIndex": i,
        "gridData": _grid(i, x, y),
        "panelRefName": f"panel_{i}",
        "embeddableConfig": {"enhancements": {}},
    }


def layer_ref(view: str, panel: str, layer: str) -> dict[str, str]:
    """The data view a Lens panel's layer reads."""
    return {"type": "index-pattern", "id": view, "name": f"{panel}:indexpattern-datasource-layer-{layer}"}


def dashboard_object(
    id_: str,
    title: str,
    description: str,
    panels: list[dict[str, Any]],
    references: list[dict[str, str]],
) -> dict[str, Any]:
    attributes = {
        "title": title,
        "description": description,
        "panelsJSON": json.dumps(panels),
        "optionsJSON": json.dumps({"useMargins": True, "syncColors": True, "hidePanelTitles": False}),
        "timeRestore": True,
        "timeFrom": "now-1y",
        "timeTo": "now",
        "refreshInterval": {"pause": True, "value": 0},
        "version": 1,
        "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
    }
    return obj("dashboard", id_, attributes, references)


def dashboard() -> dict[str, Any]:
    panels = [
        lens_panel("ndcg", 0, 0, NDCG_BY_ARM),
        ref_panel("visualization", "scatter", 24, 0),
        lens_panel("first-rank", 0, 15, FIRST_RANK),
        ref_panel("search", "worst", 24, 15),
    ]
    references = [
        layer_ref(DATA_VIEW_ID, "ndcg", "ndcg-layer"),
        {"type": "visualization", "id": "harness-eval-lexical-vs-vector", "name": "scatter:panel_scatter"},
        layer_ref(DATA_VIEW_ID, "first-rank", "rank-layer"),
        {"type": "search", "id": "harness-eval-worst-queries", "name": "worst:panel_worst"},
    ]
    return dashboard_object(
        "harness-eval-overview",
        "R2MED harness: failure inspection",
        "Evaluation records (harness-eval*): filter on run_id to look at one run.",
        panels,
        references,
    )


def saved_objects() -> list[dict[str, Any]]:
    common = ["dataset", "arm", "query.id", "query.text", "metrics.ndcg_at_10", "first_relevant_rank"]
    return [
        data_view(),
        saved_search(
            "harness-eval-worst-queries",
            "worst queries",
            "Queries by nDCG@10, lowest first, with where the first relevant document was.",
            "",
            [*common, "relevant.missed", "run_id"],
            [["metrics.ndcg_at_10", "asc"], ["first_relevant_rank", "desc"]],
        ),
        saved_search(
            "harness-eval-missed-relevant",
            "missed relevant documents",
            "Records where relevant documents were never retrieved; missed.* lists them.",
            "relevant.missed > 0",
            [
                "dataset",
                "arm",
                "query.id",
                "relevant.missed",
                "relevant.total",
                "missed.id",
                "missed.title",
                "missed.retrieved_by",
            ],
            [["relevant.missed", "desc"]],
        ),
        saved_search(
            "harness-eval-hybrid-lost",
            "hybrid lost against lexical",
            "Queries where the hybrid arm scored below the lexical arm on nDCG@10.",
            'arm : "hybrid" and delta.baseline_arm : "lexical" and delta.ndcg_at_10 < 0',
            [*common, "delta.ndcg_at_10", "arms_ndcg_at_10.lexical", "arms_ndcg_at_10.hybrid"],
            [["delta.ndcg_at_10", "asc"]],
        ),
        scatter(),
        dashboard(),
    ]


# --------------------------------------------------------------------------- harness-metrics*

METRICS_VIEW = "harness-metrics"
LOAD_QUERY = 'kind : "load_sample" and sample_type : "normal" and success : true'


def percentile(field: str, p: float) -> dict[str, Any]:
    return {
        "label": f"p{p:g} {field}",
        "dataType": "number",
        "operationType": "percentile",
        "sourceField": field,
        "isBucketed": False,
        "scale": "ratio",
        "params": {"percentile": p},
    }


LOAD_PERCENTILES = lens_xy(
    "Load phase: service time and latency p50 / p99 per arm (ms)",
    "load-layer",
    {
        "arm": terms("arm", 12),
        "svc50": percentile("service_time_ms", 50),
        "svc99": percentile("service_time_ms", 99),
        "lat50": percentile("latency_ms", 50),
        "lat99": percentile("latency_ms", 99),
    },
    "arm",
    ["svc50", "svc99", "lat50", "lat99"],
    None,
    view=METRICS_VIEW,
    query=LOAD_QUERY,
)

FRONTIER_SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": "ANN sweep: recall@k against service time p50",
    "data": vega_hits(
        "harness-metrics*",
        [
            "dataset",
            "index_type",
            "candidates",
            "recall_at_k",
            "service_p50_ms",
            "ndcg_at_10",
            "size_bytes",
            "frontier",
        ],
        {"kind": "ann_point"},
    ),
    "transform": [
        {"calculate": "datum._source.index_type", "as": "index type"},
        {"calculate": "datum._source.candidates", "as": "candidates"},
        {"calculate": "datum._source.recall_at_k", "as": "recall"},
        {"calculate": "datum._source.service_p50_ms", "as": "p50 ms"},
        {"calculate": "datum._source.ndcg_at_10", "as": "nDCG@10"},
        {"calculate": "datum._source.frontier", "as": "frontier"},
    ],
    "mark": {"type": "line", "point": True, "tooltip": True},
    "encoding": {
        "x": {
            "field": "p50 ms",
            "type": "quantitative",
            "scale": {"type": "log"},
            "title": "service time p50 (ms)",
        },
        "y": {"field": "recall", "type": "quantitative", "title": "recall@k"},
        "color": {"field": "index type", "type": "nominal"},
        "order": {"field": "candidates", "type": "quantitative"},
        "tooltip": [
            {"field": "index type"},
            {"field": "candidates"},
            {"field": "recall"},
            {"field": "nDCG@10"},
            {"field": "p50 ms"},
            {"field": "frontier"},
        ],
    },
}


def frontier() -> dict[str, Any]:
    return vega_visualization(
        "harness-metrics-ann-frontier",
        "ANN sweep: recall-latency frontier",
        "One line per vector index type through its candidate counts (harness run --ann-sweep).",
        FRONTIER_SPEC,
    )


def metrics_dashboard() -> dict[str, Any]:
    panels = [lens_panel("load", 0, 0, LOAD_PERCENTILES), ref_panel("visualization", "frontier", 24, 0)]
    references = [
        layer_ref(METRICS_VIEW, "load", "load-layer"),
        {"type": "visualization", "id": "harness-metrics-ann-frontier", "name": "frontier:panel_frontier"},
    ]
    return dashboard_object(
        "harness-metrics-overview",
        "R2MED harness: load and ANN",
        "Load samples and ANN sweep points (harness-metrics*): filter on run_id for one run.",
        panels,
        references,
    )


def metrics_objects() -> list[dict[str, Any]]:
    return [
        data_view(METRICS_VIEW, "harness-metrics (load samples and ANN sweep points)"),
        frontier(),
        metrics_dashboard(),
    ]


#: file -> its objects
FILES = {"harness-eval.ndjson": saved_objects, "harness-metrics.ndjson": metrics_objects}

if __name__ == "__main__":
    for name, objects in FILES.items():
        out = Path(__file__).with_name(name)
        out.write_text("".join(json.dumps(o, sort_keys=True) + "\n" for o in objects()), encoding="utf-8")
        print(f"wrote {out}")
