"""What the builders share (domxml/conversion.py): the values Conversion derives from the VMI and context."""
from __future__ import annotations

from instancetype_webhook.domxml import render_domain
from tests.kit.domxml import make_vmi


def test_vmi_without_any_memory_converts_as_zero_bytes():
    vmi = make_vmi({"memory": {}})
    assert '<memory unit="b">0</memory>' in render_domain(vmi)
