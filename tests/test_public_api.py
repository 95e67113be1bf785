"""The public API is what instancetype_webhook/__init__.py names: pinned here so a change to it is deliberate."""
import subprocess
import sys

import instancetype_webhook
from instancetype_webhook.sources.catalog import load_catalog

PUBLIC = {
    "ClusterSettings", "Cause", "DEFAULT_SETTINGS", "DomainError", "ExpandError", "InMemorySource", "Source",
    "Verdict", "admit_object", "expand", "expand_vm_spec", "load_catalog", "make_patch", "render_domain",
    "validate_matchers", "validate_vm", "vmi_from_vm", "__version__",
}


def test_public_names_are_pinned():
    assert set(instancetype_webhook.__all__) == PUBLIC


def test_every_public_name_resolves():
    for name in PUBLIC:
        assert getattr(instancetype_webhook, name) is not None, name


def test_unknown_name_is_an_attribute_error():
    try:
        instancetype_webhook.no_such_thing  # noqa: B018  (the attribute access is the test)
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_app_does_not_load_the_heavy_parts():
    code = ("import sys, instancetype_webhook; "
            "print(any(m.startswith(('lxml', 'instancetype_webhook.domxml', 'fastapi')) for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_documented_round_trip():
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
          "metadata": {"name": "demo", "namespace": "default"},
          "spec": {"instancetype": {"name": "u1.small"}, "preference": {"name": "fedora"},
                   "template": {"spec": {"domain": {"devices": {}},
                                         "volumes": [{"name": "root", "containerDisk": {"image": "x"}}]}}}}
    source = load_catalog()
    assert instancetype_webhook.validate_vm(vm, source).allowed
    flat = instancetype_webhook.expand(vm, source)
    assert "instancetype" not in flat["spec"] and flat["spec"]["template"]["spec"]["domain"]["memory"]["guest"] == "2Gi"
    assert "<domain" in instancetype_webhook.render_domain(instancetype_webhook.vmi_from_vm(flat))
    paths = {op["path"] for op in instancetype_webhook.make_patch(vm, flat)}
    assert paths >= {"/spec/instancetype", "/spec/preference"}
