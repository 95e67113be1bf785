"""The CRDs' openAPIV3Schema as JSON Schema, to check that drawn objects are ones a real API server accepts."""
from __future__ import annotations

import functools
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from tests.kit.shared_data import SHARED

CRDS = {
    "VirtualMachine": "virtualmachines.kubevirt.io.yaml",
    "VirtualMachineInstancetype": "virtualmachineinstancetypes.instancetype.kubevirt.io.yaml",
    "VirtualMachineClusterInstancetype": "virtualmachineclusterinstancetypes.instancetype.kubevirt.io.yaml",
    "VirtualMachinePreference": "virtualmachinepreferences.instancetype.kubevirt.io.yaml",
    "VirtualMachineClusterPreference": "virtualmachineclusterpreferences.instancetype.kubevirt.io.yaml",
}


def _json_schema(node: Any) -> Any:
    """OpenAPI v3 (structural CRD dialect) -> JSON Schema: int-or-string, nullable, no unknown-field pruning
    (a drawn object must not rely on the API server dropping fields)."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if not k.startswith("x-kubernetes-") and k != "nullable"}
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        text: dict[str, Any] = {"type": "string"}
        if "pattern" in node:
            text["pattern"] = node["pattern"]
        out["anyOf"] = [{"type": "integer"}, text]
        out.pop("pattern", None)
    if node.get("type") == "object" and "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


@functools.cache
def validator(kind: str) -> Draft202012Validator:
    crd = yaml.safe_load((SHARED / "kubevirt-crds" / CRDS[kind]).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return Draft202012Validator(_json_schema(version["schema"]["openAPIV3Schema"]))


def schema_errors(obj: dict[str, Any]) -> list[str]:
    """What the CRD schema of `obj`'s kind refuses in it (metadata is the API server's own: not checked)."""
    body = {k: v for k, v in obj.items() if k != "metadata"}
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(obj["kind"]).iter_errors(body)]
