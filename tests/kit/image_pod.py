"""Run the pod of a rendered Deployment with podman, as kubelet would run it: the container's image and args,
its user and groups, read-only root, capabilities, no privilege escalation, its ports (published on
127.0.0.1), and its volumes: Secrets as kubelet writes them (an atomic `..data` symlink swap), emptyDirs as
size-limited tmpfs, and the service account token where in-cluster clients look for it.

Nothing here is typed again from the chart: every setting comes from the Deployment given.
"""
from __future__ import annotations

import base64
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.kit.server import free_port

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
HOST_LOOPBACK = "10.0.2.2"  # the host's 127.0.0.1 as slirp4netns shows it (allow_host_loopback)
QUANTITY = re.compile(r"^(\d+)(Ki|Mi|Gi)?$")
UNITS = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}


def quantity_bytes(value: str) -> int:
    match = QUANTITY.match(str(value))
    assert match, f"unsupported quantity {value!r}"
    return int(match.group(1)) * UNITS[match.group(2)]


class SecretVolume:
    """A directory laid out as kubelet's atomic writer does: the files in `..<timestamp>/`, `..data` a symlink
    to it, and each key a symlink `key -> ..data/key`; an update writes a new timestamped directory and renames
    a new `..data` symlink over the old one, so readers see the old files or the new ones, never a mix."""

    def __init__(self, path: Path, mode: int, gid: int | None):
        self.path, self.mode, self.gid = path, mode, gid
        path.mkdir(parents=True)
        path.chmod(0o1777)  # a tmpfs mount point, as kubelet's is
        self.generation = 0

    def write(self, files: dict[str, bytes]) -> None:
        self.generation += 1
        stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns() % 10**9:09d}"
        new = self.path / stamp
        new.mkdir(mode=0o755)
        for name, data in files.items():
            (new / name).write_bytes(data)
            if self.gid is not None:
                os.chown(new / name, 0, self.gid)
            (new / name).chmod(self.mode)
        old = (self.path / "..data").resolve() if (self.path / "..data").exists() else None
        tmp = self.path / "..data_tmp"
        tmp.symlink_to(stamp)
        tmp.rename(self.path / "..data")
        for name in files:
            link = self.path / name
            if not link.is_symlink():
                link.symlink_to(f"..data/{name}")
        if old is not None:
            for child in old.iterdir():
                child.unlink()
            old.rmdir()


def secret_files(secret: dict[str, Any]) -> dict[str, bytes]:
    return {key: base64.b64decode(value) for key, value in secret["data"].items()}


@dataclass
class Pod:
    """The pod of `deployment`, with the container's image reference replaced by `image` when given."""
    deployment: dict[str, Any]
    workdir: Path
    secrets: dict[str, dict[str, Any]]  # name -> Secret object
    api_port: int | None = None  # the (fake) API server on the host's 127.0.0.1
    api_ca: bytes = b""
    volumes: dict[str, SecretVolume] = field(default_factory=dict)
    host_ports: dict[str, int] = field(default_factory=dict)  # container port name -> 127.0.0.1 port
    # Once running (tests/ship/test_image.py): the container's name, its engine, seconds from run to ready, its log.
    name: str = ""
    engine: Any = None
    ready_after: float = 0.0
    logs: Callable[[], str] = str

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.deployment["spec"]["template"]["spec"])

    @property
    def container(self) -> dict[str, Any]:
        (container,) = self.spec["containers"]
        return dict(container)

    def security(self, key: str) -> Any:
        """A container securityContext setting, falling back to the pod's (as Kubernetes merges them)."""
        return self.container.get("securityContext", {}).get(key, self.spec.get("securityContext", {}).get(key))

    @property
    def grace_seconds(self) -> int:
        return int(self.spec.get("terminationGracePeriodSeconds", 30))  # the API server's default

    def port(self, name_or_number: str | int) -> int:
        """The host port a probe's or a client's `port` (a name or a number) reaches."""
        for p in self.container["ports"]:
            if name_or_number in (p["name"], p["containerPort"]):
                return self.host_ports[p["name"]]
        raise KeyError(name_or_number)

    def run_args(self, name: str) -> list[str]:
        c = self.container
        args = ["run", "--detach", "--name", name, "--network", "slirp4netns:allow_host_loopback=true"]
        user, group = self.security("runAsUser"), self.security("runAsGroup")
        assert user is not None, "the pod must name its user"
        args += ["--user", f"{user}:{group if group is not None else user}"]
        psc = self.spec.get("securityContext", {})
        for gid in [psc["fsGroup"]] * ("fsGroup" in psc) + list(psc.get("supplementalGroups", [])):
            args += ["--group-add", str(gid)]
        caps = self.security("capabilities") or {}
        args += [f"--cap-drop={cap}" for cap in caps.get("drop", [])] + [f"--cap-add={c}" for c in caps.get("add", [])]
        if self.security("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        seccomp = (self.security("seccompProfile") or {}).get("type", "RuntimeDefault")
        assert seccomp == "RuntimeDefault", f"seccomp {seccomp}: only the runtime's default profile is run here"
        if self.security("readOnlyRootFilesystem"):
            args += ["--read-only", "--read-only-tmpfs=false"]
        if self.security("privileged"):
            args += ["--privileged"]
        limits = c.get("resources", {}).get("limits", {})
        if "memory" in limits:
            args += ["--memory", str(quantity_bytes(limits["memory"]))]
        args += self._volume_args() + self._env_args()
        for p in c["ports"]:
            self.host_ports[p["name"]] = free_port()
            args += ["--publish", f"127.0.0.1:{self.host_ports[p['name']]}:{p['containerPort']}"]
        args += ["--stop-timeout", str(self.grace_seconds)]
        if "command" in c:
            args += ["--entrypoint", c["command"][0]]
        return [*args, c["image"], *c.get("command", [])[1:], *c.get("args", [])]

    def _volume_args(self) -> list[str]:
        volumes = {v["name"]: v for v in self.spec.get("volumes", [])}
        psc = self.spec.get("securityContext", {})
        args: list[str] = []
        for mount in self.container.get("volumeMounts", []):
            volume = volumes[mount["name"]]
            ro = ":ro" if mount.get("readOnly") else ""
            if "secret" in volume:
                secret = self.secrets[volume["secret"]["secretName"]]
                vol = SecretVolume(self.workdir / f"secret-{mount['name']}", volume["secret"].get("defaultMode", 0o644),
                                   psc.get("fsGroup"))
                vol.write(secret_files(secret))
                self.volumes[mount["name"]] = vol
                args += ["--volume", f"{vol.path}:{mount['mountPath']}{ro}"]
            elif "emptyDir" in volume:
                size = volume["emptyDir"].get("sizeLimit")
                options = f"type=tmpfs,destination={mount['mountPath']},tmpfs-mode=1777"
                args += ["--mount", options + (f",tmpfs-size={quantity_bytes(size)}" if size else "")]
            else:
                raise AssertionError(f"volume {mount['name']}: only secret and emptyDir volumes are run here")
        if self.spec.get("automountServiceAccountToken", True) and self.api_port is not None:
            account = SecretVolume(self.workdir / "serviceaccount", 0o644, None)
            account.write({"token": b"image-test-token", "ca.crt": self.api_ca,
                           "namespace": self.deployment["metadata"]["namespace"].encode()})
            args += ["--volume", f"{account.path}:{SERVICE_ACCOUNT_DIR}:ro"]
        return args

    def _env_args(self) -> list[str]:
        env = {e["name"]: e["value"] for e in self.container.get("env", []) if "value" in e}
        if self.api_port is not None:  # what kubelet sets in every container for the kubernetes Service
            env |= {"KUBERNETES_SERVICE_HOST": HOST_LOOPBACK, "KUBERNETES_SERVICE_PORT": str(self.api_port)}
        return [arg for key, value in sorted(env.items()) for arg in ("--env", f"{key}={value}")]

