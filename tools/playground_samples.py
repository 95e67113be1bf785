"""Regenerate the playground's samples (instancetype_webhook/playground/samples/) from the VMs in examples/.

    python3 tools/playground_samples.py

Each sample is the example's VirtualMachine (an AdmissionReview's request.object) as YAML, with a
first comment line naming the example and what it shows; tests/playground/test_samples.py checks
that they still match examples/.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from instancetype_webhook.playground.yamlpos import dump  # noqa: E402  (after the path is set)

OUT = ROOT / "instancetype_webhook" / "playground" / "samples"
# sample file -> (example, what it shows), in the order the page lists them
SAMPLES = {
    "expand.yaml": ("vm-create-expand.json", "u1.medium + fedora, flattened (the VM asks for the expand policy)"),
    "reference.yaml": ("vm-create-reference.json", "u1.medium + fedora, kept by reference"),
    "conflict.yaml": ("vm-conflict.json", "sets CPU sockets and memory that u1.medium owns: refused"),
    "missing-reference.yaml": ("vm-missing-reference.json", "names an instance type that does not exist"),
    "preview.yaml": ("vm.json", "the bare VM of the /preview examples"),
}


def vm_of(example: Path) -> dict:
    doc = json.loads(example.read_text(encoding="utf-8"))
    return doc["request"]["object"] if doc.get("kind") == "AdmissionReview" else doc


def render(name: str) -> str:
    example, title = SAMPLES[name]
    body = dump(vm_of(ROOT / "examples" / example))
    return f"# {title} (examples/{example})\n{body}"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in SAMPLES:
        (OUT / name).write_text(render(name), encoding="utf-8")
        print(OUT / name)


if __name__ == "__main__":
    main()
