"""Hypothesis strategies for the reliability suite.

- `reviews()`: AdmissionReview documents, good and bad: valid VM reviews against the bundled
  catalogue, every kind of malformed instancetype/preference matcher, objects that are not VMs,
  and envelopes with wrong types, missing keys, unknown apiVersion/kind/operation.
- `raw_bodies()`: request bodies as bytes: truncated JSON, invalid UTF-8, duplicate keys,
  deep nesting, non-objects.
- `crd_vms()`: VirtualMachines generated from the VirtualMachine CRD's openAPIV3Schema
  (shared/kubevirt-crds), with a catalogue matcher, planted unknown fields and cloud-init user data.
"""
from __future__ import annotations

import copy
import functools
from typing import Any

import yaml
from hypothesis import strategies as st

from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import review as kit_review
from tests.kit.shared_data import SHARED

CRD = SHARED / "kubevirt-crds" / "virtualmachines.kubevirt.io.yaml"
API_VERSION = "admission.k8s.io/v1"
UNKNOWN = "x-reliability-unknown"  # planted unknown field name; never owned by anyone


@functools.cache
def catalog_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cluster instance type names, cluster preference names) of the bundled catalogue."""
    objs = load_catalog().objects()
    its = sorted(o["metadata"]["name"] for o in objs if o["kind"] == "VirtualMachineClusterInstancetype")
    prefs = sorted(o["metadata"]["name"] for o in objs if o["kind"] == "VirtualMachineClusterPreference")
    return tuple(its), tuple(prefs)


# ---------------------------------------------------------------- JSON values

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=20,
)
odd_strings = st.one_of(
    st.text(max_size=40), st.sampled_from(["", " ", "a/b", "~0~1", "..", "A" * 300, "ünïcödé", "\u0000", "\ufeff",
                                           "x" * 5000]),
)


# ---------------------------------------------------------------- matchers

def _names() -> tuple[st.SearchStrategy[str], st.SearchStrategy[str]]:
    its, prefs = catalog_names()
    return st.sampled_from(its), st.sampled_from(prefs)


KIND_SPELLINGS = [
    "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetype", "VirtualMachineInstancetype",
    "virtualmachineinstancetypes", "VirtualMachineClusterPreference", "virtualmachinepreference",
    "VirtualMachinePreference", "virtualmachineclusterpreferences", "Pod", "", "VIRTUALMACHINEINSTANCETYPE",
]


@st.composite
def matchers(draw: st.DrawFn, preference: bool) -> Any:
    """A matcher value: valid, a missing name, or malformed in one of many ways."""
    its, prefs = _names()
    name = draw(st.one_of(prefs if preference else its, odd_strings, json_values))
    shape = draw(st.sampled_from(["good", "kind", "revision", "infer", "both", "extra", "empty", "notdict", "types"]))
    if shape == "good":
        return {"name": draw(prefs if preference else its)}
    if shape == "notdict":
        return draw(st.one_of(scalars, st.lists(json_values, max_size=3)))
    if shape == "empty":
        return {}
    matcher: dict[str, Any] = {"name": name}
    if shape == "kind":
        matcher["kind"] = draw(st.one_of(st.sampled_from(KIND_SPELLINGS), odd_strings, json_values))
    elif shape == "revision":
        matcher["revisionName"] = draw(st.one_of(odd_strings, json_values))
    elif shape == "infer":
        del matcher["name"]
        matcher["inferFromVolume"] = draw(st.one_of(st.sampled_from(["rootdisk", "missing", ""]), json_values))
        if draw(st.booleans()):
            matcher["inferFromVolumeFailurePolicy"] = draw(st.one_of(
                st.sampled_from(["Reject", "Ignore", "reject", ""]), json_values))
    elif shape == "both":
        matcher["inferFromVolume"] = "rootdisk"
    elif shape == "extra":
        matcher.update(draw(st.dictionaries(st.text(max_size=10), json_values, max_size=3)))
    elif shape == "types":
        key = draw(st.sampled_from(["name", "kind", "revisionName", "inferFromVolume"]))
        matcher[key] = draw(st.one_of(st.integers(-(2**63), 2**64 - 1), st.booleans(), st.lists(scalars, max_size=2),
                                      st.dictionaries(st.text(max_size=5), scalars, max_size=2), st.none()))
    return matcher


# ---------------------------------------------------------------- VMs

def base_vm(name: str = "vm", namespace: str = "ns", user_data: str = "#cloud-config\n") -> dict[str, Any]:
    return {
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "demo"}},
        "spec": {
            "runStrategy": "Always",
            "template": {"metadata": {"labels": {"kubevirt.io/domain": name}}, "spec": {
                "domain": {"devices": {"disks": [{"name": "rootdisk"}, {"name": "cloudinitdisk", "disk": {}}],
                                       "interfaces": [{"name": "default", "masquerade": {}}]}},
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                            {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": user_data}}],
            }},
        },
    }


@st.composite
def malformed_vms(draw: st.DrawFn) -> Any:
    """VMs with malformed matchers, fields of the wrong type, or random values at random places."""
    vm = base_vm(draw(st.text(min_size=1, max_size=20)))
    spec = vm["spec"]
    its, prefs = _names()
    if draw(st.booleans()):  # half of them reference real catalogue objects: they get flattened
        spec["instancetype"] = {"name": draw(its)}
        if draw(st.booleans()):
            spec["preference"] = {"name": draw(prefs)}
    else:
        if draw(st.booleans()):
            spec["instancetype"] = draw(matchers(False))
        if draw(st.booleans()):
            spec["preference"] = draw(matchers(True))
    for _ in range(draw(st.integers(0, 3))):
        _poke(vm, draw(st.sampled_from(POKE_PATHS)), draw(json_values))
    return vm


POKE_PATHS = [
    ("spec",), ("metadata",), ("metadata", "namespace"), ("metadata", "annotations"),
    ("metadata", "deletionTimestamp"), ("spec", "template"), ("spec", "template", "spec"),
    ("spec", "template", "spec", "domain"), ("spec", "template", "spec", "domain", "cpu"),
    ("spec", "template", "spec", "domain", "cpu", "sockets"), ("spec", "template", "spec", "domain", "memory"),
    ("spec", "template", "spec", "domain", "memory", "guest"), ("spec", "template", "spec", "domain", "devices"),
    ("spec", "template", "spec", "domain", "devices", "disks"), ("spec", "template", "spec", "domain", "resources"),
    ("spec", "template", "spec", "domain", "features"), ("spec", "template", "spec", "domain", "firmware"),
    ("spec", "template", "spec", "domain", "machine"), ("spec", "template", "spec", "volumes"),
    ("spec", "template", "spec", "networks"), ("spec", "template", "metadata"), ("spec", "dataVolumeTemplates"),
    ("status",), ("status", "instancetypeRef"), ("spec", "template", "spec", "domain", "devices", "interfaces"),
]


def _poke(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = obj
    for key in path[:-1]:
        nxt = node.get(key)
        if type(nxt) is not dict:
            nxt = node[key] = {}
        node = nxt
    node[path[-1]] = value


# ---------------------------------------------------------------- AdmissionReviews

def review(obj: Any, operation: str = "CREATE", old: Any = None, group: str = "kubevirt.io",
           kind: str = "VirtualMachine", version: str = "v1", dry_run: bool = False) -> dict[str, Any]:
    # specific: a fuzzed object's name/namespace are strings even when its metadata is not ("ns" by default)
    meta = obj.get("metadata") if type(obj) is dict and type(obj.get("metadata")) is dict else {}
    return kit_review(obj, operation, old, dry_run=dry_run, group=group, version=version, kind=kind,
                      namespace=str(meta.get("namespace") or "ns"), name=str(meta.get("name") or ""),
                      username="fuzz")


other_objects = st.one_of(
    st.builds(lambda n: {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n}, "spec": {"containers": []}},
              st.text(max_size=10)),
    st.builds(lambda it: {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                          "metadata": {"name": "it"}, "spec": it},
              st.one_of(json_values, st.fixed_dictionaries({"cpu": st.fixed_dictionaries({"guest": json_values}),
                                                            "memory": st.fixed_dictionaries({"guest": json_values})}))),
    st.dictionaries(st.text(max_size=10), json_values, max_size=5),
)
GVKS = [
    ("kubevirt.io", "v1", "VirtualMachine"), ("", "v1", "Pod"),
    ("instancetype.kubevirt.io", "v1beta1", "VirtualMachineInstancetype"),
    ("instancetype.kubevirt.io", "v1beta1", "VirtualMachineClusterPreference"),
    ("instancetype.kubevirt.io", "v1beta1", "VirtualMachinePreference"),
    ("kubevirt.io", "v1", "VirtualMachineInstance"), ("kubevirt.io", "v2", "VirtualMachine"),
]


@st.composite
def valid_reviews(draw: st.DrawFn) -> dict[str, Any]:
    """Reviews the API server could send: any operation, VM or not, good or malformed VM."""
    obj = draw(st.one_of(malformed_vms(), malformed_vms(), other_objects))
    group, version, kind = draw(st.one_of(st.just(GVKS[0]), st.sampled_from(GVKS)))  # VMs most often
    operation = draw(st.sampled_from(["CREATE", "CREATE", "UPDATE", "UPDATE", "DELETE", "CONNECT"]))
    old = draw(st.one_of(st.none(), malformed_vms())) if operation in ("UPDATE", "DELETE") else None
    return review(obj, operation, old, group, kind, version, draw(st.booleans()))


@st.composite
def broken_reviews(draw: st.DrawFn) -> Any:
    """A review with one envelope defect: missing/wrongly typed keys, unknown apiVersion/kind/operation."""
    doc = draw(valid_reviews())
    defect = draw(st.sampled_from(["drop", "retype", "apiVersion", "kind", "operation", "gvk", "request", "whole"]))
    if defect == "whole":
        return draw(json_values)
    if defect == "request":
        doc["request"] = draw(st.one_of(scalars, st.lists(json_values, max_size=2)))
    elif defect == "drop":
        where = draw(st.sampled_from(["top", "request"]))
        target = doc if where == "top" else doc["request"]
        target.pop(draw(st.sampled_from(sorted(target))), None)
    elif defect == "retype":
        key = draw(st.sampled_from(["uid", "kind", "operation", "object", "oldObject", "namespace", "name", "dryRun"]))
        doc["request"][key] = draw(json_values)
    elif defect == "apiVersion":
        doc["apiVersion"] = draw(st.one_of(st.sampled_from(["admission.k8s.io/v2", "v1", "", "ADMISSION.K8S.IO/V1"]),
                                           json_values))
    elif defect == "kind":
        doc["kind"] = draw(st.one_of(st.sampled_from(["AdmissionResponse", "admissionreview", ""]), json_values))
    elif defect == "operation":
        doc["request"]["operation"] = draw(st.one_of(st.sampled_from(["create", "PATCH", "GET", ""]), odd_strings))
    elif defect == "gvk":
        doc["request"]["kind"] = draw(st.one_of(json_values, st.fixed_dictionaries(
            {"group": json_values, "version": json_values, "kind": json_values})))
    return doc


def reviews() -> st.SearchStrategy[Any]:
    return st.one_of(valid_reviews(), valid_reviews(), broken_reviews())


# ---------------------------------------------------------------- raw bodies

def nested(depth: int, opener: bytes = b"[", closer: bytes = b"]") -> bytes:
    return opener * depth + closer * depth


@st.composite
def raw_bodies(draw: st.DrawFn) -> bytes:
    import orjson

    good = orjson.dumps(draw(valid_reviews()))
    kind = draw(st.sampled_from(["truncate", "badutf8", "dupkeys", "deep", "deepobj", "bytes", "surrogate", "bom",
                                 "trailing", "nonobject"]))
    if kind == "truncate":
        return good[: draw(st.integers(0, max(len(good) - 1, 0)))]
    if kind == "badutf8":
        at = draw(st.integers(0, len(good)))
        junk = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]))
        # inside a string value (after the uid's opening quote) and at a random place
        uid_at = good.index(b'"uid":"') + 7
        return good[:uid_at] + junk + good[uid_at:] if draw(st.booleans()) else good[:at] + junk + good[at:]
    if kind == "dupkeys":
        key = draw(st.sampled_from([b'"request":', b'"kind":', b'"apiVersion":', b'"uid":']))
        dup = key + orjson.dumps(draw(json_values)) + b","
        i = good.find(key)
        return good[:i] + dup + good[i:] if draw(st.booleans()) else good[:i] + good[i:].replace(b",", b"," + dup, 1)
    if kind == "deep":
        return nested(draw(st.integers(150, 5000)))
    if kind == "deepobj":
        depth = draw(st.integers(150, 3000))
        inner = b'{"a":' * depth + b"1" + b"}" * depth
        return good[:-2] + b',"extra":' + inner + b"}}"
    if kind == "surrogate":
        return good.replace(b'"uid":"', b'"uid":"\\ud800', 1)
    if kind == "bom":
        return b"\xef\xbb\xbf" + good
    if kind == "trailing":
        return good + draw(st.sampled_from([b"x", b"{}", b"\x00", b" \n", b",", b"]"]))
    if kind == "nonobject":
        return orjson.dumps(draw(st.one_of(scalars, st.lists(json_values, max_size=3))))
    return draw(st.binary(max_size=200))


# ---------------------------------------------------------------- VMs from the CRD schema

@functools.cache
def vm_schema() -> dict[str, Any]:
    doc = yaml.safe_load(CRD.read_text())
    version = next(v for v in doc["spec"]["versions"] if v.get("storage"))
    return version["schema"]["openAPIV3Schema"]


def _scalar_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(0, 64), st.sampled_from(["1", "2Gi", "512Mi", "10%"]))
    kind = schema.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(0, 2**31 - 1)
    if kind == "number":
        return st.floats(0, 1e6, allow_nan=False)
    if schema.get("format") == "date-time":
        return st.just("2026-01-01T00:00:00Z")
    return st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)


_STRATEGIES: dict[tuple[int, int, int], st.SearchStrategy[Any]] = {}


def from_schema(schema: dict[str, Any], depth: int = 0, max_depth: int = 9) -> st.SearchStrategy[Any]:
    """Values that fit `schema` (a structural CRD schema): objects carry a few of their properties.
    Strategies are built once per (schema node, depth): the schema is loaded once and kept."""
    key = (id(schema), depth, max_depth)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = _build(schema, depth, max_depth)
    return _STRATEGIES[key]


def _build(schema: dict[str, Any], depth: int, max_depth: int) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if depth >= max_depth or not props:
            if schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("additionalProperties"):
                return st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=8), max_size=2)
            return st.builds(dict)
        required = [k for k in schema.get("required", []) if k in props]
        optional = sorted(k for k in props if k not in required)
        return _some_props(props, required, optional, depth, max_depth)
    if kind == "array":
        items = schema.get("items") or {}
        if depth >= max_depth:
            return st.builds(list)
        return st.lists(from_schema(items, depth + 1, max_depth), max_size=2)
    return _scalar_for(schema)


@st.composite
def _some_props(draw: st.DrawFn, props: dict, required: list[str], optional: list[str], depth: int,
                max_depth: int) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from(optional), max_size=4, unique=True)) if optional else []
    out = {}
    for key in required + chosen:
        out[key] = draw(from_schema(props[key], depth + 1, max_depth))
    return out


@st.composite
def unknown_fields(draw: st.DrawFn, obj: Any) -> Any:
    """Plant `UNKNOWN` keys in some of the dicts of `obj` (in place, at random positions in key order)."""
    if type(obj) is dict:
        for value in list(obj.values()):
            draw(unknown_fields(value))
        if draw(st.integers(0, 3)) == 0:
            items = list(obj.items())
            at = draw(st.integers(0, len(items)))
            items.insert(at, (UNKNOWN, draw(json_values)))
            obj.clear()
            obj.update(items)
    elif type(obj) is list:
        for value in obj:
            draw(unknown_fields(value))
    return obj


@st.composite
def crd_vms(draw: st.DrawFn, user_data_size: int = 0) -> dict[str, Any]:
    """A VM from the CRD schema's `spec.template.spec`, on a sane skeleton, with catalogue matchers,
    unknown fields and (optionally large) cloud-init user data."""
    schema = vm_schema()["properties"]["spec"]["properties"]["template"]["properties"]["spec"]
    its, prefs = _names()
    vm = base_vm(user_data="#cloud-config\n" + "x" * user_data_size)
    template_spec = vm["spec"]["template"]["spec"]
    generated = copy.deepcopy(draw(from_schema(schema, 1, 7)))  # drawn values may be shared: copy first
    domain = generated.pop("domain", None)
    # Keep the skeleton's disks/volumes consistent; the generated fields go around them.
    for key, value in generated.items():
        if key not in ("volumes", "networks"):
            template_spec[key] = value
    if type(domain) is dict:
        devices = domain.pop("devices", None)
        template_spec["domain"].update({k: v for k, v in domain.items()})
        if type(devices) is dict:
            devices.pop("disks", None)
            devices.pop("interfaces", None)
            template_spec["domain"]["devices"].update(devices)
    if draw(st.booleans()):
        vm["spec"]["instancetype"] = {"name": draw(its)}
    if draw(st.booleans()) or "instancetype" not in vm["spec"]:
        vm["spec"]["preference"] = {"name": draw(prefs)}
    if draw(st.booleans()):
        vm["status"] = {"printableStatus": "Stopped", UNKNOWN: {"a": [1, 2]}}
    draw(unknown_fields(vm))
    return copy.deepcopy(vm)
