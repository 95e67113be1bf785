"""The strict fake API server (tests/fakeapi/apiserver.py) as its own process, for bench/fleet.py.

It loads the bundled catalogue, N generated instance types and preferences (as bench/memory.py makes
them) and M VMs with mixed catalogue references over 50 namespaces, prints its port, then takes
commands on stdin, one per line, answering each with one JSON line:
  admission <mutate-url> <validate-url> <ca-file>   every VM write now goes through the webhook
  stats                                             requests by verb, stored writes, webhook calls
  quit
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT)]

from memory import GENERATED_KINDS, _templates, generated_object  # noqa: E402  (after the sys.path set-up)

from instancetype_webhook.sources.catalog import load_catalog  # noqa: E402  (after the sys.path set-up)
from tests.fakeapi.apiserver import FakeAPIServer  # noqa: E402  (after the sys.path set-up)
from tests.kit.fleet_cluster import mixed_vm  # noqa: E402  (after the sys.path set-up)

NAMESPACES = 50


def populate(fake: FakeAPIServer, objects: int, vms: int) -> None:
    bundled = load_catalog().objects()
    for obj in bundled:
        fake.add(obj, notify=False)
    templates = _templates(bundled)
    for index in range(objects):
        kind = GENERATED_KINDS[index % len(GENERATED_KINDS)]
        pool = templates[kind]
        fake.add(generated_object(kind, index, pool[index % len(pool)]), notify=False)
    for i in range(vms):
        fake.add(mixed_vm(i, NAMESPACES), notify=False)
    fake.compact()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--vms", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=0, help="loopback port to listen on (default: a free one)")
    args = parser.parse_args()
    fake = FakeAPIServer(port=args.port)
    populate(fake, args.objects, args.vms)
    print(json.dumps({"port": fake.port, "kubeconfig": json.loads(fake.kubeconfig())}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "admission":
            fake.admission(words[1], words[2], ca=words[3])
            print(json.dumps({"ok": True}), flush=True)
        elif words[0] == "stats":
            verbs = {}
            for request in fake.requests:
                verb = request.split(" ", 1)[0]
                verbs[verb] = verbs.get(verb, 0) + 1
            print(json.dumps({"requests": verbs, "writes": fake.writes, "reviews": fake.reviews}), flush=True)
        elif words[0] == "quit":
            break
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
