"""Fixtures of the property tests."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.kit.libvirt_schema import SCHEMA, schema_problem
from tests.kit.needs import skip_missing


@pytest.fixture(scope="session")
def libvirt_schema() -> Callable[[str], str | None]:
    """libvirt's domain schema check (`schema_problem`); needs Debian's libvirt packages."""
    if not SCHEMA.is_file():
        skip_missing("libvirt's domain schema", "bash tests/data/shared/tools/libvirt-check.sh setup")
    return schema_problem
