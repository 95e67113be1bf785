"""The benchmark, in one command: our webhook against the bare-server floor, side by side.

    python bench/run.py              # full run (about 3 minutes on 2 cores)
    python bench/run.py --quick      # a few-second smoke of the harness (what CI runs)

On loopback it starts the floor (bench/floor_app.py) and our service (one uvicorn worker, policy
expand, the bundled catalogue), over plain HTTP and TLS; drives the floor, /mutate and /validate in
turn with wrk (one thread, the same Lua script POSTing the same AdmissionReview) at each concurrency,
alternating them over several rounds and keeping each one's median round;
prints requests/s, p50, p99 and the ratios ours/floor; runs the library benchmark
(bench/expand_bench.py) and the memory/start-up check (bench/memory.py); and writes everything,
with the machine's description, as JSON to bench/results/.

With two or more CPUs, the servers are pinned to the first and wrk to the second, so that the
load generator and the server under test do not share a core.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]  # bench/, repo root

import memory  # noqa: E402  (after the sys.path set-up)
import report  # noqa: E402  (after the sys.path set-up)
from answers import check_answer  # noqa: E402  (after the sys.path set-up)
from load import LoadError, run_wrk, wrk_path, wrk_version  # noqa: E402  (after the sys.path set-up)
from machine import describe  # noqa: E402  (after the sys.path set-up)
from review import INSTANCETYPE, PREFERENCE, write_review  # noqa: E402  (after the sys.path set-up)
from servers import Server  # noqa: E402  (after the sys.path set-up)
from targets import BENCH, ENDPOINTS, PY, TRANSPORTS, Endpoint, Tls, build_server  # noqa: E402  (after the sys.path set-up)
from tlsfiles import write_self_signed  # noqa: E402  (after the sys.path set-up)

LIBRARY_BENCH = BENCH / "expand_bench.py"
RESULTS_DIR = BENCH / "results"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Webhook throughput/latency against the floor, memory and start-up.")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: one 1 s round per row, concurrency 16 only, 200 generated objects")
    parser.add_argument("--duration", type=int, default=3, help="seconds of load per round (default 3)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds per row, endpoints alternating; the median round is reported (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of unmeasured load before each row")
    parser.add_argument("--concurrency", default="1,16", help="comma-separated connection counts")
    parser.add_argument("--transports", default=",".join(TRANSPORTS), help="plain,tls")
    parser.add_argument("--targets", default="floor,mutate,validate",
                        help="rows to drive; add `framework` for the FastAPI-only floor (diagnostic)")
    parser.add_argument("--objects", type=int, default=10_000, help="generated objects for the memory check")
    parser.add_argument("--skip-library", action="store_true", help="do not run bench/expand_bench.py")
    parser.add_argument("--skip-memory", action="store_true", help="do not run the memory/start-up check")
    parser.add_argument("--no-pin", action="store_true", help="do not pin servers and wrk to separate CPUs")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    if args.quick:
        args.duration, args.rounds, args.warmup, args.concurrency = 1, 1, 0, "16"
        args.objects = min(args.objects, 200)  # the memory check's figures then mean little: smoke only
    args.concurrency = [int(c) for c in args.concurrency.split(",") if c]
    args.transports = [t for t in args.transports.split(",") if t]
    args.targets = [t for t in args.targets.split(",") if t]
    return args


def cpu_split(pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """(server CPUs, wrk CPUs): the first allowed CPU for servers, the second for wrk."""
    cpus = sorted(os.sched_getaffinity(0))
    if not pin or len(cpus) < 2:
        return None, None
    return {cpus[0]}, {cpus[1]}


def start_servers(stack: ExitStack, endpoints: list[Endpoint], transports: list[str], tls: Tls,
                  logs: Path, cpus: set[int] | None) -> dict[tuple[str, str], Server | str]:
    """Every server the endpoints need, per transport, started together; a value is the error text if one failed."""
    wanted = [(kind, transport) for transport in transports for kind in dict.fromkeys(e.server for e in endpoints)]
    started = {key: stack.enter_context(build_server(*key, tls, logs, cpus)) for key in wanted}
    servers: dict[tuple[str, str], Server | str] = {}
    for key, server in started.items():
        try:
            server.wait_ready()
            servers[key] = server
        except RuntimeError as exc:
            servers[key] = str(exc)
    return servers


def measure(endpoint: Endpoint, server: Server | str, transport: str, concurrency: int, body: bytes,
            body_file: Path, args: argparse.Namespace, wrk_cpus: set[int] | None, warmup: int) -> dict[str, Any]:
    """One timed wrk run of one endpoint (after checking its answer and an optional warm-up)."""
    row: dict[str, Any] = {"target": endpoint.target, "path": endpoint.path, "transport": transport,
                           "concurrency": concurrency}
    if isinstance(server, str):
        return {**row, "error": f"server did not start: {server}"}
    url = server.base_url + endpoint.path
    answer = check_answer(url, body, endpoint.want_patch)
    row["answer"] = answer
    if answer["problems"]:
        return {**row, "error": "; ".join(answer["problems"])}
    try:
        if warmup:
            run_wrk(url, body_file, concurrency, warmup, wrk_cpus)
        cpu_before = server.cpu_seconds()
        row.update(run_wrk(url, body_file, concurrency, args.duration, wrk_cpus))
        # Share of one core the server got: near 1.0 means it was the bottleneck, as it should be;
        # well below with a low wrk share means something else on the machine took its core.
        cpu = server.cpu_seconds() - cpu_before
        row["server_cpu_share"] = round(cpu / row["duration_s"], 3)
        # CPU time per answered request: steadier than req/s when neighbours take part of the core.
        row["server_cpu_us_per_request"] = round(cpu / row["requests"] * 1e6, 1) if row["requests"] else None
    except (LoadError, subprocess.TimeoutExpired) as exc:
        row["error"] = str(exc)
    return row


def median_row(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The round with the median requests/s stands for the row; every round is kept under `rounds`."""
    failed = [r for r in rounds if r.get("error")]
    if failed:
        return failed[0]
    ordered = sorted(rounds, key=lambda r: r["requests_per_s"])
    row = dict(ordered[len(ordered) // 2])
    row["error_count"] = sum(r["error_count"] for r in rounds)
    row["rounds"] = [{key: r[key] for key in ("requests_per_s", "latency_ms", "error_count", "server_cpu_share",
                                               "server_cpu_us_per_request", "wrk_cpu_share")} for r in rounds]
    return row


def drive_group(endpoints: list[Endpoint], servers: dict, transport: str, concurrency: int, body: bytes,
                body_file: Path, args: argparse.Namespace, wrk_cpus: set[int] | None) -> list[dict[str, Any]]:
    """Alternate the endpoints round by round, so that a noisy neighbour hits all of them alike."""
    rounds: dict[str, list[dict[str, Any]]] = {e.target: [] for e in endpoints}
    for index in range(args.rounds):
        for endpoint in endpoints:
            server = servers[(endpoint.server, transport)]
            rounds[endpoint.target].append(measure(endpoint, server, transport, concurrency, body, body_file,
                                                   args, wrk_cpus, args.warmup if index == 0 else 0))
    rows = [median_row(rounds[e.target]) for e in endpoints]
    for row in rows:
        print(f"  {transport:<5} c{concurrency:<3} {row['target']:<9} {row.get('requests_per_s', 0):9.0f} req/s"
              + (f"  ERROR {row['error']}" if row.get("error") else ""), flush=True)
    return rows


def library_benchmark(quick: bool) -> dict[str, Any]:
    """Run bench/expand_bench.py (the expansion core's own benchmark) and keep its figures."""
    if not LIBRARY_BENCH.exists():
        return {"error": f"{LIBRARY_BENCH.name} is not there"}
    help_text = subprocess.run([PY, str(LIBRARY_BENCH), "--help"], capture_output=True, text=True,
                               timeout=60, check=False, cwd=BENCH.parent).stdout
    argv = [PY, str(LIBRARY_BENCH)] + (["--rounds", "3"] if quick and "--rounds" in help_text else [])
    started = time.monotonic()
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False, cwd=BENCH.parent)
    out: dict[str, Any] = {"argv": argv[1:], "exit_status": result.returncode,
                           "seconds": round(time.monotonic() - started, 2), "stdout": result.stdout[-4000:]}
    out.update(library_figures(result.stdout))
    if result.returncode != 0:
        out["error"] = result.stderr.strip()[-2000:] or f"exit status {result.returncode}"
    elif "cases_per_second" not in out:
        out["error"] = "no `throughput: N cases/second` line in its output"
    return out


def library_figures(text: str) -> dict[str, float]:
    """The figures expand_bench.py prints: `throughput: N cases/second`, `mean: X ms per expansion`."""
    figures: dict[str, float] = {}
    if match := re.search(r"throughput:\s*([\d,.]+)\s*cases/second", text):
        figures["cases_per_second"] = float(match.group(1).replace(",", ""))
    if match := re.search(r"mean:\s*([\d.]+)\s*ms per expansion", text):
        figures["mean_ms_per_expansion"] = float(match.group(1))
    if match := re.search(r"median round:\s*([\d.]+)\s*ms", text):
        figures["median_round_ms_per_expansion"] = float(match.group(1))
    if match := re.search(r"best round:\s*([\d.]+)\s*ms", text):
        figures["best_round_ms_per_expansion"] = float(match.group(1))
    return figures


def run(args: argparse.Namespace) -> dict[str, Any]:
    endpoints = [e for e in ENDPOINTS if e.target in args.targets]
    server_cpus, wrk_cpus = cpu_split(not args.no_pin)
    results: dict[str, Any] = {
        "machine": describe(wrk_version()),
        "settings": {"quick": args.quick, "duration_s": args.duration, "rounds": args.rounds,
                     "warmup_s": args.warmup,
                     "concurrency": args.concurrency, "transports": args.transports, "wrk_threads": 1,
                     "server_workers": 1, "policy": "expand", "catalog": "bundled",
                     "review": f"VM CREATE, cluster instance type {INSTANCETYPE} + cluster preference {PREFERENCE}",
                     "server_cpus": sorted(server_cpus or []), "wrk_cpus": sorted(wrk_cpus or [])},
        "runs": [],
    }
    phases: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        tls = write_self_signed(workdir)
        body_file = workdir / "review.json"
        body = write_review(body_file)
        results["settings"]["review_bytes"] = len(body)
        clock = time.monotonic()
        servers = start_servers(stack, endpoints, args.transports, tls, workdir, server_cpus)
        phases["start_servers"] = time.monotonic() - clock
        results["servers"] = {f"{kind}-{transport}": (s if isinstance(s, str)
                                                      else {"ready_s": round(s.ready_s or 0, 3)})
                              for (kind, transport), s in servers.items()}
        for transport in args.transports:
            for concurrency in args.concurrency:
                results["runs"].extend(drive_group(endpoints, servers, transport, concurrency, body, body_file,
                                                   args, wrk_cpus))
        stack.close()
        phases["load"] = time.monotonic() - clock - phases["start_servers"]
        clock = time.monotonic()
        if not args.skip_memory:
            print(f"  memory and start-up check ({args.objects} generated objects) ...", flush=True)
            try:
                results["memory"] = memory.measure(workdir, tls, args.objects, server_cpus,
                                                   requests=20 if args.quick else memory.BURST,
                                                   starts=1 if args.quick else 3)
            except RuntimeError as exc:
                results["memory"] = {"error": str(exc)}
        phases["memory"] = time.monotonic() - clock
    if not args.skip_library:
        print("  library benchmark (bench/expand_bench.py) ...", flush=True)
        clock = time.monotonic()
        results["library"] = library_benchmark(args.quick)
        phases["library"] = time.monotonic() - clock
    results["phase_seconds"] = {name: round(value, 2) for name, value in phases.items()}
    report.add_ratios(results["runs"])
    results["targets"] = report.verdicts(results["runs"], results.get("memory"))
    return results


def failures(results: dict[str, Any]) -> list[str]:
    """Harness failures (not target misses): rows without figures, errors, a failed check."""
    found = [f"{r['transport']} c{r['concurrency']} {r['target']}: "
             f"{r.get('error') or str(r.get('error_count')) + ' errors'}"
             for r in results["runs"] if r.get("error") or r.get("error_count")]
    for part in ("memory", "library"):
        if isinstance(results.get(part), dict) and results[part].get("error"):
            found.append(f"{part}: {results[part]['error']}")
    return found


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_summary(results: dict[str, Any], path: Path) -> None:
    machine = results["machine"]
    print(f"\n{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, {machine['date']}")
    print(report.table(results["runs"]))
    mem = results.get("memory") or {}
    for name in ("bundled", "generated"):
        part = mem.get(name)
        if part:
            samples = part.get("ready_s_samples")
            print(f"memory {name:<9}: {part.get('objects', 'bundled')} objects, ready {part['ready_s']:.2f} s"
                  + (f" (median of {', '.join(f'{x:.2f}' for x in samples)})" if samples and len(samples) > 1 else "")
                  + ", "
                  f"RSS {part['rss_ready_bytes'] / report.MiB:.1f} MiB ready, "
                  f"{part['rss_after_requests_bytes'] / report.MiB:.1f} MiB after {part['requests']} requests")
    library = results.get("library")
    if library:
        print(f"library benchmark (expand_bench.py): {_num(library.get('cases_per_second'), ',.0f')} cases/s, "
              f"mean {_num(library.get('mean_ms_per_expansion'), '.4f')} ms per expansion"
              + (f"; ERROR {library['error']}" if library.get("error") else ""))
    starved = [r for r in results["runs"] if (r.get("server_cpu_share") or 1.0) < 0.8]
    if starved:
        low = min(r["server_cpu_share"] for r in starved)
        print(f"WARNING: in {len(starved)} rows the server got less than 0.8 of its core (lowest {low:.2f}): "
              f"something else was using the machine; absolute figures understate, compare the ratios")
    print("targets:")
    print(report.verdict_lines(results["targets"]))
    print(f"results: {path}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        wrk_path()
    except LoadError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    results = run(args)
    path = report.write_results(results, args.results_dir, "quick" if args.quick else "full")
    print_summary(results, path)
    problems = failures(results)
    for problem in problems:
        print(f"bench: harness problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
