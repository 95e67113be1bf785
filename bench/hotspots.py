"""Profile our service under load with py-spy and summarise where the time goes.

    python bench/hotspots.py [--endpoint mutate] [--seconds 10] [--warmup 2] [--concurrency 16]
    python bench/hotspots.py --quick   (1 s profiled after a 1 s warm-up: proves it runs)

Starts the plain-HTTP service (bench/plain_server.py), attaches `py-spy record --nonblocking` (so
the sampled process is not paused), drives the endpoint with wrk, and prints the functions with the
most samples: inclusive (the function and what it calls) and self (the function's own code), each
as a share of the samples and as milliseconds of CPU per request (share x sampled CPU time /
requests answered; py-spy drops the samples where the process sits idle). py-spy is a profiling tool, not a dependency:
`pip install py-spy` (it must be allowed to read the process, as root here).
"""
from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]  # bench/, repo root

from load import run_wrk  # noqa: E402  (after the sys.path set-up)
from review import write_review  # noqa: E402  (after the sys.path set-up)
from run import cpu_split  # noqa: E402  (after the sys.path set-up)
from servers import HOST, Server, free_port  # noqa: E402  (after the sys.path set-up)
from targets import BENCH, PY, ROOT  # noqa: E402  (after the sys.path set-up)


def py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(PY).parent / "py-spy")
    if not Path(found).exists():
        raise SystemExit("py-spy not found: pip install py-spy")
    return found


def frame_name(frame: str) -> str:
    """'func (path/to/file.py:123)' -> 'func (file.py)'; line numbers would split one function."""
    if " (" not in frame:
        return frame
    func, where = frame.split(" (", 1)
    path = where.rsplit(":", 1)[0].rstrip(")")
    for marker in ("site-packages/", "/work/main/", str(ROOT) + "/"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{func} ({path})"


def summarise(raw: str) -> tuple[int, collections.Counter, collections.Counter]:
    """(total samples, inclusive samples per function, self samples per function)."""
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [frame_name(f) for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        total += n
        for name in set(frames):
            inclusive[name] += n
        own[frames[-1]] += n
    return total, inclusive, own


def report(total: int, counts: collections.Counter, ms_per_request: float, top: int, title: str) -> str:
    lines = [f"{title} ({total} samples; {ms_per_request:.3f} ms CPU per request)"]
    for name, n in counts.most_common(top):
        share = n / total
        lines.append(f"  {share * 100:5.1f}%  {share * ms_per_request:7.3f} ms  {name}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description="py-spy profile of the webhook under wrk load")
    parser.add_argument("--endpoint", default="mutate", choices=("mutate", "validate"))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--output", type=Path, help="also keep the raw collapsed stacks here")
    parser.add_argument("--warmup", type=int, default=2, help="seconds of load before the profile")
    parser.add_argument("--quick", action="store_true", help="the smallest run: 1 s warm-up, 1 s profiled")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.warmup = 1, 1
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as tmp:
        workdir = Path(tmp)
        body_file = workdir / "review.json"
        write_review(body_file)
        port = free_port()
        argv = [PY, str(BENCH / "plain_server.py"), "--host", HOST, "--port", str(port)]
        server_cpus, wrk_cpus = cpu_split(True)
        with Server("profiled", argv, f"http://{HOST}:{port}", log_path=workdir / "server.log",
                    env={"PYTHONPATH": str(ROOT)}, cpus=server_cpus) as server:
            server.wait_ready()
            url = f"{server.base_url}/{args.endpoint}"
            run_wrk(url, body_file, args.concurrency, args.warmup, wrk_cpus)  # warm up
            raw_file = workdir / "stacks.txt"
            spy = subprocess.Popen([py_spy(), "record", "--nonblocking", "-r", str(args.rate), "-d",
                                    str(args.seconds + 2), "-f", "raw", "-o", str(raw_file), "-p",
                                    str(server.process.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
            figures = run_wrk(url, body_file, args.concurrency, args.seconds, wrk_cpus)
            spy.wait(timeout=args.seconds + 30)
            raw = raw_file.read_text()
    if args.output:
        args.output.write_text(raw)
    total, inclusive, own = summarise(raw)
    # py-spy keeps only samples where the process was running (not idle in epoll): total/rate is the
    # CPU time it used, shared over the requests it answered.
    ms_per_request = 1000.0 * total / args.rate / figures["requests"]
    print(f"/{args.endpoint} c{args.concurrency}: {figures['requests_per_s']:.0f} req/s under the profiler, "
          f"p50 {figures['latency_ms']['p50']} ms, p99 {figures['latency_ms']['p99']} ms")
    print(report(total, inclusive, ms_per_request, args.top, "inclusive"))
    print(report(total, own, ms_per_request, args.top, "self"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
