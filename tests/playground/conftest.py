"""One `serve --dev` (as `make serve`) for the playground's HTTP and browser tests."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kit.playground_live import Live, serve_dev


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    with serve_dev(tmp_path_factory.mktemp("dev-server")) as live:
        yield live


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    from tests.kit.browser import SHOTS

    if SHOTS:
        terminalreporter.section("playground screenshots")
        for path in SHOTS:
            terminalreporter.line(str(path))
