"""Every answer the project gives on a conformance directory, as one JSON line per case: the expansion (the flat
VM or the error), the validation verdict and the /validate and /mutate bodies (the JSONPatch and its provenance
annotation included) under policy expand. Standard library and the app only: test_image.py runs it in the
image (compiled) and on the host (pure Python) and compares the two outputs byte for byte.

    python answers_digest.py CONFORMANCE_DIR
"""
from __future__ import annotations

import json
import sys

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.envelope import parse_review
from instancetype_webhook.admission.mutate import mutate
from instancetype_webhook.admission.validate import validate
from instancetype_webhook.conformance.cases import case_old_vm, case_settings, case_source, case_vm
from instancetype_webhook.conformance.engine import expand_answer, validate_answer
from instancetype_webhook.conformance.runner import case_files


# specific: the exact bytes the recorded answers digest was taken over (no name, dryRun or userInfo)
def review_body(case: dict) -> bytes:
    vm, old = case_vm(case), case_old_vm(case)
    request = {"uid": "digest", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
               "operation": "UPDATE" if old is not None else "CREATE",
               "namespace": (vm.get("metadata") or {}).get("namespace") or "default", "object": vm}
    if old is not None:
        request["oldObject"] = old
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).encode()


def answers(case: dict) -> dict:
    ctx = ReviewContext(source=case_source(case["input"]), policy="expand", cluster=case_settings(case["input"]))
    body = review_body(case)
    return {"expand": expand_answer(case), "validate": validate_answer(case),
            "/validate": validate(parse_review(body), ctx).body.decode(),
            "/mutate": mutate(parse_review(body), ctx).body.decode()}


# Fields of the wrong JSON type, each put into every case's VM: the 400s of malformed data must not differ either.
BROKEN = [(("spec", "instancetype"), "u1.medium"), (("spec", "preference", "name"), 5),
          (("spec", "template", "spec", "domain", "cpu"), "x"), (("spec", "template", "spec", "domain", "devices"), []),
          (("spec", "template", "spec", "domain", "memory", "guest"), "lots"),
          (("spec", "template", "spec", "domain", "resources"), {"requests": {"memory": ["1Gi"]}}),
          (("spec", "template", "spec", "volumes"), {"name": "rootdisk"}),
          (("spec", "template", "spec", "networks"), 3),
          (("spec", "template", "spec", "volumes"), [3]),
          (("spec", "template", "spec", "domain", "devices", "disks"), {}),
          (("spec", "template", "spec", "domain", "devices", "interfaces"), "eth0"),
          (("spec", "template", "spec", "domain", "firmware"), []),
          (("spec", "template", "metadata", "labels"), []),
          (("spec", "template", "spec", "domain", "features"), "acpi"), (("spec", "dataVolumeTemplates"), {})]


def broken(case: dict, where: tuple[str, ...], value: object) -> dict | None:
    """The case with `value` at `where` in its VM (None when the VM has no object on the way there)."""
    copied = json.loads(json.dumps(case))
    node = copied["input"]["vm"]
    for key in where[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return None
    node[where[-1]] = value
    return copied


def line(name: str, case: dict) -> str:
    try:
        found = answers(case)
    except Exception as exc:  # the same failure on both sides is the same answer
        found = {"raised": type(exc).__name__, "message": str(exc)}
    return json.dumps({"case": name, **found}, sort_keys=True)


def main(directory: str) -> int:
    for path in case_files(directory):
        case = json.loads(path.read_text())
        if "vm" not in case.get("input", {}):
            continue
        print(line(path.name, case))
        for where, value in BROKEN:
            variant = broken(case, where, value)
            if variant is not None:
                print(line(f"{path.name} with {'.'.join(where)}={json.dumps(value)}", variant))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
