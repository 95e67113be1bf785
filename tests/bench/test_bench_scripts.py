"""Every script in bench/ with a `__main__` runs, at its smallest size: exit status 0 and output of the shape it
promises (a JSON document, a results line, a table header). Nothing here asserts a speed.

The scripts that finish on their own (stages, expand_bench, volume_cache_memory, cluster_start, memory, soak,
hotspots, handler_cost, image_start) are all started at once when the module begins, each in its own subprocess
with its output in a file, and each test waits for its own (a deadline from its start): their server starts and
imports overlap instead of adding up. The server scripts (floor_app, framework_app, plain_server, fake_cluster) are
started on a free loopback port, asked one request, and stopped, meanwhile. Covered elsewhere and not repeated here:
`bench/run.py --quick` (tests/bench/test_bench_smoke.py) and `bench/fleet.py` (tests/bench/test_fleet_bench_smoke.py).

Tools the machine may lack skip with the install named: wrk and py-spy (hotspots), podman and a built image
(image_start: `make image` tags localhost/instancetype-webhook:latest; an image the image tests tagged does too).
"""
from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest

from tests.kit.leaks import stop_process
from tests.kit.needs import need_command, skip_missing
from tests.kit.server import free_port, launch
from tests.kit.shared_data import CONFORMANCE, ROOT

BENCH = ROOT / "bench"
PY = sys.executable
ENV = {"PYTHONPATH": str(ROOT)}  # this checkout's package, whatever the virtualenv has installed
DEADLINE = 150.0  # seconds from a script's start: a guard against a hang, far above a smoke's few seconds
IMAGE = "localhost/instancetype-webhook"
WRK_INSTALL = "apt-get install -y wrk (.ci/run installs it)"
PY_SPY_INSTALL = "make install (py-spy is in the `test` extra)"
PODMAN_INSTALL = "apt-get install -y podman runc slirp4netns (.ci/run installs it)"


def py_spy() -> str | None:
    """Where bench/hotspots.py finds py-spy: on PATH or beside this Python."""
    beside = Path(PY).parent / "py-spy"
    return shutil.which("py-spy") or (str(beside) if beside.exists() else None)


def built_image() -> str | None:
    """`make image`'s tag if it exists, else the newest image of that name (e.g. one the image tests tagged)."""
    podman = shutil.which("podman")
    if podman is None:
        return None
    if subprocess.run([podman, "image", "exists", f"{IMAGE}:latest"], capture_output=True).returncode == 0:
        return f"{IMAGE}:latest"
    listed = subprocess.run([podman, "images", "--filter", f"reference={IMAGE}", "--format", "{{.ID}}"],
                            capture_output=True, text=True)
    ids = listed.stdout.split() if listed.returncode == 0 else []
    return ids[0] if ids else None  # podman lists the newest first


@dataclass
class Job:
    """One bench script running in the background, its output in files."""

    name: str
    argv: list[str]
    proc: subprocess.Popen
    stdout: Path
    stderr: Path
    started: float

    def result(self) -> tuple[str, str]:
        """(stdout, stderr) once it exited with status 0; fails with its output otherwise."""
        try:
            self.proc.wait(max(1.0, self.started + DEADLINE - time.monotonic()))
        except subprocess.TimeoutExpired:
            stop_process(self.proc, grace=5)
            pytest.fail(f"{self.name}: still running after {DEADLINE:g} s\n{self.output()}")
        if self.proc.returncode != 0:
            pytest.fail(f"{self.name}: exit status {self.proc.returncode}\n{self.output()}")
        return self.stdout.read_text(), self.stderr.read_text()

    def output(self) -> str:
        return (f"argv: {self.argv}\nstdout:\n{self.stdout.read_text()[-4000:]}\n"
                f"stderr:\n{self.stderr.read_text()[-4000:]}")


@dataclass
class Batch:
    jobs: dict[str, Job]
    work: Path
    image: str | None

    def result(self, name: str) -> tuple[str, str]:
        return self.jobs[name].result()


def _jobs(work: Path, image: str | None) -> dict[str, list[str]]:
    """Script -> its smallest arguments, for the scripts whose tools are here."""
    jobs = {
        "stages": ["--number", "5", "--json"],
        "expand_bench": ["--rounds", "1"],
        "volume_cache_memory": ["--count", "10"],
        "cluster_start": ["--objects", "20", "--starts", "1"],
        "memory": ["--quick"],
        "soak": ["--duration", "2", "--rate", "20", "--workers", "2", "--json-out", str(work / "soak.json")],
    }
    if shutil.which("wrk") and py_spy():
        jobs["hotspots"] = ["--quick", "--concurrency", "2", "--top", "5"]
    if shutil.which("wrk"):
        jobs["handler_cost"] = ["--quick", "--json"]
    if image:
        jobs["image_start"] = ["--smoke", "--image", image]
    return jobs


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Batch]:
    work = tmp_path_factory.mktemp("bench-scripts")
    image = built_image()
    jobs: dict[str, Job] = {}
    try:
        for name, args in _jobs(work, image).items():
            argv = [PY, str(BENCH / f"{name}.py"), *args]
            out, err = work / f"{name}.out", work / f"{name}.err"
            with out.open("wb") as stdout, err.open("wb") as stderr:
                proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                        env={**os.environ, **ENV})
            jobs[name] = Job(name, argv, proc, out, err, time.monotonic())
        yield Batch(jobs, work, image)
    finally:
        for job in jobs.values():
            if job.proc.poll() is None:
                stop_process(job.proc, grace=5)


def _review() -> bytes:
    """The benchmark's review (bench/review.py), as the scripts send it."""
    done = subprocess.run([PY, "-c", "import sys, orjson; from review import admission_review, typical_vm; "
                                     "sys.stdout.buffer.write(orjson.dumps(admission_review(typical_vm())))"],
                          cwd=BENCH, capture_output=True, timeout=60, check=True, env={**os.environ, **ENV})
    return done.stdout


@pytest.fixture(scope="module")
def review() -> tuple[bytes, str]:
    body = _review()
    return body, orjson.loads(body)["request"]["uid"]


# -- the server scripts: start on a free loopback port, one request, stop -----------------------------------------

def _one_review(script: str, path: str, review: tuple[bytes, str], tmp_path: Path, *args: str) -> dict:
    body, uid = review
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        return httpx.get(url + "/readyz", timeout=1).status_code == 200

    with launch(tmp_path, ["--host", "127.0.0.1", "--port", str(port), *args], ready, env=ENV, timeout=60,
                name=script, program=[PY, str(BENCH / f"{script}.py")]) as (proc, log):
        answer = httpx.post(url + path, content=body, headers={"content-type": "application/json"}, timeout=30)
        assert answer.status_code == 200, (answer.status_code, answer.text, log.read_text())
        document = answer.json()
    assert proc.poll() is not None  # stopped
    assert document["kind"] == "AdmissionReview" and document["response"]["uid"] == uid
    assert document["response"]["allowed"] is True
    return document


def test_floor_app_answers_a_review(batch: Batch, review: tuple[bytes, str], tmp_path: Path) -> None:
    _one_review("floor_app", "/", review, tmp_path)


def test_framework_app_answers_a_review(batch: Batch, review: tuple[bytes, str], tmp_path: Path) -> None:
    _one_review("framework_app", "/mutate", review, tmp_path)


def test_plain_server_answers_a_review_with_a_patch(batch: Batch, review: tuple[bytes, str], tmp_path: Path) -> None:
    document = _one_review("plain_server", "/mutate", review, tmp_path, "--metrics-port", str(free_port()))
    assert document["response"]["patchType"] == "JSONPatch" and document["response"]["patch"]


def test_fake_cluster_serves_its_vms_and_takes_commands(batch: Batch) -> None:
    port = free_port()
    proc = subprocess.Popen([PY, str(BENCH / "fake_cluster.py"), "--objects", "10", "--vms", "5", "--port", str(port)],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **ENV})
    try:
        assert proc.stdout is not None
        readable, _, _ = select.select([proc.stdout], [], [], 60)
        assert readable, "fake_cluster printed nothing in 60 s"
        info = json.loads(proc.stdout.readline())
        assert info["port"] == port
        assert info["kubeconfig"]["clusters"][0]["cluster"]["server"] == f"http://127.0.0.1:{port}"
        token = info["kubeconfig"]["users"][0]["user"]["token"]
        vms = httpx.get(f"http://127.0.0.1:{port}/apis/kubevirt.io/v1/virtualmachines",
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert vms.status_code == 200, vms.text
        assert len(vms.json()["items"]) == 5
        out, err = proc.communicate("stats\nquit\n", timeout=30)
    finally:
        if proc.poll() is None:
            stop_process(proc, grace=5)
    assert proc.returncode == 0, err
    stats = json.loads(out.splitlines()[0])
    assert stats["requests"].get("GET", 0) >= 1 and stats["writes"] == 0


# -- the scripts that finish on their own -------------------------------------------------------------------------

def test_stages_times_every_stage(batch: Batch) -> None:
    out, _ = batch.result("stages")
    figures = json.loads(out)
    for row in ("parse_review(body)", "flatten (expand + provenance)", "mutate handler (whole)",
                "validate handler (whole)", "mutate handler (UPDATE resizing a running VM: planned)",
                "ASGI floor (floor_app.py)", "ASGI /mutate (AdmissionApp)", "review_answer /mutate"):
        assert row in figures, row
    assert all(isinstance(us, float) and us > 0 for us in figures.values()), figures


def test_expand_bench_prints_its_three_lines(batch: Batch) -> None:
    out, _ = batch.result("expand_bench")
    cases = re.search(r"^cases: (\d+) \((\d+) expected rejections\), rounds: 1$", out, re.M)
    assert cases, out
    assert int(cases[1]) == len(list(CONFORMANCE.glob("*.json"))) > int(cases[2])
    assert re.search(r"^throughput: [\d,]+ cases/second$", out, re.M), out
    assert re.search(r"^mean: [\d.]+ ms per expansion \(median round: [\d.]+ ms, best round: [\d.]+ ms\)$", out, re.M)


def test_volume_cache_memory_prints_a_line_per_kind(batch: Batch) -> None:
    out, _ = batch.result("volume_cache_memory")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["PersistentVolumeClaim", "DataVolume"], out
    for line in lines:
        assert re.search(r" 10 objects: +[\d.]+ MiB traced, +[\d.]+ KiB each \(\d+ B as JSON\); 100k would be", line)


def test_cluster_start_reports_stages_sync_and_server(batch: Batch) -> None:
    out, _ = batch.result("cluster_start")
    result = json.loads(out)
    assert result["objects"] == 20 and result["page"] > 0
    stages = result["stages"]
    assert sum(stages[kind]["objects"] for kind in stages) >= 20  # the catalogue and the 20 generated
    assert all(s["pages"] >= 1 and s["fetch_s"] >= 0 for s in stages.values())
    cached = result["stages_cache"]  # the list from the API server's cache: one answer per kind, every object
    assert set(cached) == set(stages) and all(s["pages"] == 1 for s in cached.values())
    assert {kind: s["objects"] for kind, s in cached.items()} == {kind: s["objects"] for kind, s in stages.items()}
    assert result["source_sync_s"] > 0
    server = result["server"]
    assert len(server["ready_s"]) == 1 and server["ready_s_median"] > 0 and server["rss_mib_ready"][0] > 10
    assert server["lists"]["cache"] >= 4  # the server's informers listed from the cache (the four kinds at least)
    assert len(result["load"]["before"]) == len(result["load"]["after"]) == 3


def test_memory_quick_reports_both_servers(batch: Batch) -> None:
    out, _ = batch.result("memory")
    result = json.loads(out)
    bundled, generated = result["bundled"], result["generated"]
    assert len(bundled["ready_s_samples"]) == 1
    assert generated["generated_objects"] == 100 and generated["objects"] > 100
    for figures in (bundled, generated):
        assert figures["ready_s"] > 0 and figures["rss_ready_bytes"] > 10 * 2**20
        assert figures["requests"] == figures["requests_ok"] == 20


def test_soak_short_run_has_no_errors(batch: Batch) -> None:
    out, err = batch.result("soak")
    figures = json.loads(out)
    assert figures == json.loads((batch.work / "soak.json").read_text())
    assert figures["requests"] == 40 and figures["errors"] == 0, figures["first_errors"]
    assert figures["server_alive"] is True and set(figures["by_kind"]) <= {
        "create", "update", "conflict", "missing", "validate", "instancetype", "pod", "delete", "bad"}
    assert 0 < figures["latency_ms"]["p50"] <= figures["latency_ms"]["max"]
    assert "soak: OK" in err


def test_hotspots_quick_prints_both_tables(batch: Batch) -> None:
    need_command("wrk", WRK_INSTALL)
    if py_spy() is None:
        need_command("py-spy", PY_SPY_INSTALL)
    out, _ = batch.result("hotspots")
    lines = out.splitlines()
    assert re.match(r"^/mutate c2: \d+ req/s under the profiler, p50 [\d.]+ ms, p99 [\d.]+ ms$", lines[0]), out
    headers = [i for i, line in enumerate(lines) if re.match(r"^(inclusive|self) \(\d+ samples; [\d.]+ ms CPU", line)]
    assert len(headers) == 2, out
    rows = [line for line in lines if re.match(r"^ +[\d.]+% +[\d.]+ ms  \S", line)]
    assert rows, out


def test_handler_cost_splits_a_review_between_the_handler_and_the_rest(batch: Batch) -> None:
    """The three servers answered (wrk saw no error, or the script fails) and the split adds up."""
    need_command("wrk", WRK_INSTALL)
    out, _ = batch.result("handler_cost")
    result = json.loads(out)
    median = result["median_us"]
    assert set(median) == {"shipped", "canned", "floor"} and all(v > 0 for v in median.values()), result
    assert result["handler_in_server_us"] == pytest.approx(median["shipped"] - median["canned"])
    assert result["around_handler_us"] == pytest.approx(median["canned"] - median["floor"])
    assert median["shipped"] > median["canned"], result  # flattening a VM costs more than handing an answer back
    assert result["compiled"] in ("pure Python", "unknown build") or result["compiled"].startswith("compiled"), result


def test_image_start_smoke_one_run(batch: Batch) -> None:
    need_command("podman", PODMAN_INSTALL)
    if batch.image is None:
        skip_missing(f"a built image {IMAGE}", "make image")
    out, _ = batch.result("image_start")
    assert re.search(r"^run 1: podman run to ready [\d.]+ s, container start to ready [\d.]+ s$", out, re.M), out
    assert re.search(r"^median of 1 \(.+ UTC\): .+ \(target 2 s: (met|MISSED)\)$", out, re.M), out
