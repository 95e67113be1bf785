"""The playground's bundled samples are the VMs of examples/ (tools/playground_samples.py writes them)."""
from __future__ import annotations

import importlib.util

import yaml

from instancetype_webhook.playground.routes import bundled_samples
from tests.kit.shared_data import ROOT


def _tool():
    spec = importlib.util.spec_from_file_location("playground_samples", ROOT / "tools" / "playground_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_samples_are_the_examples_vms_as_the_tool_writes_them():
    tool = _tool()
    for name, (example, _) in tool.SAMPLES.items():
        shipped = (ROOT / "instancetype_webhook" / "playground" / "samples" / name).read_text(encoding="utf-8")
        assert shipped == tool.render(name), f"run: python3 tools/playground_samples.py ({name} is stale)"
        assert yaml.safe_load(shipped) == tool.vm_of(ROOT / "examples" / example)


def test_bundled_samples_in_page_order_with_titles():
    samples = bundled_samples()
    assert [s.name for s in samples] == ["expand", "reference", "conflict", "missing-reference", "preview"]
    assert all(s.title and not s.title.startswith("#") for s in samples)
