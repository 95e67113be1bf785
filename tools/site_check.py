"""Look at the built docs site in a real browser: Debian's chromium, headless, over the DevTools protocol.

    .venv/bin/python tools/site_check.py [--out DIR] [--query TEXT] [PAGE ...]

Builds the site (`mkdocs build --strict`) into a temporary directory, serves it on 127.0.0.1, opens each
PAGE (default: the home page, troubleshooting, the CLI reference), prints its title and top-level
navigation and saves a screenshot, then types --query into Material's search box and prints the results.
Needs `apt-get install chromium`. Not a test: a way to see what a user sees.
"""
from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket  # websocket-client, a dependency of the kubernetes client

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--window-size=1400,1000"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class Browser:
    def __init__(self) -> None:
        port = free_port()
        self.proc = subprocess.Popen(["chromium", *FLAGS, f"--user-data-dir={tempfile.mkdtemp()}",
                                      f"--remote-debugging-port={port}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=2))
                page = next(t for t in targets if t["type"] == "page")
                break
            except (OSError, StopIteration):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.n = 0
        self.call("Page.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.n:
                return dict(message.get("result", {}))

    def js(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def open(self, url: str, settle: float = 3) -> None:
        self.call("Page.navigate", url=url)
        time.sleep(settle)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def search(self, query: str, timeout: float = 30) -> tuple[str, list[str]]:
        self.js("document.querySelector('label[for=__search]').click()")
        self.js(f"var i = document.querySelector('input.md-search__input'); i.focus(); i.value = {json.dumps(query)};"
                "i.dispatchEvent(new Event('input', {bubbles: true})); i.dispatchEvent(new KeyboardEvent('keyup'))")
        deadline, meta = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            meta = self.js("(document.querySelector('.md-search-result__meta') || {}).textContent") or ""
            if meta and "Initializing" not in meta and "Type to start" not in meta:
                break
            time.sleep(0.5)
        titles = self.js("Array.from(document.querySelectorAll('.md-search-result__item h1, "
                         ".md-search-result__item h2')).slice(0, 8).map(e => e.textContent.trim())")
        return meta, titles or []

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="*", default=["", "operations/troubleshooting/", "reference/cli/"])
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "site-check")
    ap.add_argument("--query", default="deadline exceeded")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    site = Path(tempfile.mkdtemp(prefix="site-"))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "--site-dir", str(site)], cwd=ROOT,
                   check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    browser = Browser()
    try:
        for page in args.pages:
            browser.open(base + page)
            shot = args.out / ((page.strip("/").replace("/", "-") or "home") + ".png")
            browser.screenshot(shot)
            nav = browser.js("Array.from(document.querySelectorAll('.md-nav--primary > .md-nav__list > "
                             ".md-nav__item')).map(e => e.querySelector('a, label').textContent.trim())")
            print(f"{page or '/'}: {browser.js('document.title')!r}, nav {nav}, screenshot {shot}")
        meta, titles = browser.search(args.query)
        browser.screenshot(args.out / "search.png")
        print(f"search {args.query!r}: {meta}: {titles}")
        return 0 if titles else 1
    finally:
        browser.close()
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
