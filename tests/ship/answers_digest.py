"""Every answer the project gives on a conformance directory, as one JSON line per case: the expansion (the flat
VM or the error), the validation verdict and the /validate and /mutate bodies (the JSONPatch and its provenance
annotation included) under policy expand. Standard library and the app only: test_image.py runs it in the
image (compiled) and on the host (pure Python) and compares the two outputs byte for byte.

    python answers_digest.py CONFORMANCE_DIR
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from app.conformance import case_files, case_old_vm, case_settings, case_source, case_vm, expand_answer, validate_answer
from app.server.context import ReviewContext
from app.server.mutate import mutate
from app.server.review import parse_review
from app.server.validate import validate


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


def main(directory: str) -> int:
    for path in case_files(directory):
        case = json.loads(path.read_text())
        if "vm" not in case.get("input", {}):
            continue
        try:
            line = answers(case)
        except Exception as exc:  # the same failure on both sides is the same answer
            line = {"raised": type(exc).__name__, "message": str(exc)}
        print(json.dumps({"case": Path(path).name, **line}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
