"""Benchmark (not a test): expansions per second over every conformance corpus input.

Loads every case of the corpus, writes the inputs as JSON lines, reads them back (as a service
would receive them), then expands each many times and prints cases/second and the mean
milliseconds per expansion. Upstream's Go `Expand` takes about 0.37 ms per VM on this machine class.

    .venv/bin/python bench/expand_bench.py [--corpus DIR] [--rounds N] [--profile]
"""
from __future__ import annotations

import sys
from pathlib import Path

# bench/ holds modules (e.g. profile.py) that would shadow the standard library: run from the repo root.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402  (after the sys.path set-up)
import cProfile  # noqa: E402  (after the sys.path set-up)
import json  # noqa: E402  (after the sys.path set-up)
import pstats  # noqa: E402  (after the sys.path set-up)
import tempfile  # noqa: E402  (after the sys.path set-up)
import time  # noqa: E402  (after the sys.path set-up)

import orjson  # noqa: E402  (after the sys.path set-up)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from instancetype_webhook.kubevirt.causes import ExpandError  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.kubevirt.expand import expand  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.kubevirt.source import InMemorySource  # noqa: E402  (after the sys.path set-up)

OBJECT_KEYS = ("instancetypes", "clusterInstancetypes", "preferences", "clusterPreferences", "controllerRevisions")


def write_jsonl(corpus: Path, out: Path) -> int:
    count = 0
    with out.open("wb") as fh:
        for path in sorted(corpus.glob("*.json")):
            case = json.loads(path.read_text())
            fh.write(orjson.dumps(case["input"]) + b"\n")
            count += 1
    return count


def read_jsonl(path: Path) -> list[tuple[dict, InMemorySource]]:
    work = []
    for line in path.read_bytes().splitlines():
        data = orjson.loads(line)
        vm = data["vm"]
        ns = (vm.get("metadata") or {}).get("namespace") or "default"
        objects = [obj for key in OBJECT_KEYS for obj in data.get(key) or []]
        work.append((vm, InMemorySource(objects, default_namespace=ns)))
    return work


def expand_all(work: list[tuple[dict, InMemorySource]]) -> int:
    failures = 0
    for vm, source in work:
        try:
            expand(vm, source)
        except ExpandError:
            failures += 1
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(ROOT / "tests" / "data" / "shared" / "conformance"))
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of one run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        jsonl = Path(tmp) / "inputs.jsonl"
        count = write_jsonl(Path(args.corpus), jsonl)
        work = read_jsonl(jsonl)
    failures = expand_all(work)  # warm-up (caches, imports)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(max(args.rounds // 10, 1)):
            expand_all(work)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    rounds: list[float] = []
    start_all = time.perf_counter()
    for _ in range(args.rounds):
        start = time.perf_counter()
        expand_all(work)
        rounds.append(time.perf_counter() - start)
    total = time.perf_counter() - start_all
    best, median = min(rounds), sorted(rounds)[len(rounds) // 2]
    expansions = args.rounds * count
    print(f"cases: {count} ({failures} expected rejections), rounds: {args.rounds}")
    print(f"throughput: {expansions / total:,.0f} cases/second")
    print(f"mean: {1000 * total / expansions:.4f} ms per expansion "
          f"(median round: {1000 * median / count:.4f} ms, best round: {1000 * best / count:.4f} ms)")


if __name__ == "__main__":
    main()
