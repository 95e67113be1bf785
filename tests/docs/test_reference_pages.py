"""The generated reference pages (tools/gen_docs.py) are up to date, and say what the code says."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gen_docs  # noqa: E402  (tools/ is not a package: put it on the path first)


def test_generated_pages_are_up_to_date() -> None:
    proc = subprocess.run([sys.executable, "tools/gen_docs.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr


def test_every_cli_command_and_flag_is_in_the_cli_page() -> None:
    from instancetype_webhook.cli import build_parser

    page = (ROOT / "docs/reference/cli.md").read_text()
    for name, _, sub in gen_docs._subcommands(build_parser()):
        assert f"\n## {name}\n" in page
        for action in sub._actions:
            for option in [] if action.dest == "help" else action.option_strings:
                assert option in page, (name, option)


def test_every_setting_is_an_environment_variable_on_the_configuration_page() -> None:
    from instancetype_webhook.settings import ENV_PREFIX, ServerSettings

    page = (ROOT / "docs/reference/configuration.md").read_text()
    for name in ServerSettings.model_fields:
        assert f"`{ENV_PREFIX}{name.upper()}`" in page


def test_every_metric_is_on_the_metrics_page() -> None:
    from instancetype_webhook.server.metrics import Metrics

    page = (ROOT / "docs/reference/metrics.md").read_text()
    for family in Metrics().registry.collect():
        assert f"`{family.name}" in page


def test_a_stale_page_is_reported(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(gen_docs, "REFERENCE", tmp_path)
    monkeypatch.setattr(gen_docs, "PAGES", {"metrics.md": gen_docs.metrics_page})
    assert gen_docs.main([]) == 0 and (tmp_path / "metrics.md").exists()
    assert gen_docs.main(["--check"]) == 0
    (tmp_path / "metrics.md").write_text("hand-edited\n")
    assert gen_docs.main(["--check"]) == 1
