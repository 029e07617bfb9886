"""Fixtures for the reliability tests: a real secured node (TLS, x-pack security), one per session.

``secured_node`` starts ONE node, on first use, on free ports with a CA made in the test, HTTPS with
verification on, and a random password for ``elastic``; it yields a :class:`SecuredNode` and stops the
node when the session ends. test_security.py and test_secrets_in_outputs.py share it (a start is ~25 s
on two cores): neither changes what the other checks, and the scan of the node's logs for the password
then covers the requests of both.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from base import Secret
from indexer import ConnectionSettings
from tests._nodes import ManagedNodes
from tests._pki import SUPERUSER, make_local_pki, secured_engine_config, wait_secured
from tests._support import test_engine_config
from tests.reliability._nodes import HEAP, SecuredNode, free_port


@pytest.fixture(scope="session")
def secured_node(
    tmp_path_factory: pytest.TempPathFactory, managed_nodes: ManagedNodes
) -> Iterator[SecuredNode]:
    began = time.monotonic()
    pki = make_local_pki()
    ca = pki.write_ca(tmp_path_factory.mktemp("pki") / "ca.crt")
    password = Secret(secrets.token_urlsafe(18))
    port = free_port()
    base = replace(test_engine_config("pytest-secure", port, transport_port=free_port()), heap=HEAP)
    node = managed_nodes.node(secured_engine_config(base, pki, password), fresh=True)
    node.start()
    try:
        url = node.config.url
        wait_secured(
            ConnectionSettings(url=url, username=SUPERUSER, password=password, ca_cert=ca), node=node
        )
        yield SecuredNode(url, ca, SUPERUSER, password, node, time.monotonic() - began)
    finally:
        with contextlib.suppress(Exception):
            node.stop()
