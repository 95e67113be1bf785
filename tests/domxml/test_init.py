"""The package's entry points (domxml/__init__.py): render_domain and its checks of the VMI's shape."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, render_domain
from tests.kit.domxml import make_vmi


def test_render_reports_malformed_vmis_as_domain_errors():
    with pytest.raises(DomainError):
        render_domain({"spec": "nope"})
    with pytest.raises(DomainError):
        render_domain(make_vmi({"memory": {"guest": "lots"}}))
