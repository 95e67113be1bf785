"""Output for terminals and pipes (cli/output.py): colour only on a terminal and never with NO_COLOR, kubectl's
`-o name`, and the --quiet stream that leaves out `note:` lines."""
from __future__ import annotations

import io

import pytest

from instancetype_webhook.cli.output import Quiet, resource_name, use_colour
from tests.kit.cli import run_cli


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "no_color", "expected"), [
    (Terminal(), None, True),
    (Terminal(), "", True),  # no-color.org: set *and* not empty
    (Terminal(), "1", False),
    (io.StringIO(), None, False),
    (object(), None, False),  # no isatty at all
])
def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch, stream, no_color, expected):
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert use_colour(stream) is expected


@pytest.mark.parametrize(("obj", "name"), [
    ({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web"}},
     "virtualmachine.kubevirt.io/web"),
    ({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
      "metadata": {"name": "u1.small"}}, "virtualmachineclusterinstancetype.instancetype.kubevirt.io/u1.small"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "disk"}},
     "persistentvolumeclaim/disk"),
    ({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": None}, "virtualmachine.kubevirt.io/"),
])
def test_resource_name_is_kubectls_o_name(obj, name):
    assert resource_name(obj) == name


def test_quiet_drops_whole_note_lines_written_in_pieces():
    inner = io.StringIO()
    quiet = Quiet(inner)
    for piece in ("no", "te: dropped", "\n", "warning: ", "kept\nnote", ": also dropped\nlast"):
        quiet.write(piece)
    assert inner.getvalue() == "warning: kept\n"
    quiet.flush()  # a last line without its newline still shows
    assert inner.getvalue() == "warning: kept\nlast"


def test_expand_o_name_prints_the_vms_name_only():
    code, out, err = run_cli("expand", "-f", "examples/vm.json", "-o", "name")
    assert (code, out, err) == (0, "virtualmachine.kubevirt.io/fedora-preview\n", "")


def test_diff_through_a_pipe_has_no_colour():
    code, out, _ = run_cli("expand", "-f", "examples/vm.json", "--diff", env={"NO_COLOR": ""})
    assert code == 0 and "# unified diff" in out
    assert "\033[" not in out
