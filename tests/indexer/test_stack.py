"""Stack connection files (compose's stack.env, the Docker node's connection.env) in the settings chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from base import ConfigError
from indexer import ConnectionSettings
from indexer._stack import compose_stack_env, read_stack_env, stack_env_files


def _stack_file(folder: Path, url: str = "http://127.0.0.1:9333", password: str = "from-the-stack") -> Path:
    path = folder / "docker" / "credentials" / "stack.env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# comment\nES_URL={url}\nES_USERNAME=elastic\nES_PASSWORD={password}\n")
    (folder / "docker-compose.yml").write_text("services: {}\n")
    return path


def test_nothing_given_the_stack_gives_url_and_credentials(tmp_path: Path) -> None:
    path = _stack_file(tmp_path)
    s = ConnectionSettings.resolve({}, env={}, stack_files=[path])
    assert (s.url, s.username, s.credentials_from) == ("http://127.0.0.1:9333", "elastic", path)
    assert s.password is not None and s.password.reveal() == "from-the-stack"
    assert s.redacted()["credentials_from"] == str(path)
    assert "from-the-stack" not in repr(s) + str(s.redacted())


def test_explicit_settings_win_over_the_stack(tmp_path: Path) -> None:
    path = _stack_file(tmp_path)
    # another URL: the stack's credentials are not sent there
    s = ConnectionSettings.resolve({"url": "http://127.0.0.1:9200"}, env={}, stack_files=[path])
    assert (s.url, s.username, s.password, s.credentials_from) == ("http://127.0.0.1:9200", None, None, None)
    # the stack's own URL given explicitly: its credentials apply
    s = ConnectionSettings.resolve({}, env={"ES_URL": "http://127.0.0.1:9333/"}, stack_files=[path])
    assert s.username == "elastic" and s.credentials_from == path
    # credentials given, no URL: the URL comes from the stack, the credentials do not
    env = {"ES_USERNAME": "me", "ES_PASSWORD": "mine"}
    s = ConnectionSettings.resolve({}, env=env, stack_files=[path])
    assert (s.url, s.username, s.credentials_from) == ("http://127.0.0.1:9333", "me", None)
    assert s.password is not None and s.password.reveal() == "mine"
    s = ConnectionSettings.resolve({"api_key": "a2V5"}, env={}, stack_files=[path])
    assert (s.username, s.password, s.api_key is not None) == (None, None, True)
    # the TOML config's URL counts as given
    cfg = tmp_path / "h.toml"
    cfg.write_text('[connection]\nurl = "http://cfg:9200"\n')
    s = ConnectionSettings.resolve({}, env={}, config_file=cfg, stack_files=[path])
    assert (s.url, s.username) == ("http://cfg:9200", None)


def test_the_first_file_naming_the_url_wins(tmp_path: Path) -> None:
    a = _stack_file(tmp_path / "a", url="http://127.0.0.1:9301", password="pw-a")
    b = _stack_file(tmp_path / "b", url="http://127.0.0.1:9302", password="pw-b")
    s = ConnectionSettings.resolve({"url": "http://127.0.0.1:9302"}, env={}, stack_files=[a, b])
    assert s.password is not None and (s.password.reveal(), s.credentials_from) == ("pw-b", b)
    s = ConnectionSettings.resolve({}, env={}, stack_files=[a, b])
    assert s.url == "http://127.0.0.1:9301" and s.credentials_from == a


def test_compose_file_found_from_a_subfolder(tmp_path: Path) -> None:
    path = _stack_file(tmp_path)
    deep = tmp_path / "runs" / "x"
    deep.mkdir(parents=True)
    assert compose_stack_env(deep) == path
    state = tmp_path / "state"
    node_file = state / "nodes" / "n1" / "connection.env"
    node_file.parent.mkdir(parents=True)
    node_file.write_text("ES_URL=http://127.0.0.1:9400\nES_USERNAME=elastic\nES_PASSWORD=pw\n")
    env = {"R2MED_HARNESS_STATE": str(state)}
    assert stack_env_files(env, cwd=deep) == [path, node_file]
    # the nearest compose project without a stack.env ends the search (no stack.env from further up)
    (deep / "docker-compose.yml").write_text("services: {}\n")
    assert stack_env_files(env, cwd=deep) == [node_file]


def test_override_variable(tmp_path: Path) -> None:
    path = _stack_file(tmp_path)
    assert stack_env_files({"R2MED_STACK_ENV": "none"}, cwd=tmp_path) == []
    assert stack_env_files({"R2MED_STACK_ENV": str(path)}, cwd=Path("/")) == [path]
    with pytest.raises(ConfigError, match=r"R2MED_STACK_ENV=/no/such: expected a connection file"):
        stack_env_files({"R2MED_STACK_ENV": "/no/such"})


def test_bad_files_are_clear(tmp_path: Path) -> None:
    path = tmp_path / "stack.env"
    path.write_text("ES_URL=http://127.0.0.1:9333\nES_USERNAME=elastic\n")
    with pytest.raises(
        ConfigError, match=rf"{path}: expected ES_URL, ES_USERNAME and ES_PASSWORD, found no ES_PASSWORD"
    ):
        read_stack_env(path)
    with pytest.raises(ConfigError, match=r"expected ES_URL"):
        ConnectionSettings.resolve({}, env={}, stack_files=[path])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_says_whose_it_is(tmp_path: Path) -> None:
    path = _stack_file(tmp_path)
    path.chmod(0)
    with pytest.raises(ConfigError, match=r"cannot read .*stack.env \(permission denied\)"):
        read_stack_env(path)
