"""tests/kit/leaks.py: what a test module leaves running is found, named, and waited for within the grace."""
from __future__ import annotations

import subprocess
import sys
import threading

from tests.kit.leaks import child_processes, left_behind, running_threads
from tests.kit.shared_data import ROOT


def test_a_thread_still_running_is_named_and_one_that_ends_is_not() -> None:
    threads, children = running_threads(), child_processes()
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, name="left-on-purpose", daemon=True)
    worker.start()
    try:
        assert [entry for entry in left_behind(threads, children, grace=0.2) if "left-on-purpose" in entry]
    finally:
        stop.set()
        worker.join(5)
    assert left_behind(threads, children, grace=0.2) == []


def test_a_thread_ending_within_the_grace_is_waited_for() -> None:
    threads, children = running_threads(), child_processes()
    threading.Timer(0.3, lambda: None).start()
    assert left_behind(threads, children, grace=5) == []


def test_a_child_process_not_waited_for_is_named() -> None:
    threads, children = running_threads(), child_processes()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert [entry for entry in left_behind(threads, children, grace=0.2) if f"process {child.pid}:" in entry]
    finally:
        child.kill()
        child.wait(10)
    assert left_behind(threads, children, grace=0.2) == []


THREAD_RAISES = '''
import threading

def test_a_thread_raises():
    worker = threading.Thread(target=lambda: 1 / 0)
    worker.start()
    worker.join()
'''


def test_an_exception_in_a_background_thread_fails_the_test(tmp_path) -> None:
    """pyproject.toml turns pytest's unhandled-thread-exception warning into an error."""
    (tmp_path / "test_sample.py").write_text(THREAD_RAISES)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           str(tmp_path / "test_sample.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "PytestUnhandledThreadExceptionWarning" in done.stdout and "ZeroDivisionError" in done.stdout
