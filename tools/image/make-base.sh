#!/usr/bin/env bash
# A local Debian base for the Dockerfile's BASE_IMAGE, for machines that cannot pull python:3.11-slim:
# Debian bookworm (minbase) with Python 3.11 and its venv module, made from Debian's packages by
# mmdebstrap and imported into podman (or docker). Like Debian's own -slim images it carries no
# manual pages, info pages, documentation (copyright files kept) or translations.
#
#   tools/image/make-base.sh [TAG] [ARCH]     default: localhost/instancetype-webhook-base:bookworm, host arch
#
# Needs mmdebstrap and a reachable Debian mirror (MIRROR, default: the host's apt sources for bookworm).
set -euo pipefail

TAG="${1:-localhost/instancetype-webhook-base:bookworm}"
ARCH="${2:-$(dpkg --print-architecture)}"
SUITE=bookworm
ENGINE="${ENGINE:-$(command -v podman || command -v docker || true)}"
[ -n "$ENGINE" ] || { echo "make-base: needs podman or docker (apt-get install podman runc)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "make-base: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 2; }

# The venv module (python3-venv) lets the build stage make a virtual environment with its own pip;
# the final image gets that environment only, with pip removed, and no system pip at all.
PACKAGES=python3,python3-venv,python-is-python3,ca-certificates
mirror=()
if [ -n "${MIRROR:-}" ]; then mirror=("$MIRROR"); fi

tar="$(mktemp --suffix=.tar)"
trap 'rm -f "$tar"' EXIT
mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' --arch="$ARCH" --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/lintian/*' \
  --customize-hook='rm -rf "$1"/var/cache/debconf/*-old "$1"/var/lib/dpkg/*-old "$1"/var/log/*' \
  "$SUITE" "$tar" "${mirror[@]}"

# The image records the architecture it was made for (podman build --platform matches on it).
case "$ARCH" in ppc64el) oci_arch=ppc64le ;; armhf) oci_arch=arm ;; *) oci_arch="$ARCH" ;; esac
if [ "$(basename "$ENGINE")" = docker ]; then platform=(--platform "linux/$oci_arch"); else platform=(--arch "$oci_arch"); fi
"$ENGINE" import "${platform[@]}" \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  "$tar" "$TAG" >/dev/null
echo "$TAG"
