# syntax=docker/dockerfile:1
# instancetype-webhook: a multi-stage build. The builder installs the project's wheel (with its package data)
# and every runtime dependency into a virtual environment, then removes the installers from it; the final
# stage is the base plus that one environment, with no pip, setuptools, wheel, compiler or source, and runs
# as a numeric non-root user (matching the chart's runAsUser).
#
# COMPILE=1 (the default): the wheel's review path (the pure core and the review handlers, instancetype_webhook/compiled.py)
# is compiled with mypyc, which cuts the CPU time of a review by about half (bench/README.md), and GCC lays the
# code out from a profile of a training run (tools/build_wheel.py); the compiler, the Python headers and mypy stay
# in the build stage. COMPILE=0 builds the pure-Python wheel.
#
# BASE_IMAGE: any image with Python 3.11 and its venv module, python in /usr/local (python:3.11-slim) or
# /usr (Debian's python3; tools/image/make-base.sh makes one where no registry can be reached).
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
# Set only for the build (podman build --build-arg PIP_CERT=...), e.g. a CA bundle mounted with -v: pip
# reads it from the environment of the RUN steps; the final stage does not declare it.
ARG PIP_CERT
ARG COMPILE=1
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# mypyc's C compiler, and the Python headers where the base lacks them (Debian's python3 without python3-dev).
# Not pinned (DL3008): the base decides the Debian release, and none of it reaches the final stage.
# hadolint ignore=DL3008
RUN if [ "$COMPILE" = 1 ]; then \
      apt-get update -qq \
      && apt-get install -y -qq --no-install-recommends gcc libc6-dev \
      && { python -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_path("include") + "/Python.h"))' \
           || apt-get install -y -qq --no-install-recommends python3-dev; } \
      && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY tools/compile-requirements.txt tools/mypyc.ini tools/dependencies.py tools/build_wheel.py tools/pgo_train.py ./tools/
# The runtime dependencies as wheels, fetched once: the build tools' environment (mypy brings mypyc, which
# type-checks the code against them) and the final one both install them from /deps.
RUN python -m venv /opt/build \
 && /opt/build/bin/python tools/dependencies.py > /tmp/dependencies.txt \
 && /opt/build/bin/pip wheel -q --wheel-dir /deps -r /tmp/dependencies.txt \
 && /opt/build/bin/pip install -q --no-index --find-links /deps -r /tmp/dependencies.txt \
 && /opt/build/bin/pip install -q -r tools/compile-requirements.txt
COPY instancetype_webhook ./instancetype_webhook
# Our wheel (package data as pyproject declares it; under COMPILE=1 compiled, then compiled again laid out from a
# profile of a training run: tools/build_wheel.py), installed with its dependencies into /opt/instancetype-webhook
# (binary wheels exist for lxml, orjson, cryptography); byte-compiled so that the read-only image starts fast.
# Then out go the installers and the kubernetes client's asyncio copy (kubernetes/aio, about 68 MB), which nothing
# here imports (tests/ship/test_image.py checks instancetype_webhook/ never does).
RUN INSTANCETYPE_WEBHOOK_COMPILE="$COMPILE" /opt/build/bin/python tools/build_wheel.py --wheel-dir /wheels \
 && python -m venv /opt/instancetype-webhook \
 && /opt/instancetype-webhook/bin/pip install --no-index --find-links /deps /wheels/instancetype_webhook-*.whl \
 && /opt/instancetype-webhook/bin/pip uninstall --yes pip setuptools wheel \
 && rm -rf /opt/instancetype-webhook/lib/python3.11/site-packages/kubernetes/aio \
           /opt/instancetype-webhook/bin/activate* /opt/instancetype-webhook/bin/Activate.ps1

FROM ${BASE_IMAGE}
LABEL org.opencontainers.image.title="instancetype-webhook" \
      org.opencontainers.image.description="KubeVirt instance type and preference admission webhook" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/instancetype-webhook/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=build /opt/instancetype-webhook /opt/instancetype-webhook
USER 65532:65532
WORKDIR /tmp
EXPOSE 8443 8080
ENTRYPOINT ["instancetype-webhook", "serve"]
# Without arguments: a throw-away self-signed certificate (try it with `podman run -p 8443:8443`);
# the chart and webhook_config/ replace these with the real TLS flags.
CMD ["--dev", "--host=0.0.0.0", "--port=8443"]
