"""`instancetype-webhook certs`: files, modes, stdout = caBundle alone, clear errors and exit statuses."""
from __future__ import annotations

import base64
import os
import stat

from cryptography import x509

from instancetype_webhook.cli import main


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["certs", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_writes_the_three_files_and_prints_only_the_ca_bundle(tmp_path, capsys):
    out_dir = tmp_path / "out"
    status, out, err = run(capsys, "--service", "itw", "--namespace", "kv", "--out", str(out_dir), "--days", "7",
                           "--san", "webhook.example.org", "--san", "10.1.2.3")
    assert status == 0
    assert out.count("\n") == 1 and base64.b64decode(out.strip()) == (out_dir / "ca.crt").read_bytes()
    assert "wrote" in err and "tls.key" in err
    assert stat.S_IMODE(os.stat(out_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(out_dir / "tls.key").st_mode) == 0o600
    leaf = x509.load_pem_x509_certificate((out_dir / "tls.crt").read_bytes())
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [
        "itw", "itw.kv", "itw.kv.svc", "itw.kv.svc.cluster.local", "localhost", "webhook.example.org"]
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "10.1.2.3"]
    lifetime = leaf.not_valid_after_utc - leaf.not_valid_before_utc
    assert 7 * 86400 <= lifetime.total_seconds() <= 7 * 86400 + 600


def test_refuses_to_overwrite_without_force(tmp_path, capsys):
    assert run(capsys, "--service", "itw", "--namespace", "kv", "--out", str(tmp_path))[0] == 0
    before = (tmp_path / "tls.key").read_bytes()
    status, out, err = run(capsys, "--service", "itw", "--namespace", "kv", "--out", str(tmp_path))
    assert (status, out) == (2, "") and "refusing to overwrite" in err and "--force" in err
    assert (tmp_path / "tls.key").read_bytes() == before
    assert run(capsys, "--service", "itw", "--namespace", "kv", "--out", str(tmp_path), "--force")[0] == 0
    assert (tmp_path / "tls.key").read_bytes() != before


def test_bad_names_and_validity_are_clear_errors(tmp_path, capsys):
    status, out, err = run(capsys, "--service", "My_Webhook", "--namespace", "kv", "--out", str(tmp_path / "a"))
    assert (status, out) == (2, "") and "not a DNS-1123 label" in err
    status, out, err = run(capsys, "--service", "itw", "--namespace", "kv", "--days", "0", "--out", str(tmp_path / "b"))
    assert (status, out) == (2, "") and "between 1 and 3650 days" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_rsa_on_request(tmp_path, capsys):
    assert run(capsys, "--service", "itw", "--namespace", "kv", "--out", str(tmp_path), "--key-type", "rsa")[0] == 0
    leaf = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    assert leaf.public_key().key_size == 2048
