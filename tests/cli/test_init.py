"""The console script itself (cli/__init__.py): --version, no command, every command registered, a command
module that cannot be imported is an error (never a command silently missing), and SourceUnavailable from any
command is one line on stderr and exit status 3."""
from __future__ import annotations

import importlib
import importlib.metadata

import pytest

from instancetype_webhook import cli
from instancetype_webhook.compiled import build_summary
from instancetype_webhook.kubevirt.source import SourceUnavailable
from tests.kit.cli import run_main


def test_version_prints_the_version_and_the_build_then_exits_0(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out == f"instancetype-webhook {cli.version()} ({build_summary()})\n"
    assert cli.version() != "" and "(" not in cli.version()


def test_version_of_a_tree_that_is_not_installed_is_unknown(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert cli.version() == "unknown"


def test_version_is_the_installed_distributions(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "version", lambda name: {"instancetype-webhook": "9.8.7"}[name])
    assert cli.version() == "9.8.7"


def test_no_command_prints_the_help_on_stderr_and_exits_2():
    code, out, err = run_main()
    assert (code, out) == (2, "")
    assert err.startswith("usage: instancetype-webhook")
    for name in cli.COMMANDS:
        assert name in err


def test_every_command_module_registers_its_command_with_a_function():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert sorted(subparsers.choices) == sorted(cli.COMMANDS)
    for name, sub in subparsers.choices.items():
        assert sub.prog == f"instancetype-webhook {name}"
        assert callable(sub.get_default("func")), name


def test_an_unknown_command_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["flatten-everything"])
    assert exc.value.code == 2 and "invalid choice: 'flatten-everything'" in capsys.readouterr().err


def test_a_command_module_that_cannot_be_imported_is_an_error_not_a_missing_command(monkeypatch):
    real = importlib.import_module

    def import_module(name, package=None):
        if name == "instancetype_webhook.cli.sweep":
            raise ImportError("No module named 'instancetype_webhook.fleet.sweep' (broken install)")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", import_module)
    with pytest.raises(ImportError, match="broken install"):
        cli.build_parser()
    with pytest.raises(ImportError, match="broken install"):  # even for a command that would import
        run_main("expand", "--help")


def test_a_source_that_cannot_answer_is_one_line_and_exit_3(monkeypatch):
    def unavailable(args):
        raise SourceUnavailable("GET clusterinstancetypes/u1.small: timed out after 2s")

    monkeypatch.setattr("instancetype_webhook.cli.validate.run", unavailable)
    code, out, err = run_main("validate", "-f", "-")
    assert (code, out) == (3, "")
    assert err == ("validate: reference lookup failed: GET clusterinstancetypes/u1.small: timed out after 2s "
                   "(the cluster did not answer in time; try again)\n")


def test_other_exceptions_are_one_line_and_exit_4_not_3(monkeypatch):
    def broken(args):
        raise RuntimeError("a bug\nsecond line")

    monkeypatch.setattr("instancetype_webhook.cli.validate.run", broken)
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    code, out, err = run_main("validate", "-f", "-")
    assert (code, out) == (cli.INTERNAL, "")
    assert err == ("instancetype-webhook validate: unexpected error: RuntimeError: a bug "
                   f"(--debug or {cli.DEBUG_ENV}=1 shows where)\n")


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_debug_shows_the_traceback_of_an_unexpected_error(monkeypatch, how):
    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr("instancetype_webhook.cli.validate.run", broken)
    monkeypatch.setenv(cli.DEBUG_ENV, "1" if how == "environment" else "0")
    code, _, err = run_main("validate", "-f", "-", *(["--debug"] if how == "flag" else []))
    assert code == cli.INTERNAL
    assert "Traceback (most recent call last)" in err and 'raise RuntimeError("a bug")' in err
    assert err.endswith("unexpected error: RuntimeError: a bug\n")


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr("instancetype_webhook.cli.validate.run", interrupted)
    assert run_main("validate", "-f", "-") == (130, "", "instancetype-webhook validate: interrupted\n")


def test_quiet_leaves_out_the_note_lines_and_keeps_the_rest(monkeypatch):
    def noisy(args):
        import sys

        print("note: answering as KubeVirt v1.7.4", file=sys.stderr)
        sys.stderr.write("warning: kept\nnote: also left out\n")
        print("the result")
        return 0

    monkeypatch.setattr("instancetype_webhook.cli.validate.run", noisy)
    assert run_main("validate", "-f", "-", "--quiet") == (0, "the result\n", "warning: kept\n")
    assert run_main("validate", "-f", "-").err == ("note: answering as KubeVirt v1.7.4\nwarning: kept\n"
                                                   "note: also left out\n")


def test_every_command_takes_debug_and_the_offline_ones_quiet():
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    for name, sub in subparsers.choices.items():
        flags = {f for action in sub._actions for f in action.option_strings}
        assert "--debug" in flags, name
        assert ("--quiet" in flags) == (name not in ("serve", "playground", "completion")), name


@pytest.mark.parametrize(("returned", "code"), [(None, 0), (0, 0), (1, 1), (2, 2)])
def test_the_exit_status_is_what_the_command_returns(monkeypatch, returned, code):
    monkeypatch.setattr("instancetype_webhook.cli.validate.run", lambda args: returned)
    assert run_main("validate", "-f", "-").code == code


def test_unavailable_names_the_command(capsys):
    assert cli.UNAVAILABLE == 3
    assert cli.unavailable("audit", SourceUnavailable("LIST virtualmachines")) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("audit: reference lookup failed: LIST virtualmachines "
                   "(the cluster did not answer in time; try again)\n")


def test_a_reader_that_goes_away_is_no_error():
    import subprocess
    import sys

    from tests.kit.cli import ROOT

    done = subprocess.Popen([sys.executable, "-m", "instancetype_webhook", "completion", "bash"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done.stdout.close()  # as `| head -0` does
    assert (done.wait(timeout=60), done.stderr.read()) == (0, b"")
    done.stderr.close()
