"""The flags and plumbing `audit` and `sweep` share (cli/fleet.py): the session opened from them, the serve
settings they stand for, the progress bar only on a terminal, the checks before the cluster is used."""
from __future__ import annotations

import argparse

import pytest

from instancetype_webhook.cli.fleet import add_selection, server_settings
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.cli import run_main


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_selection(parser)
    return parser.parse_args(list(argv))


def test_progress_bar_only_on_a_terminal(config):
    _, _, err = run_main("audit", "--kubeconfig", config, "-A", "-o", "json")
    assert "vm/s" not in err and "\raudit" not in err  # stderr is not a terminal here: no bar
    _, _, err = run_main("audit", "--kubeconfig", config, "-A", "-o", "json", "--progress", "always")
    assert "\raudit" in err and "5/5" in err and "vm/s" in err


def test_unusable_cluster_and_bad_flags_exit_2(tmp_path):
    gone = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(gone.kubeconfig())
    gone.stop()
    code, _, err = run_main("audit", "--kubeconfig", str(config), "-A", "--sync-timeout", "1")
    assert code == 2 and "not listed within 1s" in err
    code, _, err = run_main("sweep", "--kubeconfig", str(config), "--shard", "3/3")
    assert code == 2 and "need 0 <= I < N" in err
    code, _, err = run_main("audit", "--kubeconfig", str(tmp_path / "missing"))
    assert code == 2 and "cannot load the kubeconfig" in err


@pytest.mark.parametrize("command", ["audit", "sweep"])
def test_page_size_below_1_is_one_line_and_exit_2(tmp_path, command):
    code, out, err = run_main(command, "--kubeconfig", str(tmp_path / "never-read"), "--page-size", "0")
    assert (code, out, err) == (2, "", f"{command}: --page-size must be at least 1\n")


def test_defaults_stand_for_expand_all_and_leave_the_rest_to_the_environment():
    args = parse()
    assert server_settings(args) == {"policy": "expandAll"}
    assert (args.namespace, args.all_namespaces, args.output, args.progress) == (None, False, "table", "auto")
    assert (args.page_size, args.sync_timeout, args.kubevirt_version) == (500, 60.0, None)


def test_each_flag_stands_for_its_serve_setting():
    args = parse("--policy", "reference", "--allow-vm-policy", "--no-provenance", "--preserve-guest",
                 "--kubevirt", "kubevirt/kubevirt", "--kubevirt-version", "v1.8.4")
    assert server_settings(args) == {"policy": "reference", "allow_vm_policy": True, "provenance": False,
                                     "preserve_guest": True, "kubevirt": "kubevirt/kubevirt",
                                     "kubevirt_version": "v1.8.4"}


@pytest.mark.parametrize("argv", [["--kubeconfig", "k", "--in-cluster"], ["-n", "apps", "-A"],
                                  ["--policy", "sometimes"], ["--output", "xml"], ["--progress", "often"]])
def test_exclusive_or_unknown_choices_are_refused_by_the_parser(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        parse(*argv)
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


def test_a_kubevirt_cr_that_is_not_namespace_slash_name_is_refused(tmp_path):
    code, out, err = run_main("audit", "--kubeconfig", str(tmp_path / "never-read"), "--kubevirt", "kubevirt")
    assert (code, out) == (2, "")
    assert err == "audit: --kubevirt: Value error, give the KubeVirt CR as NAMESPACE/NAME\n"
