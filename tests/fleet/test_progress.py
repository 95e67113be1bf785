"""instancetype_webhook.fleet.progress: a tqdm bar on a terminal (or when asked), nothing on a pipe."""
from __future__ import annotations

import io

from instancetype_webhook.fleet.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_nothing():
    stream = io.StringIO()
    bar = Progress("audit", stream)
    assert bar.bar is None
    bar.total(3)
    bar.tick()
    bar.close()
    assert stream.getvalue() == ""


def test_a_terminal_gets_a_bar_that_counts_vms():
    stream = Terminal()
    bar = Progress("audit", stream)
    assert bar.bar is not None
    bar.total(3)
    bar.tick()
    bar.tick("a finding")  # used as an on_vm callback: the finding is ignored
    assert (bar.bar.total, bar.bar.n, bar.bar.unit) == (3, 2, "vm")
    bar.close()
    assert "audit" in stream.getvalue()


def test_enabled_overrides_the_stream():
    forced = Progress("sweep", io.StringIO(), enabled=True)
    assert forced.bar is not None
    forced.close()
    assert Progress("sweep", Terminal(), enabled=False).bar is None


def test_the_default_stream_is_stderr(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    bar = Progress("audit")
    assert bar.stream is err and bar.bar is None
