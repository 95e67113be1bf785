"""Schemathesis against the service's own OpenAPI document (/openapi.json over TLS): positive and
negative cases for every operation; no 5xx, every status code and content type as documented."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import given, settings
from schemathesis import GenerationMode

from tests.kit.fuzz import BASE as _BASE
from tests.kit.fuzz import LONG
from tests.kit.server import Server, serve


@pytest.fixture(scope="module")
def openapi_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("openapi"), "--policy", "expand") as server:
        yield server


@pytest.fixture(scope="module")
def session(openapi_server: Server) -> Iterator[requests.Session]:
    with requests.Session() as s:
        s.trust_env = False  # REQUESTS_CA_BUNDLE would otherwise replace our CA
        s.verify = str(openapi_server.certs.ca)
        yield s


@pytest.fixture(scope="module")
def api_schema(openapi_server: Server, session: requests.Session):
    doc = session.get(openapi_server.url + "/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(doc)
    schema.config.base_url = openapi_server.url
    return schema


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_openapi_contract(api_schema, session: requests.Session, mode: GenerationMode):
    """Every documented operation, data that fits the schema and data that does not."""
    calls: list[str] = []

    @settings(max_examples=3000 if LONG else 60, **_BASE)
    @given(case=api_schema.as_strategy(generation_mode=mode))
    def run(case) -> None:
        calls.append(case.operation.label)
        case.call_and_validate(session=session, timeout=10, verify=session.verify)

    run()
    assert {"POST /mutate", "POST /validate", "POST /preview"} <= set(calls), set(calls)
