"""`mkdocs build --strict` builds the site: no broken link, no missing page, every page in the navigation;
the search index holds the pages, and nothing is fetched from the internet (the site works air-gapped)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _nav_pages(nav: list) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_nav_page_is_built(site: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = _nav_pages(config["nav"])
    assert len(pages) >= 30
    for page in pages:
        built = site / (page.removesuffix(".md").removesuffix("index") + "/index.html").lstrip("/")
        assert built.exists(), page


def test_the_search_index_has_the_pages(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert {"operations/troubleshooting/", "reference/cli/", "install/helm/"} <= locations
    assert any("context deadline exceeded" in doc["text"] for doc in index["docs"])


def test_no_page_loads_anything_from_the_internet(site: Path) -> None:
    remote = re.compile(r"""<(?:link|script|img)[^>]+(?:href|src)=["']https?://""")
    for html in site.rglob("*.html"):
        assert not remote.search(html.read_text()), html


def test_the_benchmark_harness_page_includes_bench_readme(site: Path) -> None:
    html = (site / "benchmarks" / "harness" / "index.html").read_text()
    assert "bench/: the webhook against the bare-server floor" in html


def test_the_docs_name_no_internal_work_items() -> None:
    pattern = re.compile(r"\b[Ii]ssue \d+|\bspec \d+\.\d+")
    for page in [ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")]:
        found = pattern.findall(page.read_text())
        assert not found, (page, found)


def test_the_readme_is_a_short_front_door_whose_links_resolve() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 10
    for link in local:
        assert (ROOT / link).exists(), link
