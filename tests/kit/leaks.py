"""Nothing a test starts outlives it: threads and child processes are checked at the end of each test module.

A module's servers, sources and subprocesses may live as long as its module-scoped fixtures; when the
module's last fixture has been torn down, every thread and child process it started must be gone (they
are given GRACE seconds to finish). One that is not fails the module's last test at teardown, naming it:
a thread still running after its test would log into a closed capture, or raise into the next test.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

GRACE = 10.0  # seconds: a stopped server's threads and a killed child's exit take a moment
# Helpers a library keeps for the life of the process, by design (idle, daemon): not a test's leftovers.
PROCESS_WIDE = frozenset({"tqdm_monitor"})  # tqdm's refresh monitor, started by the first progress bar


def stop_process(proc: subprocess.Popen[bytes], grace: float = 15) -> None:
    """End a child a test started: SIGTERM, then SIGKILL after `grace` seconds, and reap it."""
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def running_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate()
            if t is not threading.main_thread() and t.is_alive() and t.name not in PROCESS_WIDE}


def child_processes() -> set[int]:
    """This process's direct children, zombies included (a child nobody waited for is left behind too)."""
    pids: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
        try:
            pids.update(int(pid) for pid in (task / "children").read_text().split())
        except OSError:  # the thread ended meanwhile, or no /proc (not Linux)
            continue
    return pids


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def left_behind(threads: set[threading.Thread], children: set[int], grace: float = GRACE) -> list[str]:
    """What is still running `grace` seconds on, of what was not running before (`threads`, `children`)."""
    deadline = time.monotonic() + grace
    while True:
        new_threads = running_threads() - threads
        for thread in new_threads:
            thread.join(max(deadline - time.monotonic(), 0) / max(len(new_threads), 1))
        new_threads = running_threads() - threads
        new_children = child_processes() - children
        if not (new_threads or new_children) or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    return sorted([f"thread {t.name!r} ({getattr(t, '_target', None)!r})" for t in new_threads]
                  + [f"process {pid}: {_command(pid)}" for pid in new_children])


@pytest.fixture(scope="module", autouse=True)
def nothing_outlives_its_module(request: pytest.FixtureRequest) -> Iterator[None]:
    threads, children = running_threads(), child_processes()
    yield
    left = left_behind(threads, children)
    if left:
        pytest.fail(f"{request.node.nodeid} left running after its tests: " + "; ".join(left), pytrace=False)
