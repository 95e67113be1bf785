"""`instancetype-webhook completion bash|zsh` (cli/completion.py): the scripts are generated from the parser, so
every command, flag and choice is in them; the bash script completes when sourced in bash and called as bash
calls it (COMP_WORDS, COMP_CWORD)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from instancetype_webhook import cli
from instancetype_webhook.cli.completion import bash_script, describe, zsh_script
from tests.kit.cli import run_cli


@pytest.fixture(scope="module")
def bash_file(tmp_path_factory):
    code, out, err = run_cli("completion", "bash")
    assert (code, err) == (0, "")
    path = tmp_path_factory.mktemp("completion") / "instancetype-webhook.bash"
    path.write_text(out)
    return path


def complete(script, *words: str) -> list[str]:
    """What bash offers for the command line `words` (the last one is the word being completed)."""
    bash = shutil.which("bash")
    assert bash, "bash is needed to source the completion script"
    quoted = " ".join(f"'{w}'" for w in ("instancetype-webhook", *words))
    line = (f"source '{script}'; COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; "
            'COMP_LINE="${COMP_WORDS[*]}"; _instancetype_webhook; printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run([bash, "--norc", "--noprofile", "-c", line], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


def test_bash_completes_a_command(bash_file):
    assert complete(bash_file, "ex") == ["expand"]
    assert set(complete(bash_file, "")) == set(cli.COMMANDS)


def test_bash_completes_a_commands_flags(bash_file):
    assert complete(bash_file, "expand", "--di") == ["--diff"]
    assert "--kubevirt-version" in complete(bash_file, "validate", "--")
    assert "--metrics-host" in complete(bash_file, "serve", "--metrics")


def test_bash_completes_a_flags_choices_and_a_positionals(bash_file):
    assert complete(bash_file, "expand", "-o", "") == ["yaml", "json", "name"]
    assert complete(bash_file, "serve", "--policy", "exp") == ["expand", "expandAll"]
    assert complete(bash_file, "completion", "") == ["bash", "zsh"]


def test_a_flag_taking_a_path_leaves_it_to_the_shells_file_names(bash_file):
    assert complete(bash_file, "expand", "-f", "") == []  # `complete -o default`: bash lists the files


def test_the_scripts_name_every_command_flag_and_choice():
    parser = cli.build_parser()
    top, commands = describe(parser)
    bash, zsh = bash_script(parser), zsh_script(parser)
    assert {c.name for c in commands} == set(cli.COMMANDS)
    assert "--version" in {f for o in top for f in o.flags}
    for command in commands:
        for option in command.options:
            for flag in option.flags:
                assert flag in bash and flag in zsh, (command.name, flag)
            for choice in option.choices:
                assert choice in bash and choice in zsh, (command.name, choice)
    assert zsh.startswith("#compdef instancetype-webhook\n")
    assert "complete -o default -F _instancetype_webhook instancetype-webhook" in bash


def test_an_unknown_shell_is_refused_with_exit_2():
    code, out, err = run_cli("completion", "fish")
    assert (code, out) == (2, "")
    assert "invalid choice: 'fish'" in err and "Traceback" not in err
