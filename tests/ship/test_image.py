"""The container image, built from this tree (`make image`'s tools/image/build.py) and run as the chart runs it.

The chart is rendered by Helm's engine (test_chart.install); its Deployment's pod is run by podman
(image_pod.Pod): args, user and fsGroup, read-only root, dropped capabilities, no privilege escalation, the
memory limit, the TLS Secret the chart generated mounted as kubelet mounts it, /tmp as the chart's emptyDir,
and, as the chart's default is `--in-cluster`, a service account token and KUBERNETES_SERVICE_* pointing at
a fake API server over TLS on the host's loopback (reached through slirp4netns). The image is built once per
tree content (tagged ctx-<digest>), so a second run reuses it.
"""
from __future__ import annotations

import ast
import base64
import importlib.util
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from instancetype_webhook.certs import generate
from instancetype_webhook.compiled import compiled_modules
from instancetype_webhook.sources.catalog import iter_documents
from tests.fakeapi.apiserver import FakeAPIServer, _Handler, _QuietServer
from tests.kit.image_pod import HOST_LOOPBACK, SERVICE_ACCOUNT_DIR, Pod, secret_files
from tests.kit.needs import need_command
from tests.kit.server import free_port
from tests.kit.ship_checks import by_kind, one
from tests.kit.wait import timed_wait_for, wait_for

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "apt-get install podman runc slirp4netns mmdebstrap"
# The samples choose their policy by annotation, as with `make serve`; everything else is the chart's default.
VALUES = {"allowVMPolicyOverride": True}
SAMPLES = sorted(p for p in (ROOT / "examples").glob("*.json")
                 if json.loads(p.read_text()).get("kind") == "AdmissionReview")

pytestmark = pytest.mark.timeout(900)  # the first test also builds the image (and the base, on a fresh machine)


def load_build_tool() -> Any:
    spec = importlib.util.spec_from_file_location("image_build", ROOT / "tools" / "image" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["image_build"] = module
    spec.loader.exec_module(module)
    return module


BUILD = load_build_tool()


# --- the API server the in-cluster webhook watches ----------------------------------------------

class TLSFakeAPIServer(FakeAPIServer):
    """The fake API server behind TLS, as in-cluster clients only speak HTTPS to the API server."""

    def __init__(self, context: ssl.SSLContext, **kwargs: Any):
        self.context = context
        super().__init__(**kwargs)

    def start(self) -> None:
        fake, context = self, self.context

        class Handler(_Handler):
            server_fake = fake

        class Server(_QuietServer):
            def get_request(self) -> tuple[Any, Any]:
                sock, address = self.socket.accept()
                return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

            def finish_request(self, request: Any, client_address: Any) -> None:
                request.do_handshake()  # in the request's own thread, not the accept loop
                super().finish_request(request, client_address)

        self.httpd = Server(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._serving = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                         daemon=True)
        self._serving.start()


@pytest.fixture(scope="module")
def api(tmp_path_factory) -> Iterator[tuple[TLSFakeAPIServer, bytes]]:
    """The fake API server holding the bundled catalogue and examples/infer's volumes; (server, its CA)."""
    bundle = generate(["kubernetes.default.svc", "127.0.0.1", HOST_LOOPBACK])
    certs = tmp_path_factory.mktemp("api")
    (certs / "tls.crt").write_bytes(bundle.cert_pem)
    (certs / "tls.key").write_bytes(bundle.key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs / "tls.crt", certs / "tls.key")
    fake = TLSFakeAPIServer(context)
    catalog = (ROOT / "instancetype_webhook" / "catalog").glob("*.yaml")
    for path in [*catalog, ROOT / "examples" / "infer" / "volumes.yaml"]:
        for obj in iter_documents(path.read_text(), str(path)):
            fake.add(obj)
    yield fake, bundle.ca_cert_pem
    fake.stop()


# --- the image and the chart --------------------------------------------------------------------

@pytest.fixture(scope="module")
def chart() -> tuple[dict, dict[str, dict]]:
    from tests.kit.chart import install

    objs, _notes = install(VALUES)
    return one(objs, "Deployment"), {s["metadata"]["name"]: s for s in by_kind(objs, "Secret")}


@pytest.fixture(scope="module")
def image(chart) -> tuple[Any, str]:
    """(engine, the image reference the chart's Deployment names), built from this tree if not built yet."""
    need_command("podman", INSTALL)
    need_command("runc", INSTALL)
    need_command("slirp4netns", INSTALL)
    engine, ref, _built = BUILD.ensure_image(quiet=True)
    deployment, _ = chart
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    named = container["image"] if "/" in container["image"].split(":")[0] else f"localhost/{container['image']}"
    engine.run("tag", ref, named)  # the chart's image reference now resolves to this tree's image
    return engine, container["image"]


@contextmanager
def running(image, chart, api, workdir: Path, deployment: dict | None = None) -> Iterator[Pod]:
    """The chart's pod running in podman, ready (its readiness probe answers 200)."""
    engine, _ref = image
    deploy, secrets = chart
    fake, api_ca = api
    pod = Pod(deployment or deploy, workdir, secrets, api_port=fake.port, api_ca=api_ca)
    name = f"itw-image-test-{free_port()}"
    started = time.monotonic()
    engine.run(*pod.run_args(name))
    pod.name, pod.engine = name, engine

    def logs() -> str:
        done = engine.run("logs", name, check=False)
        return done.stdout + done.stderr

    pod.logs = logs
    try:
        readiness = pod.container["readinessProbe"]["httpGet"]
        wait_for(lambda: probe(pod, readiness) == 200, 60, "the readiness probe", logs=logs)
        pod.ready_after = time.monotonic() - started
        yield pod
    finally:
        engine.run("rm", "--force", "--time", "0", name, check=False)


def probe(pod: Pod, get: dict) -> int | None:
    """An httpGet probe as kubelet sends it (HTTPS without verification)."""
    url = f"{get.get('scheme', 'HTTP').lower()}://127.0.0.1:{pod.port(get['port'])}{get['path']}"
    try:
        return httpx.get(url, verify=False, timeout=2).status_code
    except httpx.HTTPError:
        return None


def service_name(pod: Pod) -> str:
    meta = pod.deployment["metadata"]
    return f"{meta['name']}.{meta['namespace']}.svc"  # the chart's Service carries the Deployment's name


def api_server_client(ca_pem: bytes | list[bytes]) -> ssl.SSLContext:
    """A client like the API server calling the webhook: it trusts only the caBundle."""
    pems = ca_pem if isinstance(ca_pem, list) else [ca_pem]
    return ssl.create_default_context(cadata="".join(p.decode() for p in pems))


def review(client: httpx.Client, base: str, path: str, body: bytes, sni: str) -> httpx.Response:
    return client.post(f"{base}{path}", content=body, headers={"Content-Type": "application/json"},
                       extensions={"sni_hostname": sni})


@pytest.fixture(scope="module")
def pod(image, chart, api, tmp_path_factory) -> Iterator[Pod]:
    with running(image, chart, api, tmp_path_factory.mktemp("pod")) as pod:
        yield pod


# --- tests -----------------------------------------------------------------------------------------

def test_image_holds_the_package_data_and_no_installers_tests_or_build_tools(image):
    engine, ref = image
    script = """
import importlib.metadata as md, importlib.util as u, json, os, shutil, sys
dist = md.distribution("instancetype-webhook")
missing = [str(f) for f in dist.files if not f.locate().exists()]
data = sorted(str(f) for f in dist.files if f.parts[0] == "instancetype_webhook" and f.suffix not in (".py", ".pyc"))
present = {m: u.find_spec(m) is not None for m in ("pip", "setuptools", "wheel", "pytest", "kubernetes.aio")}
venv = os.path.dirname(sys.executable)
tools = {t: shutil.which(t, path=venv) for t in ("pip", "pip3", "wheel")}
tools |= {t: shutil.which(t) for t in ("gcc", "cc", "make")}
print(json.dumps({"missing": missing, "data": data, "present": present, "tools": tools,
                  "tests": os.path.exists(os.path.join(os.path.dirname(u.find_spec("instancetype_webhook").origin),
                  "..", "tests")),
                  "executable": sys.executable}))
"""
    out = engine.run("run", "--rm", "--entrypoint", "python", ref, "-c", script).stdout
    found = json.loads(out)
    assert found["missing"] == []  # every file the wheel installed is there
    # The package data pyproject declares (the catalogue, its NOTICE), whatever else may be declared later.
    catalog = ROOT / "instancetype_webhook" / "catalog"
    assert {f"instancetype_webhook/catalog/{p.name}" for p in catalog.iterdir() if p.suffix == ".yaml"} \
        | {"instancetype_webhook/catalog/NOTICE"} <= set(found["data"])
    assert found["present"] == {"pip": False, "setuptools": False, "wheel": False, "pytest": False,
                                "kubernetes.aio": False}
    assert {t: p for t, p in found["tools"].items() if p} == {}, found["tools"]
    assert found["tests"] is False
    assert found["executable"].startswith("/opt/instancetype-webhook/")


def test_the_review_path_runs_compiled_in_the_image(image):
    """The image's wheel is the compiled build (Dockerfile COMPILE=1): every module compiled.py lists is
    imported from its C extension, and --version and the server's first line say so."""
    engine, ref = image
    script = """
import json, pathlib, instancetype_webhook
from instancetype_webhook.compiled import compiled_modules, is_extension
names = compiled_modules(pathlib.Path(instancetype_webhook.__file__).parent)
print(json.dumps({"names": names, "pure": [n for n in names if not is_extension(n)]}))
"""
    found = json.loads(engine.run("run", "--rm", "--entrypoint", "python", ref, "-c", script).stdout)
    assert found["names"] == compiled_modules(ROOT / "instancetype_webhook") and found["pure"] == []
    version = engine.run("run", "--rm", "--entrypoint", "instancetype-webhook", ref, "--version").stdout
    assert version.strip().endswith(f"(compiled with mypyc ({len(found['names'])} of {len(found['names'])} modules))")


def test_compiled_answers_equal_pure_python_ones_byte_for_byte(image, tmp_path):
    """Every conformance case through the compiled image and through this tree's pure Python: the expansion,
    the verdict and the /mutate and /validate bodies (tests/kit/answers_digest.py), then the conformance runner."""
    engine, ref = image
    cases = ROOT / "tests" / "data" / "shared" / "conformance"
    digest = ROOT / "tests" / "kit" / "answers_digest.py"
    mounts = ["--volume", f"{cases}:/conformance:ro", "--volume", f"{digest}:/digest/answers_digest.py:ro"]
    inside = engine.run("run", "--rm", *mounts, "--entrypoint", "python", ref, "/digest/answers_digest.py",
                        "/conformance").stdout
    outside = subprocess.run([sys.executable, str(digest), str(cases)], cwd=ROOT, capture_output=True, text=True,
                             check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert len(outside.splitlines()) >= 200 and '"raised"' not in outside
    assert inside.splitlines() == outside.splitlines()
    runner = engine.run("run", "--rm", *mounts, "--entrypoint", "instancetype-webhook", ref, "conformance",
                        "/conformance", check=False)
    assert runner.returncode == 0, runner.stdout[-2000:] + runner.stderr[-2000:]
    assert " 0 failed" in runner.stdout


def test_probes_metrics_and_readiness_as_kubelet_and_prometheus_ask(pod):
    for name in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert probe(pod, pod.container[name]["httpGet"]) == 200, name
    metrics = httpx.get(f"http://127.0.0.1:{pod.port('metrics')}/metrics", timeout=5)
    assert metrics.status_code == 200
    assert "instancetype_webhook_tls_reloads" in metrics.text
    assert "--in-cluster" in pod.container["args"]  # the chart's default: it is watching the (fake) API server
    print(f"start to ready (in-cluster, {pod.container['image']}): {pod.ready_after:.2f} s")


def outside_args(pod: Pod, secret_dir: Path, kubeconfig: Path, port: int) -> list[str]:
    """`serve` on the host with the chart's args, except where it listens, its files and how it finds the API."""
    local = ("--host=", "--port=", "--metrics-port=", "--tls-cert=", "--tls-key=")
    kept = [a for a in pod.container["args"] if not a.startswith(local) and a != "--in-cluster"]
    return [sys.executable, "-m", "instancetype_webhook",
            "serve", *kept, "--host=127.0.0.1", f"--port={port}", "--metrics-port=0",
            f"--tls-cert={secret_dir / 'tls.crt'}", f"--tls-key={secret_dir / 'tls.key'}", f"--kubeconfig={kubeconfig}"]


@contextmanager
def serve_outside(pod: Pod, api, tmp: Path) -> Iterator[int]:
    fake, api_ca = api
    (tmp / "api-ca.crt").write_bytes(api_ca)
    kubeconfig = tmp / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": f"https://127.0.0.1:{fake.port}",
                                                   "certificate-authority": str(tmp / "api-ca.crt")}}],
        "users": [{"name": "fake", "user": {"token": "image-test-token"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}))
    port = free_port()
    log = tmp / "outside.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(outside_args(pod, pod.volumes["tls"].path, kubeconfig, port), cwd=tmp,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        def ready() -> bool:
            assert proc.poll() is None, log.read_text()
            try:
                return httpx.get(f"https://127.0.0.1:{port}/readyz", verify=False, timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, 60, "serve outside the container", logs=log.read_text)
        yield port
    finally:
        proc.terminate()
        proc.wait(20)


def test_reviews_in_the_container_equal_serve_outside_it(pod, chart, api, tmp_path):
    _deploy, secrets = chart
    ca = secret_files(secrets[next(iter(secrets))])["ca.crt"]
    sni = service_name(pod)
    answers: dict[str, dict[str, Any]] = {}
    with serve_outside(pod, api, tmp_path) as outside, \
            httpx.Client(verify=api_server_client(ca), timeout=10) as client:
        for where, port in (("container", pod.port("https")), ("outside", outside)):
            for sample in SAMPLES:
                for path in ("/mutate", "/validate"):
                    answer = review(client, f"https://127.0.0.1:{port}", path, sample.read_bytes(), sni)
                    answers.setdefault(f"{sample.name} {path}", {})[where] = (answer.status_code, answer.json())
    for key, both in answers.items():
        assert both["container"] == both["outside"], key
    responses = [both["container"][1]["response"] for both in answers.values()]
    assert any(r.get("patch") for r in responses), "some sample must be flattened"
    assert any(not r["allowed"] for r in responses), "some sample must be denied"
    patch = json.loads(base64.b64decode(answers["vm-create-expand.json /mutate"]["container"][1]["response"]["patch"]))
    assert any(op["path"] == "/spec/template/spec/domain/cpu" for op in patch)  # u1.medium's CPU, from the API


def test_runs_as_the_pods_user_without_capabilities_and_writes_nothing_outside_tmp(pod):
    engine = pod.engine
    pid = engine.run("inspect", "--format", "{{.State.Pid}}", pod.name).stdout.strip()
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    user, group = pod.security("runAsUser"), pod.security("runAsGroup")
    assert status["Uid"].split() == [str(user)] * 4 and status["Gid"].split() == [str(group)] * 4
    assert str(pod.spec["securityContext"]["fsGroup"]) in status["Groups"].split()
    assert int(status["CapEff"], 16) == 0 and int(status["CapPrm"], 16) == 0 and int(status["CapBnd"], 16) == 0
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2"
    # Writing outside /tmp fails; /tmp is the chart's emptyDir. After the other tests' traffic the container's
    # own filesystem holds no change but the mount points the runtime made for the pod's volumes.
    write = "import pathlib; pathlib.Path('/tmp/x').write_text('x'); pathlib.Path('/opt/x').write_text('x')"
    attempt = engine.run("exec", pod.name, "python", "-c", write, check=False)
    assert attempt.returncode != 0 and "Read-only file system" in attempt.stderr
    mounts = {m["mountPath"] for m in pod.container["volumeMounts"]} | {SERVICE_ACCOUNT_DIR}
    mounts |= {m.replace("/var/run/", "/run/", 1) for m in mounts}  # /var/run is a symlink to /run
    made = mounts | {str(parent) for m in mounts for parent in Path(m).parents if str(parent) != "/"}
    changes = [line.split(None, 1)[1] for line in engine.run("diff", pod.name).stdout.splitlines()]
    assert changes and [c for c in changes if c not in made] == []


def served_certificate(port: int, sni: str) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            context.wrap_socket(raw, server_hostname=sni) as tls:
        return tls.getpeercert(binary_form=True) or b""


def der(pem: bytes) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.decode())


def test_certificate_renewed_on_the_mounted_secret_is_served_without_restart_or_failed_request(
        image, chart, api, tmp_path):
    from tests.kit.chart import install

    _deploy, secrets = chart
    (old,) = (secret_files(s) for s in secrets.values())
    new = secret_files(one(install(VALUES)[0], "Secret"))  # Helm generates another CA and certificate
    assert new["tls.crt"] != old["tls.crt"]
    with running(image, chart, api, tmp_path) as pod:
        sni, https = service_name(pod), pod.port("https")
        assert served_certificate(https, sni) == der(old["tls.crt"])
        body = (ROOT / "examples" / "vm-create-expand.json").read_bytes()
        results: list[int | str] = []
        stop = threading.Event()

        def traffic() -> None:  # new connections all along, as the API server makes them; trusting both CAs
            context = api_server_client([old["ca.crt"], new["ca.crt"]])
            while not stop.is_set():
                try:
                    with httpx.Client(verify=context, timeout=10) as client:
                        results.append(review(client, f"https://127.0.0.1:{https}", "/mutate", body, sni).status_code)
                except httpx.HTTPError as exc:
                    results.append(repr(exc))

        worker = threading.Thread(target=traffic)
        worker.start()
        try:
            time.sleep(1)
            pod.volumes["tls"].write(new)  # kubelet's update of the Secret volume: the ..data symlink swap
            took = timed_wait_for(lambda: served_certificate(https, sni) == der(new["tls.crt"]), 30,
                                  "the new certificate served", logs=pod.logs)
            time.sleep(1)
        finally:
            stop.set()
            worker.join()
        assert results and set(results) == {200}, results
        with httpx.Client(verify=api_server_client(new["ca.crt"]), timeout=10) as client:
            assert review(client, f"https://127.0.0.1:{https}", "/mutate", body, sni).status_code == 200
        metrics = httpx.get(f"http://127.0.0.1:{pod.port('metrics')}/metrics", timeout=5).text
        assert "instancetype_webhook_tls_reloads_total 1.0" in metrics
        restarts = pod.engine.run("inspect", "--format", "{{.RestartCount}} {{.State.StartedAt}}", pod.name).stdout
        assert restarts.split()[0] == "0"
        print(f"new certificate served {took:.1f} s after the swap; {len(results)} reviews, all 200")


def partial_request(port: int, sni: str, ca: bytes, body: bytes) -> ssl.SSLSocket:
    """A review whose headers and first half of the body are sent: in flight until the rest is."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    tls = api_server_client(ca).wrap_socket(raw, server_hostname=sni)
    head = (f"POST /mutate HTTP/1.1\r\nHost: {sni}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    tls.sendall(head + body[: len(body) // 2])
    return tls


def finish(tls: ssl.SSLSocket, body: bytes) -> tuple[int, dict]:
    tls.sendall(body[len(body) // 2:])
    data = b""
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < content_length(data):
        chunk = tls.recv(65536)
        if not chunk:
            break
        data += chunk
    tls.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


def content_length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 1 << 30


def test_sigterm_answers_every_request_in_flight_and_exits_zero_within_the_grace_period(
        image, chart, api, tmp_path):
    _deploy, secrets = chart
    (files,) = (secret_files(s) for s in secrets.values())
    body = (ROOT / "examples" / "vm-create-expand.json").read_bytes()
    uid = json.loads(body)["request"]["uid"]
    with running(image, chart, api, tmp_path) as pod:
        sni, https = service_name(pod), pod.port("https")
        in_flight = [partial_request(https, sni, files["ca.crt"], body) for _ in range(6)]
        time.sleep(0.5)
        signalled = time.monotonic()
        pod.engine.run("kill", "--signal", "TERM", pod.name)
        # Until the listener closes (the drain delay), new reviews still get answers while /readyz says no.
        with httpx.Client(verify=api_server_client(files["ca.crt"]), timeout=10) as client:
            during = [review(client, f"https://127.0.0.1:{https}", "/mutate", body, sni).status_code for _ in range(3)]
        readiness = probe(pod, pod.container["readinessProbe"]["httpGet"])
        answers = [finish(tls, body) for tls in in_flight[:3]]
        time.sleep(max(0.0, signalled + 3.0 - time.monotonic()))  # past the drain delay: the listener is closed
        answers += [finish(tls, body) for tls in in_flight[3:]]
        exit_code = pod.engine.run("wait", pod.name).stdout.strip()
        took = time.monotonic() - signalled
    assert during == [200, 200, 200] and readiness == 503
    assert [(status, a["response"]["uid"], a["response"]["allowed"]) for status, a in answers] == [(200, uid, True)] * 6
    assert exit_code == "0" and took < pod.grace_seconds, (exit_code, took)
    print(f"SIGTERM to exit: {took:.1f} s (grace period {pod.grace_seconds} s)")


# --- what the image build relies on, checked without podman ----------------------------------------

def test_app_never_imports_the_kubernetes_asyncio_client_the_image_leaves_out():
    for path in (ROOT / "instancetype_webhook").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not [n for n in names if n == "kubernetes.aio" or n.startswith("kubernetes.aio.")], path


def test_build_context_digest_follows_what_the_dockerfile_copies(tmp_path):
    copied = ("Dockerfile", "pyproject.toml", "setup.py", "README.md", "tools/compile-requirements.txt",
              "tools/mypyc.ini", "tools/dependencies.py", "tools/build_wheel.py", "tools/pgo_train.py")
    for name in copied:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    (tmp_path / "instancetype_webhook" / "catalog").mkdir(parents=True)
    (tmp_path / "instancetype_webhook" / "catalog" / "x.yaml").write_text("a: 1\n")
    first = BUILD.context_digest("sha256:base", "", tmp_path)
    (tmp_path / "instancetype_webhook" / "__pycache__").mkdir()
    (tmp_path / "instancetype_webhook" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "instancetype_webhook" / "catalog" / "m.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0")  # in place
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("x")
    assert BUILD.context_digest("sha256:base", "", tmp_path) == first  # not part of the image
    assert BUILD.context_digest("sha256:other", "", tmp_path) != first
    assert BUILD.context_digest("sha256:base", "linux/arm64", tmp_path) != first
    (tmp_path / "instancetype_webhook" / "catalog" / "x.yaml").write_text("a: 2\n")
    assert BUILD.context_digest("sha256:base", "", tmp_path) != first
    files = {str(p.relative_to(tmp_path)) for p in BUILD.context_files(tmp_path)}
    assert files == {*copied, "instancetype_webhook/catalog/x.yaml"}
