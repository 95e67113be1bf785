"""Fixtures of the cluster-source tests: `source_for(fake, **kw)`, a started `ClusterSource` on a fake API
server (the `fake` fixture, tests/conftest.py), stopped after the test."""
from __future__ import annotations

from pathlib import Path

import pytest

from instancetype_webhook.sources.cluster import ClusterSource
from tests.fakeapi.apiserver import FakeAPIServer


@pytest.fixture
def source_for(tmp_path: Path):
    made: list[ClusterSource] = []

    def make(fake: FakeAPIServer, **kw) -> ClusterSource:
        config = tmp_path / "kubeconfig"
        config.write_text(fake.kubeconfig())
        kw.setdefault("backoff_max", 0.3)
        src = ClusterSource.from_config(kubeconfig=config, **kw)
        src.start()
        made.append(src)
        return src

    yield make
    for src in made:
        src.stop()
