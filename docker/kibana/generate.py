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

SCATTER_SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "title": "Per-query nDCG@10: lexical (x) vs vector (y)",
    "data": {
        "url": {
            "index": "harness-eval*",
            "body": {
                "size": 10000,
                "_source": ["dataset", "query.id", "arms_ndcg_at_10.lexical", "arms_ndcg_at_10.vector"],
                "query": {
                    "bool": {
                        "must": ["%dashboard_context-must_clause%", {"term": {"arm": "lexical"}}],
                        "filter": [
                            "%dashboard_context-filter_clause%",
                            {"range": {"@timestamp": {"%timefilter%": True}}},
                        ],
                        "must_not": ["%dashboard_context-must_not_clause%"],
                    }
                },
            },
        },
        "format": {"property": "hits.hits"},
    },
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
    vis_state = {
        "title": "Per-query lexical vs vector nDCG@10",
        "type": "vega",
        "aggs": [],
        "params": {"spec": json.dumps(SCATTER_SPEC, indent=2)},
    }
    return obj(
        "visualization",
        "harness-eval-lexical-vs-vector",
        {
            "title": "Per-query lexical vs vector nDCG@10",
            "description": "One point per query (records of the lexical arm carry every arm's nDCG@10).",
            "visState": json.dumps(vis_state),
            "uiStateJSON": "{}",
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
        },
        [],
    )


def dashboard() -> dict[str, Any]:
    def grid(i: str, x: int, y: int, w: int, h: int) -> dict[str, Any]:
        return {"x": x, "y": y, "w": w, "h": h, "i": i}

    panels = [
        {
            "type": "lens",
            "panelIndex": "ndcg",
            "gridData": grid("ndcg", 0, 0, 24, 15),
            "embeddableConfig": {"attributes": NDCG_BY_ARM, "enhancements": {}},
        },
        {
            "type": "visualization",
            "panelIndex": "scatter",
            "gridData": grid("scatter", 24, 0, 24, 15),
            "panelRefName": "panel_scatter",
            "embeddableConfig": {"enhancements": {}},
        },
        {
            "type": "lens",
            "panelIndex": "first-rank",
            "gridData": grid("first-rank", 0, 15, 24, 15),
            "embeddableConfig": {"attributes": FIRST_RANK, "enhancements": {}},
        },
        {
            "type": "search",
            "panelIndex": "worst",
            "gridData": grid("worst", 24, 15, 24, 15),
            "panelRefName": "panel_worst",
            "embeddableConfig": {"enhancements": {}},
        },
    ]
    references = [
        {
            "type": "index-pattern",
            "id": DATA_VIEW_ID,
            "name": "ndcg:indexpattern-datasource-layer-ndcg-layer",
        },
        {"type": "visualization", "id": "harness-eval-lexical-vs-vector", "name": "scatter:panel_scatter"},
        {
            "type": "index-pattern",
            "id": DATA_VIEW_ID,
            "name": "first-rank:indexpattern-datasource-layer-rank-layer",
        },
        {"type": "search", "id": "harness-eval-worst-queries", "name": "worst:panel_worst"},
    ]
    return obj(
        "dashboard",
        "harness-eval-overview",
        {
            "title": "R2MED harness: failure inspection",
            "description": "Evaluation records (harness-eval*): filter on run_id to look at one run.",
            "panelsJSON": json.dumps(panels),
            "optionsJSON": json.dumps({"useMargins": True, "syncColors": True, "hidePanelTitles": False}),
            "timeRestore": True,
            "timeFrom": "now-1y",
            "timeTo": "now",
            "refreshInterval": {"pause": True, "value": 0},
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
        },
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
    "data": {
        "url": {
            "index": "harness-metrics*",
            "body": {
                "size": 10000,
                "_source": [
                    "dataset",
                    "index_type",
                    "candidates",
                    "recall_at_k",
                    "service_p50_ms",
                    "ndcg_at_10",
                    "size_bytes",
                    "frontier",
                ],
                "query": {
                    "bool": {
                        "must": ["%dashboard_context-must_clause%", {"term": {"kind": "ann_point"}}],
                        "filter": [
                            "%dashboard_context-filter_clause%",
                            {"range": {"@timestamp": {"%timefilter%": True}}},
                        ],
                        "must_not": ["%dashboard_context-must_not_clause%"],
                    }
                },
            },
        },
        "format": {"property": "hits.hits"},
    },
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
    vis_state = {
        "title": "ANN sweep: recall-latency frontier",
        "type": "vega",
        "aggs": [],
        "params": {"spec": json.dumps(FRONTIER_SPEC, indent=2)},
    }
    return obj(
        "visualization",
        "harness-metrics-ann-frontier",
        {
            "title": "ANN sweep: recall-latency frontier",
            "description": "One line per vector index type through its candidate counts (harness run --ann-sweep).",
            "visState": json.dumps(vis_state),
            "uiStateJSON": "{}",
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
        },
        [],
    )


def metrics_dashboard() -> dict[str, Any]:
    panels = [
        {
            "type": "lens",
            "panelIndex": "load",
            "gridData": {"x": 0, "y": 0, "w": 24, "h": 15, "i": "load"},
            "embeddableConfig": {"attributes": LOAD_PERCENTILES, "enhancements": {}},
        },
        {
            "type": "visualization",
            "panelIndex": "frontier",
            "gridData": {"x": 24, "y": 0, "w": 24, "h": 15, "i": "frontier"},
            "panelRefName": "panel_frontier",
            "embeddableConfig": {"enhancements": {}},
        },
    ]
    references = [
        {
            "type": "index-pattern",
            "id": METRICS_VIEW,
            "name": "load:indexpattern-datasource-layer-load-layer",
        },
        {"type": "visualization", "id": "harness-metrics-ann-frontier", "name": "frontier:panel_frontier"},
    ]
    return obj(
        "dashboard",
        "harness-metrics-overview",
        {
            "title": "R2MED harness: load and ANN",
            "description": "Load samples and ANN sweep points (harness-metrics*): filter on run_id for one run.",
            "panelsJSON": json.dumps(panels),
            "optionsJSON": json.dumps({"useMargins": True, "syncColors": True, "hidePanelTitles": False}),
            "timeRestore": True,
            "timeFrom": "now-1y",
            "timeTo": "now",
            "refreshInterval": {"pause": True, "value": 0},
            "version": 1,
            "kibanaSavedObjectMeta": {"searchSourceJSON": json.dumps({"query": KUERY, "filter": []})},
        },
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
