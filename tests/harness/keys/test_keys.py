"""One way to declare, give and check a key: a refusal reads the value as the user wrote it, what was expected
and what was found, whoever gave it; a secret is never part of what is shown."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from base import ConfigError
from harness._errors import SettingError
from harness.keys import (
    PERFORMANCE,
    RESULTS,
    Given,
    Origins,
    between,
    build_table,
    declared,
    key,
    set_given,
    shown,
    table_of,
)


@dataclass(frozen=True, slots=True)
class Demo:
    """A table of keys for these tests."""

    depth: int = key(10, affects=RESULTS, check=between(1, 100), doc="results per query")
    names: tuple[str, ...] = key(
        ("a",), affects=RESULTS, commas=True, choices=lambda: ("a", "b"), doc="names"
    )
    day: date | None = key(affects=RESULTS, doc="a day")
    path: Path | None = key(affects=PERFORMANCE, doc="a file")
    token: str | None = key(affects=PERFORMANCE, secret=True, doc="a secret")

    def check(self) -> None:
        if self.depth > 50 and "b" in self.names:
            raise SettingError("depth", "expected at most 50 with {demo.names} b")


def test_values_are_typed_from_their_declaration(tmp_path: Path) -> None:
    demo = table_of(Demo, {"depth": 5, "names": "a,b", "day": "2025-03-01", "path": "f.txt"}, base=tmp_path)
    assert demo == Demo(5, ("a", "b"), date(2025, 3, 1), tmp_path / "f.txt")
    assert list(declared(Demo)) == ["depth", "names", "day", "path", "token"]
    assert "token" not in repr(Demo(token="s3cret")) and "s3cret" not in repr(Demo(token="s3cret"))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (Given(0, "--depth 0"), "--depth 0: expected 1..100, found 0"),
        (Given("x", "--set demo.depth=x", raw="x"), "--set demo.depth=x: expected an integer, found str 'x'"),
        (Given(True, "demo.toml: demo.depth"), "demo.toml: demo.depth: expected an integer, found bool True"),
    ],
)
def test_a_refusal_names_the_value_as_written(given: Given, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_table(Demo, "demo", {"depth": given}, Origins())
    assert str(caught.value) == message


def test_a_tables_own_check_spells_other_keys_as_the_refused_one_was_given() -> None:
    values = {"depth": Given(60, "--depth 60"), "names": Given("b", "--names b")}
    with pytest.raises(ConfigError, match=r"^--depth 60: expected at most 50 with --names b$"):
        build_table(Demo, "demo", values, Origins(flags={"demo.names": "--names"}))
    values = {
        "depth": Given(60, "exp.toml: demo.depth", "file"),
        "names": Given("b", "exp.toml: demo.names", "file"),
    }
    with pytest.raises(ConfigError, match=r"^exp.toml: demo.depth: expected at most 50 with demo.names b$"):
        build_table(Demo, "demo", values, Origins("exp.toml"))


def test_secrets_and_url_credentials_are_never_shown() -> None:
    name, given = set_given("token=s3cret", secret=True)
    assert name == "token" and given.value == "s3cret" and "s3cret" not in given.origin
    assert shown("--url https://elastic:pw@host:9200") == "--url https://<secret>@host:9200"
    with pytest.raises(ConfigError) as caught:
        table_of(Demo, {"token": ""})
    assert "token: expected a non-empty string" in str(caught.value)


def test_an_unknown_key_is_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"^demo.deep: unknown key: expected one of depth, names, day"):
        table_of(Demo, {"deep": 3}, "demo")
