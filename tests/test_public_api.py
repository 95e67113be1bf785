"""The public API is what instancetype_webhook/__init__.py names: pinned here so a change to it is deliberate."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import instancetype_webhook
from instancetype_webhook.sources.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = {
    "ClusterSettings", "Cause", "DEFAULT_SETTINGS", "DomainError", "ExpandError", "InMemorySource", "Source",
    "Verdict", "admit_object", "expand", "expand_vm_spec", "load_catalog", "make_patch", "render_domain",
    "validate_matchers", "validate_vm", "vmi_from_vm", "__version__", "answer_vm", "VMAnswer", "ReviewContext",
    "Policy",
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package as `pip install .` builds it."""
    where = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "--wheel-dir", str(where), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (built,) = where.glob("instancetype_webhook-*.whl")
    return built


def test_the_wheel_holds_one_typed_top_level_package(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"instancetype_webhook"}
    assert "instancetype_webhook/py.typed" in names
    assert wheel.name.startswith(f"instancetype_webhook-{instancetype_webhook.__version__}-")


def test_a_program_using_the_installed_package_type_checks_against_it(wheel: Path, tmp_path: Path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, timeout=300)
    program = tmp_path / "uses_api.py"
    program.write_text(
        "from instancetype_webhook import ReviewContext, answer_vm, expand, load_catalog, validate_vm\n"
        "source = load_catalog()\n"
        "vm: dict = {'spec': {}}\n"
        "reveal_type(expand(vm, source))\n"
        "reveal_type(validate_vm(vm, source).allowed)\n"
        "reveal_type(answer_vm(vm, None, 'CREATE', 'default', ReviewContext(source, policy='expand')).action)\n"
        "ReviewContext(source, policy='flatten')\n"
    )
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "c"),
                           str(program)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(site)})  # the installed package, py.typed and all
    out = done.stdout
    assert 'Revealed type is "dict[str, Any]"' in out, out
    assert 'Revealed type is "bool"' in out, out
    assert "Literal['allow'] | Literal['deny'] | Literal['patch']" in out, out
    assert 'Argument "policy" to "ReviewContext" has incompatible type' in out, out  # a typo is caught
