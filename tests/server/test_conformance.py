"""Every public conformance case as AdmissionReviews against the real server (uvicorn, TLS, 127.0.0.1).

- /validate answers `expectedValidate.instancetype` (allowed, code, message, causes). In cases that go
  through the VM mutating webhook first (`expectedInfer`, `expectedMutate`), /validate gets the VM as
  that stage leaves it, as the API server would send it.
- /mutate under `expandAll` (`expand` for a CREATE): applying the returned JSONPatch (jsonpatch library) to the
  submitted VM
  gives exactly `expected.vm` (plus our provenance annotation, checked separately); a case the
  validator refuses, or whose expansion fails, is denied and nothing is patched. A case the mutating
  webhook denies (inference, matcher checks) is denied with upstream's code and message.

The cases' objects are served from catalogue directories; cases whose objects clash (same name,
different content) or that expect a name to be missing go to different servers, and so do cases with
different `kubevirtConfiguration`s (written into the catalogue as a KubeVirt object, which is the
configuration of an offline server).
"""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import httpx
import jsonpatch
import orjson
import pytest

from instancetype_webhook.admission.policy import PROVENANCE_KEY
from tests.kit.builders import review
from tests.kit.server import serve
from tests.kit.shared_data import conformance_cases

OBJECT_KEYS = ("instancetypes", "clusterInstancetypes", "preferences", "clusterPreferences", "controllerRevisions",
               "persistentVolumeClaims", "dataVolumes", "dataSources", "volumeSnapshots")
NAMESPACED_KEYS = ("instancetypes", "preferences", "controllerRevisions", "persistentVolumeClaims", "dataVolumes",
                   "dataSources",
                   "volumeSnapshots")
CASES = conformance_cases()


def _objects(case: dict) -> dict[tuple[str, str, str], dict]:
    ns = case["input"]["vm"]["metadata"].get("namespace", "default")
    out = {}
    for key in OBJECT_KEYS:
        for obj in case["input"].get(key) or []:
            obj = copy.deepcopy(obj)
            scoped = key in NAMESPACED_KEYS
            if scoped:
                obj["metadata"].setdefault("namespace", ns)
            out[(obj["kind"], obj["metadata"].get("namespace", "") if scoped else "", obj["metadata"]["name"])] = obj
    return out


def _referenced_names(case: dict) -> set[str]:
    spec = case["input"]["vm"].get("spec") or {}
    return {str(m.get("name")) for m in (spec.get("instancetype"), spec.get("preference")) if isinstance(m, dict)}


def batches(cases: list[dict]) -> list[tuple[dict, list[dict]]]:
    """Group cases so that within a group every object has one definition and no case's missing
    reference is provided by another case's objects."""
    groups: list[tuple[dict, list[dict]]] = []
    for case in cases:
        objs = _objects(case)
        own_names = {k[2] for k in objs}
        missing = _referenced_names(case) - own_names
        for pool, members in groups:
            clash = any(k in pool and pool[k] != v for k, v in objs.items())
            pool_names = {k[2] for k in pool}
            provides_missing = bool(missing & pool_names)
            breaks_other = any((_referenced_names(m) - {k[2] for k in _objects(m)}) & own_names for m in members)
            if not (clash or provides_missing or breaks_other):
                pool.update(objs)
                members.append(case)
                break
        else:
            groups.append((dict(objs), [case]))
    return groups


def _post(client: httpx.Client, path: str, body: dict) -> dict:
    resp = client.post(path, content=orjson.dumps(body), headers={"content-type": "application/json"})
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["kind"] == "AdmissionReview" and out["apiVersion"] == "admission.k8s.io/v1"
    assert out["response"]["uid"] == body["request"]["uid"]
    return out["response"]


def _check_validate(case: dict, resp: dict) -> list[str]:
    exp = case["expectedValidate"]["instancetype"]
    problems = []
    if resp["allowed"] != exp["allowed"]:
        problems.append(f"allowed {resp['allowed']} != {exp['allowed']}: {resp.get('status')}")
    elif not exp["allowed"]:
        status = resp["status"]
        if status.get("code") != exp.get("code"):
            problems.append(f"code {status.get('code')} != {exp.get('code')}")
        if status.get("message") != exp.get("message"):
            problems.append(f"message {status.get('message')!r} != {exp.get('message')!r}")
        got = (status.get("details") or {}).get("causes") or []
        if got != (exp.get("causes") or []):
            problems.append(f"causes {got} != {exp.get('causes')}")
    for warning in resp.get("warnings") or []:
        if len(warning) > 120:
            problems.append(f"warning longer than 120 characters: {warning!r}")
    return problems


def _stage_answer(case: dict) -> dict | None:
    """The mutating webhook's answer when the case pins it (`expectedInfer` / `expectedMutate`)."""
    return case.get("expectedInfer") or case.get("expectedMutate")


def _staged_vm(case: dict) -> dict:
    """The VM the API server hands to /validate: as the mutating webhook's instancetype stage leaves it."""
    from instancetype_webhook.conformance.cases import case_settings, case_source
    from instancetype_webhook.kubevirt.mutator import mutate_vm

    vm = case["input"]["vm"]
    if _stage_answer(case) is None:
        return vm
    old = case["input"].get("oldVm") if case["input"].get("operation") == "UPDATE" else None
    mutation = mutate_vm(vm, old, case_source(case["input"]), case_settings(case["input"]))
    return mutation.vm if mutation.vm is not None else vm


def _check_mutate(case: dict, resp: dict) -> list[str]:
    vm = case["input"]["vm"]
    exp_validate = case["expectedValidate"]["instancetype"]
    expected = case["expected"]
    stage = _stage_answer(case)
    if stage is not None and not stage["allowed"]:
        status = resp.get("status") or {}
        if (resp["allowed"] or "patch" in resp
                or (status.get("code"), status.get("message")) != (stage["code"], stage["message"])):
            return [f"expected the mutating webhook's denial {stage}, got {resp}"]
        return []
    if not exp_validate["allowed"] or "error" in expected:
        problems = []
        if resp["allowed"]:
            problems.append("expected a denial under expand")
        if "patch" in resp:
            problems.append("a denial carries no patch")
        if "error" in expected and expected["kind"] in ("notFound", "badRequest"):
            if expected["error"] not in resp.get("status", {}).get("message", ""):
                problems.append(f"denial {resp.get('status')} does not name {expected['error']!r}")
        elif not exp_validate["allowed"]:
            if resp.get("status", {}).get("message") != exp_validate.get("message"):
                problems.append(f"denial message {resp.get('status')} != validation {exp_validate.get('message')!r}")
        elif expected["error"] not in resp.get("status", {}).get("message", ""):
            problems.append(f"denial {resp.get('status')} does not carry {expected['error']!r}")
        return problems
    if not resp["allowed"]:
        return [f"denied: {resp.get('status')}"]
    if not any(isinstance((vm.get("spec") or {}).get(key), dict) for key in ("instancetype", "preference")):
        # a VM without references is left as it is (upstream's Expand returns it unchanged; e.g. the flat VMs
        # of the liveupdate cases)
        return ["a VM without references is patched"] if "patch" in resp else []
    if resp.get("patchType") != "JSONPatch":
        return [f"patchType {resp.get('patchType')!r}"]
    ops = json.loads(base64.b64decode(resp["patch"]))
    problems = [f"untargeted op {op['op']} {op['path']!r}" for op in ops if op["path"] in ("", "/spec", "/metadata")]
    patched = jsonpatch.apply_patch(vm, ops, in_place=False)
    annotations = patched["metadata"].get("annotations") or {}
    provenance = json.loads(annotations.pop(PROVENANCE_KEY))
    if not annotations and "annotations" not in vm["metadata"]:
        del patched["metadata"]["annotations"]
    spec = vm["spec"]
    for key in ("instancetype", "preference"):
        if key not in spec:
            continue
        if spec[key].get("inferFromVolume"):
            inferred = (stage or {}).get(key)
            if inferred is not None and (provenance[key]["name"] != inferred["name"]
                                         or provenance[key]["inferredFrom"]["volume"] != spec[key]["inferFromVolume"]):
                problems.append(f"provenance {provenance} does not record {key} {inferred} inferred")
        elif provenance[key]["name"] != spec[key]["name"]:
            problems.append(f"provenance {provenance} does not name {spec[key]['name']}")
    if patched != expected["vm"]:
        problems.append(f"patched VM != expected.vm: ops {ops}")
    return problems


def _configuration(case: dict) -> str:
    """The case's kubevirtConfiguration as a grouping key: one server per cluster configuration."""
    return json.dumps(case["input"].get("kubevirtConfiguration") or {}, sort_keys=True)


def _kubevirt(configuration: dict) -> dict:
    """The KubeVirt object that carries a case's kubevirtConfiguration into the server's catalogue
    (offline, a KubeVirt object among the catalogue's manifests is the cluster configuration)."""
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": configuration}}


GROUPS = [(pool, members) for key in sorted({_configuration(c) for c in CASES})
          for pool, members in batches([c for c in CASES if _configuration(c) == key])]


@pytest.mark.parametrize("group", range(len(GROUPS)), ids=lambda i: f"server{i}-{len(GROUPS[i][1])}cases")
def test_conformance_over_https(tmp_path: Path, group: int) -> None:
    pool, members = GROUPS[group]
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    for i, obj in enumerate(pool.values()):
        (catalog / f"{i:04d}.json").write_bytes(orjson.dumps(obj))
    configuration = members[0]["input"].get("kubevirtConfiguration")
    if configuration:
        (catalog / "kubevirt.json").write_bytes(orjson.dumps(_kubevirt(configuration)))
    failures: dict[str, list[str]] = {}
    # expandAll: CREATE as under expand; an UPDATE is flattened too, even of a VM whose stored status holds a
    # controllerRevisionRef (expand would keep that one referencing), so `expected` applies to every case
    with serve(tmp_path, "--policy", "expandAll", "--catalog", str(catalog)) as server, server.client() as client:
        for case in members:
            vm = case["input"]["vm"]
            operation, old = case["input"].get("operation", "CREATE"), case["input"].get("oldVm")
            stage = _stage_answer(case)
            problems = []
            if stage is None or stage["allowed"]:  # the API server calls /validate only after admission so far
                problems += _check_validate(case,
                                            _post(client, "/validate", review(_staged_vm(case), operation, old=old)))
            problems += _check_mutate(case, _post(client, "/mutate", review(vm, operation, old=old)))
            if problems:
                failures[case["name"]] = problems
    assert not failures, json.dumps(failures, indent=1)[:6000]


def test_every_public_case_is_served() -> None:
    assert sum(len(m) for _, m in GROUPS) == len(CASES) >= 206
    for _, members in GROUPS:  # one cluster configuration per server
        assert len({_configuration(case) for case in members}) == 1
