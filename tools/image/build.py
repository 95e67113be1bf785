#!/usr/bin/env python3
"""Build the container image from the Dockerfile (`make image`), with podman, or docker where its daemon runs.

- Base: BASE_IMAGE (or --base) when given; else python:3.11-slim when it is there or can be pulled; else the
  local Debian base tools/image/make-base.sh makes (made once, then reused).
- podman: tools/image/containers.conf is used when runc is installed and CONTAINERS_CONF is not set; the host's
  CA bundle is mounted read-only into the build's RUN steps (pip reads it through PIP_CERT), never baked in.
- The image is tagged TAG and localhost/instancetype-webhook:ctx-<digest>, the digest of the build context (the
  Dockerfile, what it copies, the base image, the platform): the same tree content is built once.
- At the end: the size of the image and of each layer.

Standard library only: it runs before any virtual environment exists.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
IMAGE = "localhost/instancetype-webhook"
UPSTREAM_BASE = "python:3.11-slim"
LOCAL_BASE = "localhost/instancetype-webhook-base:bookworm"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_CA = "/run/instancetype-webhook-build-ca.crt"
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".so")  # .dockerignore leaves these out of the context too


class ImageError(RuntimeError):
    """The image cannot be built here (a missing tool, a failed step)."""


@dataclass(frozen=True)
class Engine:
    name: str  # podman or docker
    path: str
    env: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def run(self, *args: str, capture: bool = True, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.path, *args], env={**os.environ, **self.env}, text=True,
                              capture_output=capture)
        if check and done.returncode != 0:
            detail = (done.stderr or done.stdout or "").strip() if capture else ""
            raise ImageError(f"{self.name} {args[0]} failed (exit {done.returncode}){': ' + detail if detail else ''}")
        return done

    def exists(self, ref: str) -> bool:
        return self.run("image", "inspect", "--format", "{{.Id}}", ref, check=False).returncode == 0

    def image_id(self, ref: str) -> str:
        return self.run("image", "inspect", "--format", "{{.Id}}", ref).stdout.strip()


def find_engine() -> Engine:
    """podman when installed (with tools/image/containers.conf if runc is there), else a running docker."""
    wanted = os.environ.get("ENGINE", "")
    podman = shutil.which(wanted or "podman") if wanted in ("", "podman") else None
    if podman:
        if "CONTAINERS_CONF" in os.environ:
            return Engine("podman", podman, note=f"CONTAINERS_CONF={os.environ['CONTAINERS_CONF']}")
        if shutil.which("runc"):
            conf = str(HERE / "containers.conf")
            return Engine("podman", podman, {"CONTAINERS_CONF": conf}, note=f"containers.conf {conf} (runc)")
        return Engine("podman", podman, note="podman's own containers.conf (runc not installed)")
    docker = shutil.which("docker") if wanted in ("", "docker") else None
    if docker and subprocess.run([docker, "info"], capture_output=True).returncode == 0:
        return Engine("docker", docker)
    hint = "a docker client is installed but its daemon does not answer; " if docker else ""
    raise ImageError(f"{hint}needs podman (apt-get install podman runc) or a running docker")


def copied_sources(dockerfile: Path) -> list[str]:
    """The build-context paths the Dockerfile's COPY/ADD instructions read (not those --from another stage)."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    sources: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if words and words[0].upper() in ("COPY", "ADD") and not any(w.startswith("--from") for w in words):
            sources += [w for w in words[1:-1] if not w.startswith("--")]
    return sources


def context_files(root: Path = ROOT) -> list[Path]:
    """Every file the build reads from the context, in a stable order."""
    files = [root / "Dockerfile"]
    for source in copied_sources(root / "Dockerfile"):
        path = root / source
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and not SKIP_PARTS & set(p.parts)
                            and p.suffix not in SKIP_SUFFIXES and not any(x.endswith(".egg-info") for x in p.parts))
        elif path.is_file():
            files.append(path)
        else:
            raise ImageError(f"the Dockerfile copies {source}, which is not in {root}")
    return files


def context_digest(base_id: str, platform: str, root: Path = ROOT) -> str:
    digest = hashlib.sha256(f"{base_id}\n{platform}\n".encode())
    for path in context_files(root):
        digest.update(f"{path.relative_to(root)}\n{path.stat().st_mode & 0o111}\n".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def arch_of(platform: str) -> str:
    return platform.split("/")[1] if platform else ""


def choose_base(engine: Engine, platform: str, requested: str, log: bool = True) -> str:
    if requested:
        return requested
    if (not platform and engine.exists(UPSTREAM_BASE)) or engine.run(
            "pull", "-q", *(["--platform", platform] if platform else []), UPSTREAM_BASE, check=False).returncode == 0:
        return UPSTREAM_BASE
    arch = arch_of(platform) or subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                                               text=True).stdout.strip() or "amd64"
    local = f"{LOCAL_BASE}-{arch}"
    if not engine.exists(local):
        if log:
            print(f"image: {UPSTREAM_BASE} cannot be pulled for {platform or 'this machine'}: making {local} "
                  "with tools/image/make-base.sh", file=sys.stderr, flush=True)
        start = time.monotonic()
        made = subprocess.run(["bash", str(HERE / "make-base.sh"), local, arch], capture_output=True, text=True,
                              env={**os.environ, **engine.env, "ENGINE": engine.path})
        if made.returncode != 0:
            tail = "\n".join((made.stdout + made.stderr).splitlines()[-30:])
            raise ImageError(f"tools/image/make-base.sh failed (exit {made.returncode}):\n{tail}")
        if log:
            print(f"image: made {local} in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    return local


def build_args(engine: Engine, base: str, platform: str, tags: list[str]) -> list[str]:
    args = ["build", "--file", str(ROOT / "Dockerfile"), "--build-arg", f"BASE_IMAGE={base}"]
    for tag in tags:
        args += ["--tag", tag]
    if platform:
        args += ["--platform", platform]
    ca = Path(os.environ.get("PIP_CERT", HOST_CA))
    if engine.name == "podman" and ca.is_file():
        args += ["--volume", f"{ca.resolve()}:{BUILD_CA}:ro", "--build-arg", f"PIP_CERT={BUILD_CA}"]
    return [*args, str(ROOT)]


def layers(engine: Engine, ref: str) -> list[tuple[int, str]]:
    """(bytes, instruction) for each layer that adds files, oldest first."""
    if engine.name == "podman":  # podman 4 ignores --human=false in --format; its JSON has the bytes
        entries = json.loads(engine.run("history", "--no-trunc", "--format", "json", ref).stdout)
        rows = [(int(e["size"]), str(e["CreatedBy"])) for e in entries]
    else:
        out = engine.run("history", "--human=false", "--no-trunc", "--format", "{{.Size}}\t{{.CreatedBy}}", ref).stdout
        rows = [(int(size), created) for size, _, created in (line.partition("\t") for line in out.splitlines())
                if size.isdigit()]
    return [(size, re.sub(r"(file|dir):([0-9a-f]{12})[0-9a-f]{52}", r"\1:\2", re.sub(r"^/bin/sh -c (#\(nop\) )?", "",
                                                                                created)).strip())
            for size, created in reversed(rows) if size > 0]


def megabytes(n: int) -> str:
    return f"{n / 1e6:.0f} MB"


def report(engine: Engine, ref: str) -> str:
    total = int(engine.run("image", "inspect", "--format", "{{.Size}}", ref).stdout.strip())
    lines = [f"{ref}: {megabytes(total)}"]
    lines += [f"  {megabytes(size):>7}  {created[:90]}" for size, created in layers(engine, ref)]
    return "\n".join(lines)


def ensure_image(platform: str = "", base: str = "", tags: tuple[str, ...] = (), rebuild: bool = False,
                 quiet: bool = False, engine: Engine | None = None) -> tuple[Engine, str, bool]:
    """(engine, the image's ctx-<digest> reference, whether it was built now); builds only when missing."""
    engine = engine or find_engine()
    base = choose_base(engine, platform, base or os.environ.get("BASE_IMAGE", ""), log=not quiet)
    ref = f"{IMAGE}:ctx-{context_digest(engine.image_id(base), platform)}"
    if rebuild or not engine.exists(ref):
        engine.run(*build_args(engine, base, platform, [ref, *tags]), capture=quiet)
        return engine, ref, True
    for tag in tags:
        engine.run("tag", ref, tag)
    return engine, ref, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", default=f"{IMAGE}:latest", help="also tag the image so (default %(default)s)")
    parser.add_argument("--base", default="", help=f"the base image (default: $BASE_IMAGE, {UPSTREAM_BASE}, or the "
                                                   "local Debian base)")
    parser.add_argument("--platform", default="", help="e.g. linux/arm64 (needs binfmt_misc and qemu-user-static)")
    parser.add_argument("--rebuild", action="store_true", help="build even if this tree content was built before")
    args = parser.parse_args(argv)
    try:
        engine = find_engine()
        print(f"image: {engine.name} ({engine.note or engine.path})", file=sys.stderr, flush=True)
        base = choose_base(engine, args.platform, args.base or os.environ.get("BASE_IMAGE", ""))
        start = time.monotonic()
        engine, ref, built = ensure_image(args.platform, base, (args.tag,), args.rebuild, engine=engine)
        if built:
            print(f"image: built {ref} in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        else:
            print(f"image: {ref} was built from this tree content before: tagged {args.tag}", file=sys.stderr)
        print(report(engine, args.tag))
    except ImageError as exc:
        print(f"image: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
