"""The marker guard: a test without the ``engine`` mark never reaches an engine, one without ``docker``
never reaches Docker, one without ``model`` never loads an embedding model.

The marks come from the fixtures a test takes (tests/conftest.py), so a test that reaches an engine
some other way would run in the fast loop (``-m "not engine and not docker and not model"``) and fail or
hang there on a machine without engines. While an unmarked test sets up and runs, the guard refuses (and records):

* a TCP connection to a loopback or unspecified address on a port in 9200-9399 (the engines' HTTP and
  transport ports: 9200/9201/9211 by default, the ``R2MED_TEST_*PORT`` ones, a Docker stack's 9200),
  or to the host and port of ``ES_URL``/``OS_URL``;
* a connection to the Docker daemon's socket (``/var/run/docker.sock``, ``/run/docker.sock``, or the
  ``unix://`` path in ``DOCKER_HOST``);
* starting an engine process (``bin/elasticsearch``, ``bin/opensearch``) or the ``docker`` CLI;
* loading an embedding model through any registered backend (``indexer.embed.BACKENDS``: torch, ONNX
  Runtime, OpenVINO), which is what makes a test slow (seconds to a minute each; tests/_encoder.py is the
  stand-in for the tests of the machinery around the model).

Its limit: what a child process does (``python -m harness`` started by a test) is not seen; the engines'
nodes started that way still need one of the engine fixtures, which is how every such test gets them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import socket
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: the ports the engines listen on here (HTTP 92xx, transport 93xx)
ENGINE_PORTS = range(9200, 9400)
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", ""})
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")
ENGINE_PROGRAMS = frozenset({"elasticsearch", "opensearch"})


def _url_targets() -> set[tuple[str, int]]:
    """The host and port of the external clusters the session is told to use (``ES_URL``, ``OS_URL``)."""
    targets = set()
    for var in ("ES_URL", "OS_URL"):
        parts = urlsplit(os.environ.get(var, ""))
        if parts.hostname:
            targets.add((parts.hostname, parts.port or (443 if parts.scheme == "https" else 9200)))
    return targets


def _docker_sockets() -> set[str]:
    host = os.environ.get("DOCKER_HOST", "")
    return set(DOCKER_SOCKETS) | ({host.removeprefix("unix://")} if host.startswith("unix://") else set())


def classify_address(family: int, address: Any) -> str | None:
    """``"engine"``, ``"docker"`` or None: what a connection to ``address`` would reach."""
    if family == socket.AF_UNIX:
        path = address.decode() if isinstance(address, bytes) else str(address)
        return "docker" if path in _docker_sockets() else None
    if family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
        return None
    host, port = str(address[0]), int(address[1])
    if (host in LOOPBACK and port in ENGINE_PORTS) or (host, port) in _url_targets():
        return "engine"
    return None


def classify_command(args: Any) -> str | None:
    """``"engine"``, ``"docker"`` or None: what starting the program ``args`` would reach."""
    argv: Sequence[Any] = shlex.split(args) if isinstance(args, str) else list(args)
    if not argv:
        return None
    name = Path(os.fsdecode(argv[0])).name
    if name in ENGINE_PROGRAMS:
        return "engine"
    return "docker" if name == "docker" else None


class Guard:
    """Refuses what the test's marks do not allow while it is installed; ``reached`` lists what it refused."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed
        self.reached: list[str] = []

    def refuse(self, kind: str | None, what: str) -> None:
        if kind is None or kind in self.allowed:
            return
        self.reached.append(f"{what} ({kind})")
        raise ConnectionRefusedError(
            errno.ECONNREFUSED, f"the marker guard refused {what}: this test has no `{kind}` mark"
        )

    @contextlib.contextmanager
    def installed(self) -> Iterator[Guard]:
        guard = self
        from indexer.embed import BACKENDS, backend_names

        backend_names()  # registers every backend (the modules import their runtimes only when they load)

        real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
        real_init = subprocess.Popen.__init__

        def connect(sock: socket.socket, address: Any) -> None:
            guard.refuse(classify_address(sock.family, address), f"a connection to {address!r}")
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard.refuse(classify_address(sock.family, address), f"a connection to {address!r}")
            return real_connect_ex(sock, address)

        def popen_init(proc: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
            proc._child_created = False  # what Popen.__del__ reads, should we refuse
            guard.refuse(classify_command(args), f"starting {args!r}")
            real_init(proc, args, *rest, **kwargs)

        with contextlib.ExitStack() as stack:
            stack.enter_context(_patched(socket.socket, connect=connect, connect_ex=connect_ex))
            stack.enter_context(_patched(subprocess.Popen, __init__=popen_init))
            for cls in {type(backend) for backend in BACKENDS.values()}:
                stack.enter_context(_patched(cls, load=_refusing_load(guard, cls.load)))
            yield self


def _refusing_load(guard: Guard, real: Any) -> Any:
    def load(backend: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
        guard.refuse("model", f"loading the model {spec.model_id!r} on {backend.name}")
        return real(backend, spec, *args, **kwargs)

    return load


@contextlib.contextmanager
def _patched(cls: type, **methods: Any) -> Iterator[None]:
    """``methods`` set on ``cls`` for the block; afterwards the class is as it was (an inherited method
    is inherited again)."""
    own = {name: cls.__dict__[name] for name in methods if name in cls.__dict__}
    for name, method in methods.items():
        setattr(cls, name, method)
    try:
        yield
    finally:
        for name in methods:
            if name in own:
                setattr(cls, name, own[name])
            else:
                delattr(cls, name)


def unmarked_message(nodeid: str, reached: list[str]) -> str:
    return (
        f"{nodeid} reached {'; '.join(dict.fromkeys(reached))} without the mark: take the fixture that gives it "
        "(es_settings, os_settings, engine_settings, backend, es_backend, os_backend, es_url, engine_url, "
        "es_inspect or managed_nodes for an engine; docker_client or es_image for Docker; minilm for an "
        "embedding model, or the stand-in encoder of tests/_encoder.py instead), which marks the test "
        "(tests/conftest.py)"
    )
