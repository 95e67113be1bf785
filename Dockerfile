# syntax=docker/dockerfile:1
# instancetype-webhook: a multi-stage build. The builder turns the project (and every dependency) into
# wheels; the final stage installs them from that local wheel house with no index, no compiler and no
# build tools, and runs as a numeric non-root user (matching the chart's runAsUser).

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
# Our wheel plus the wheels of all runtime dependencies (binary wheels exist for lxml, orjson, cryptography).
RUN pip wheel --wheel-dir /wheels .

FROM python:3.11-slim
LABEL org.opencontainers.image.title="instancetype-webhook" \
      org.opencontainers.image.description="KubeVirt instance type and preference admission webhook" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels /wheels/instancetype_webhook-*.whl
USER 65532:65532
WORKDIR /tmp
EXPOSE 8443 8080
ENTRYPOINT ["instancetype-webhook", "serve"]
# Without arguments: a throw-away self-signed certificate (try it with `docker run -p 8443:8443`);
# the chart and webhook_config/ replace these with the real TLS flags.
CMD ["--dev", "--host=0.0.0.0", "--port=8443"]
