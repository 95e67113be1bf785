"""`instancetype-webhook certs`: a CA and a serving certificate for the webhook Service, written as files."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from instancetype_webhook import certs


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "certs",
        help="generate a CA and a serving certificate for the webhook Service",
        description=(
            "Write ca.crt, tls.crt and tls.key (0600) for the Service's DNS names (NAME, NAME.NS, NAME.NS.svc, "
            "NAME.NS.svc.<cluster domain>) plus localhost/127.0.0.1, and print the base64 caBundle to put "
            "into the webhook configurations. Paths go to stderr, the caBundle alone to stdout."
        ),
    )
    parser.add_argument("--service", required=True, metavar="NAME", help="the webhook Service's name")
    parser.add_argument("--namespace", required=True, metavar="NS", help="the Service's namespace")
    parser.add_argument("--out", default="certs", metavar="DIR", help="output directory (default: certs; created 0700)")
    parser.add_argument("--days", type=int, default=365, metavar="N", help="validity in days (default 365)")
    parser.add_argument("--key-type", choices=certs.KEY_TYPES, default="ecdsa",
                        help="ecdsa (P-256, default) or rsa")
    parser.add_argument("--rsa-bits", type=int, choices=certs.RSA_SIZES, default=2048,
                        help="RSA key size with --key-type rsa (default 2048)")
    parser.add_argument("--cluster-domain", default="cluster.local",
                        help="the cluster's DNS domain (default cluster.local)")
    parser.add_argument("--san", action="append", default=[], metavar="HOST",
                        help="an extra DNS name or IP address for the serving certificate (repeatable)")
    parser.add_argument("--force", action="store_true", help="replace existing files in --out")
    parser.add_argument("--rotate-from", metavar="OLD_CA", default=None,
                        help="replace the CA: OLD_CA is the CA certificate(s) the webhook configurations trust now "
                             "(PEM, e.g. the decoded caBundle). Also writes ca-bundle.crt (the old CA(s), then the "
                             "new one) and prints that bundle as the caBundle for the overlap")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        old_ca = _read_old_ca(args.rotate_from)
        hosts = certs.service_hosts(args.service, args.namespace, args.cluster_domain) + list(args.san)
        bundle = certs.generate(hosts, days=args.days, key_type=args.key_type, rsa_bits=args.rsa_bits)
        overlap = certs.rotation_bundle(old_ca, bundle, args.rotate_from) if old_ca is not None else None
        paths = certs.write_bundle(bundle, args.out, overwrite=args.force)
        if overlap is not None:
            paths[certs.BUNDLE_FILE] = certs.write_ca_bundle(overlap, args.out, overwrite=args.force)
    except certs.CertError as exc:
        print(f"instancetype-webhook certs: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # --out cannot be made or written: the path and the reason, one line
        where = f" {exc.filename}" if exc.filename and str(exc.filename) != args.out else ""
        print(f"instancetype-webhook certs: --out {args.out}: cannot write{where}: "
              f"{(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 2
    quiet = getattr(args, "quiet", False)  # --quiet: the caBundle alone (and the rotation steps)
    for path in paths.values() if not quiet else ():
        print(f"wrote {path}", file=sys.stderr)
    if not quiet:
        print(f"serving certificate for: {', '.join(dict.fromkeys(hosts))}; valid {args.days} days",
              file=sys.stderr)
    if overlap is None:
        print(bundle.ca_bundle)
        return 0
    print(ROTATION_STEPS.format(bundle=paths[certs.BUNDLE_FILE], out=args.out,
                                key_id=certs.key_id(bundle.ca_cert_pem)), file=sys.stderr)
    print(certs.ca_bundle(overlap))
    return 0


ROTATION_STEPS = """CA rotation, in three steps (stdout: the caBundle of step 1):
  1. caBundle = {bundle} (old and new CA): update the webhook configurations, nothing else
  2. put {out}/tls.crt and tls.key into the Secret; wait until every pod serves them
     (every pod's instancetype_webhook_tls_certificate_info has issuer_key_id="{key_id}")
  3. caBundle = {out}/ca.crt (the new CA alone)"""


def _read_old_ca(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise certs.CertError(f"--rotate-from {path}: cannot read it: {exc.strerror}") from exc
