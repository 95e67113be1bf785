"""Start to ready of the container image with the bundled catalogue (target: under 2 s).

    python3 bench/image_start.py [--image REF] [--runs N] [--smoke]

Runs the image as the chart does (read-only root, user 65532, no capabilities, /tmp a tmpfs) with its default
command (`serve --dev`: a throw-away certificate, the bundled catalogue) and polls /readyz every 10 ms.
Prints, per run and as medians: from `podman run` to ready (what a rollout waits for, container creation
included) and from the container's start (podman's StartedAt) to ready (the server's own start-up).
Exit status 1 when the median from the container's start is above the target. Needs podman (make image first).
`--smoke`: one run, and the exit status says only that it ran (a missed target is printed as MISSED, not failed).
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import socket
import ssl
import statistics
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0


def load_build_tool():  # tools/image/build.py: the engine, with the containers.conf it needs here
    spec = importlib.util.spec_from_file_location("image_build", ROOT / "tools" / "image" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["image_build"] = module
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready(port: int, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=context, timeout=1) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError):
        return False


def started_at(engine, name: str) -> float:
    stamp = engine.run("inspect", "--format", "{{.State.StartedAt.UnixNano}}", name).stdout.strip()
    return int(stamp) / 1e9


def one_run(engine, image: str, index: int) -> tuple[float, float]:
    port, name = free_port(), f"itw-bench-start-{index}-{free_port()}"
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    args = ["run", "--detach", "--name", name, "--read-only", "--read-only-tmpfs=false", "--user", "65532:65532",
            "--cap-drop=ALL", "--security-opt", "no-new-privileges", "--mount", "type=tmpfs,destination=/tmp",
            "--publish", f"127.0.0.1:{port}:8443", image]
    wall0 = time.time()
    try:
        engine.run(*args)
        deadline = time.time() + 60
        while not ready(port, context):
            if time.time() > deadline:
                raise SystemExit(f"{name}: not ready after 60 s")
            time.sleep(0.01)
        wall1 = time.time()
        return wall1 - wall0, wall1 - started_at(engine, name)
    finally:
        engine.run("rm", "--force", "--time", "0", name, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="localhost/instancetype-webhook:latest")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one run; exit 0 even when the target is missed")
    args = parser.parse_args()
    if args.smoke:
        args.runs = 1
    engine = load_build_tool().find_engine()
    runs = [one_run(engine, args.image, i) for i in range(args.runs)]
    for i, (from_run, from_start) in enumerate(runs, 1):
        print(f"run {i}: podman run to ready {from_run:.2f} s, container start to ready {from_start:.2f} s")
    median_run = statistics.median(r for r, _ in runs)
    median_start = statistics.median(s for _, s in runs)
    met = median_start <= TARGET_S
    print(f"median of {len(runs)} ({dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC): podman run to ready "
          f"{median_run:.2f} s, container start to ready {median_start:.2f} s (target {TARGET_S:.0f} s: "
          f"{'met' if met else 'MISSED'})")
    return 0 if met or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
