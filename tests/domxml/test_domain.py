"""<domain> as a whole (domxml/domain.py): the domain type, the architecture check, the element order."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, render_domain
from tests.kit.domxml import make_vmi


def test_render_rejects_other_architectures_and_missing_kvm():
    from instancetype_webhook.domxml import LauncherContext

    with pytest.raises(DomainError, match="arm64"):
        render_domain(make_vmi(architecture="arm64"), LauncherContext(architecture="amd64"))

    xml = render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False))
    assert xml.startswith("<domain") and 'type="qemu"' in xml.splitlines()[0]
    with pytest.raises(DomainError, match="/dev/kvm"):
        render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False, allow_emulation=False))
