"""Query templates: JSON escaping as the engines' search templates do it, and every bad template refused
before a search is sent (mustache itself renders a missing name as empty text)."""

from __future__ import annotations

import json

import pytest

from base import ConfigError
from harness.templates import HARNESS_VARIABLES, QueryTemplate, builtin_names, builtin_path

KNOWN = set(HARNESS_VARIABLES)


def test_query_is_json_escaped_inside_the_quotes_the_template_writes() -> None:
    t = QueryTemplate.parse('{"query": {"match": {"text": "{{query}}"}}, "size": {{size}}}', "t", KNOWN)
    nasty = 'a "quoted" \\ back\nslash</script> & <b> é'
    body = t.render({"query": nasty, "size": 7})
    assert body == {"query": {"match": {"text": nasty}}, "size": 7}  # HTML is not escaped either


def test_numbers_lists_and_tables_render_as_json_and_false_sections_are_skipped() -> None:
    text = (
        '{"knn": {"query_vector": {{query_vector}}, "k": {{k}}}, "fields": {{fields}}, '
        '"boost": {{boost}}{{#explain}}, "explain": true{{/explain}}{{^explain}}, "version": true{{/explain}}}'
    )
    t = QueryTemplate.parse(text, "t", KNOWN | {"fields", "boost", "explain"})
    body = t.render(
        {"query_vector": [0.25, -1.5], "k": 3, "fields": ["title^2", "text"], "boost": 1.5, "explain": False}
    )
    assert body == {
        "knn": {"query_vector": [0.25, -1.5], "k": 3},
        "fields": ["title^2", "text"],
        "boost": 1.5,
        "version": True,
    }
    assert t.needs_vector


def test_an_unknown_variable_is_refused_when_parsed_naming_it_and_what_is_known() -> None:
    with pytest.raises(ConfigError) as err:
        QueryTemplate.parse(
            '{"query": {"match": {"text": "{{qeury}}"}}}', "exp.toml: arms[0].template", KNOWN
        )
    assert "exp.toml: arms[0].template: unknown template variable(s) qeury" in str(err.value)
    assert "query, query_id" in str(err.value)


def test_an_unknown_name_inside_a_section_is_refused_when_rendered() -> None:
    t = QueryTemplate.parse('{"a": 1{{#boost}}, "b": {{missing}}{{/boost}}}', "f.mustache", KNOWN | {"boost"})
    with pytest.raises(ConfigError, match=r"f\.mustache: unknown template variable.*missing"):
        t.render({"boost": 2})


def test_partials_and_syntax_errors_are_refused() -> None:
    with pytest.raises(ConfigError, match="no partials"):
        QueryTemplate.parse('{"q": {{> other}}}', "t", KNOWN)
    with pytest.raises(ConfigError, match="does not parse"):
        QueryTemplate.parse('{"q": {{#query}}x}', "t", KNOWN)


def test_a_rendered_body_that_is_not_json_says_where_it_broke() -> None:
    t = QueryTemplate.parse('{"query": {"match": {"text": {{query}}}}}', "bad.mustache", KNOWN)
    with pytest.raises(ConfigError) as err:
        t.render({"query": "fever in children"})
    assert "bad.mustache: the rendered template is not valid JSON" in str(err.value)
    assert "fever in children" in str(err.value)
    with pytest.raises(ConfigError, match="expected the rendered template to be a JSON object"):
        QueryTemplate.parse("[{{size}}]", "t", KNOWN).render({"size": 1})


def test_the_builtin_templates_parse_and_render_valid_bodies_for_each_engine() -> None:
    assert builtin_names() == ["lexical", "lexical_beir", "lexical_multi_match", "vector"]
    values = {"query": "x", "size": 10, "k": 10, "num_candidates": 100}
    values |= {"combined_field": "title_text.r2med", "fields": ["title.r2med", "text.r2med"]}
    vector = {**values, "query_vector": [0.5], "vector_field": "v"}
    for engine in ("elasticsearch", "opensearch"):
        for name in ("lexical", "lexical_beir", "lexical_multi_match"):
            lexical = builtin_path(name, engine)
            body = QueryTemplate.parse(
                lexical.read_text(), str(lexical), KNOWN | {"combined_field", "fields"}
            ).render(values)
            assert ".r2med" in json.dumps(body)
        knn = builtin_path("vector", engine)
        body = QueryTemplate.parse(knn.read_text(), str(knn), KNOWN).render(vector)
        assert json.dumps(body).count("0.5") == 1
    with pytest.raises(
        ConfigError, match="expected a built-in template among builtin:lexical, builtin:lexical_beir"
    ):
        builtin_path("nope", "elasticsearch")
