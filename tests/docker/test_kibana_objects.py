"""Kibana saved objects (docker/kibana/*.ndjson): they parse, their references resolve, their fields exist."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.sinks import index_template, metrics_template

KIBANA_DIR = Path(__file__).resolve().parents[2] / "docker" / "kibana"
# Known type migration versions of Kibana 9.x for the types we ship (see docker/kibana/generate.py).
TYPE_VERSIONS = {
    "index-pattern": "8.0.0",
    "search": "10.5.0",
    "dashboard": "10.2.0",
    "visualization": "8.5.0",
}


def _objects() -> list[dict[str, Any]]:
    objects = []
    for path in sorted(KIBANA_DIR.glob("*.ndjson")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            assert line.strip(), f"{path.name}:{lineno}: empty line"
            objects.append(json.loads(line))
    return objects


def _mapped_fields(props: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for name, spec in props.items():
        path = f"{prefix}{name}"
        if "type" in spec and spec["type"] not in ("object", "nested"):
            yield path
        for sub in spec.get("fields", {}):
            yield f"{path}.{sub}"
        yield from _mapped_fields(spec.get("properties", {}), f"{path}.")


FIELDS = set(_mapped_fields(index_template()["template"]["mappings"]["properties"]))
METRIC_FIELDS = set(_mapped_fields(metrics_template()["template"]["mappings"]["properties"]))
#: each data view's fields: the template of the indices it covers
VIEW_FIELDS = {"harness-eval": FIELDS, "harness-metrics": METRIC_FIELDS}
OBJECTS = _objects()
BY_KEY = {(o["type"], o["id"]): o for o in OBJECTS}


def test_objects_parse_and_carry_kibana_9_migration_versions() -> None:
    assert OBJECTS, f"no saved objects in {KIBANA_DIR}"
    assert len(BY_KEY) == len(OBJECTS), "duplicate (type, id)"
    for o in OBJECTS:
        assert o["coreMigrationVersion"] == "8.8.0"
        assert o["typeMigrationVersion"] == TYPE_VERSIONS[o["type"]]
        assert isinstance(o["attributes"].get("title"), str)
    titles = {o["attributes"]["title"] for o in OBJECTS if o["type"] == "search"}
    assert titles == {"worst queries", "missed relevant documents", "hybrid lost against lexical"}
    views = {o["id"]: o for o in OBJECTS if o["type"] == "index-pattern"}
    assert set(views) == set(VIEW_FIELDS)
    for name, view in views.items():
        assert view["attributes"]["title"] == f"{name}*"
        assert view["attributes"]["timeFieldName"] in VIEW_FIELDS[name]
    dashboards = {o["attributes"]["title"] for o in OBJECTS if o["type"] == "dashboard"}
    assert dashboards == {"R2MED harness: failure inspection", "R2MED harness: load and ANN"}


def test_every_reference_resolves_within_the_files() -> None:
    for o in OBJECTS:
        names = {r["name"] for r in o["references"]}
        for ref in o["references"]:
            assert (ref["type"], ref["id"]) in BY_KEY, f"{o['id']}: unresolved reference {ref}"
        source = json.loads(o["attributes"].get("kibanaSavedObjectMeta", {}).get("searchSourceJSON", "{}"))
        if "indexRefName" in source:
            assert source["indexRefName"] in names
        if o["type"] == "dashboard":
            panels = json.loads(o["attributes"]["panelsJSON"])
            assert {p["type"] for p in panels} <= {"lens", "visualization", "search"}
            for p in panels:
                assert p["gridData"]["i"] == p["panelIndex"]
                if "panelRefName" in p:
                    assert f"{p['panelIndex']}:{p['panelRefName']}" in names
                for inner in p["embeddableConfig"].get("attributes", {}).get("references", []):
                    assert (inner["type"], inner["id"]) in BY_KEY
                    assert f"{p['panelIndex']}:{inner['name']}" in names
                    layer = inner["name"].removeprefix("indexpattern-datasource-layer-")
                    layers = p["embeddableConfig"]["attributes"]["state"]["datasourceStates"]["formBased"][
                        "layers"
                    ]
                    assert layer in layers


def _used_fields(o: dict[str, Any]) -> Iterator[str]:
    attrs = o["attributes"]
    if o["type"] == "search":
        yield from attrs["columns"]
        yield from (field for field, _ in attrs["sort"])
        query = json.loads(attrs["kibanaSavedObjectMeta"]["searchSourceJSON"])["query"]["query"]
        yield from re.findall(r"([\w.@]+)\s*(?::|<=|>=|<|>)", query)
    if o["type"] == "dashboard":
        for p in json.loads(attrs["panelsJSON"]):
            state = p["embeddableConfig"].get("attributes", {}).get("state", {})
            yield from re.findall(r"([\w.@]+)\s*(?::|<=|>=|<|>)", state.get("query", {}).get("query", ""))
            for layer in state.get("datasourceStates", {}).get("formBased", {}).get("layers", {}).values():
                for column in layer["columns"].values():
                    if column["sourceField"] != "___records___":
                        yield column["sourceField"]
    if o["type"] == "visualization":
        spec = json.loads(json.loads(attrs["visState"])["params"]["spec"])
        body = spec["data"]["url"]["body"]
        yield from body["_source"]
        text = json.dumps(body["query"])
        yield from re.findall(r'"(?:term|range)": \{"([\w.@]+)"', text)
        for calc in spec.get("transform", []):
            yield from re.findall(r"datum\._source\.([\w.@]+)", calc.get("calculate", ""))


def _view(o: dict[str, Any]) -> str:
    """The data view (template) an object reads: its references, or a Vega spec's index."""
    if o["type"] == "index-pattern":
        return str(o["id"])
    if o["type"] == "visualization":
        spec = json.loads(json.loads(o["attributes"]["visState"])["params"]["spec"])
        return str(spec["data"]["url"]["index"]).rstrip("*")
    refs = [r["id"] for r in o["references"] if r["type"] == "index-pattern"]
    inner = [
        r["id"]
        for p in json.loads(o["attributes"].get("panelsJSON", "[]"))
        for r in p["embeddableConfig"].get("attributes", {}).get("references", [])
    ]
    found = set(refs + inner) or {
        _view(BY_KEY[(r["type"], r["id"])]) for r in o["references"] if (r["type"], r["id"]) in BY_KEY
    }
    assert len(found) == 1, f"{o['id']}: expected one data view, found {sorted(found)}"
    return found.pop()


@pytest.mark.parametrize("key", sorted(BY_KEY), ids=lambda k: f"{k[0]}:{k[1]}")
def test_every_field_used_exists_in_the_template(key: tuple[str, str]) -> None:
    view = _view(BY_KEY[key])
    fields = VIEW_FIELDS[view]
    used = set(_used_fields(BY_KEY[key]))
    assert used <= fields, f"fields not in the {view} template: {sorted(used - fields)}"
    if key[0] in ("search", "visualization"):
        assert used, "the check found no field to verify"


def test_ndjson_is_what_generate_py_writes() -> None:
    spec = importlib.util.spec_from_file_location("kibana_generate", KIBANA_DIR / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, objects in module.FILES.items():
        expected = "".join(json.dumps(o, sort_keys=True) + "\n" for o in objects())
        assert (KIBANA_DIR / name).read_text(encoding="utf-8") == expected, name
