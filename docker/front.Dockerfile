# The front of a Kubernetes pod in k8sModelMode mme: `tdk front serve` beside Triton
# (docs/kubernetes.md, "mme mode"). The kit without its infra extras: the front fetches
# archives from s3://, gs:// and az:// releases (the base dependencies carry those clients),
# never Pulumi or a cloud's deployment SDK.
#
# Build from the repository root:
#   docker build -f docker/front.Dockerfile -t <registry>/tdk-front:<tag> .
#
# Base: the Docker official image python:3.11.15-slim-bookworm. Python 3.11 and Debian 12
# (glibc 2.36) are what the kit is tested on; 3.11.15 is the version
# docker-library/python's 3.11/slim-bookworm/Dockerfile builds (commit 4f070595, 2026-06-23;
# checked 2026-12-07). Pin a digest (python:3.11.15-slim-bookworm@sha256:...) where your
# registry mirrors it.
FROM python:3.11.15-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY requirements/dev.lock requirements/dev.lock
COPY tdk tdk
COPY packager packager
COPY cli cli
COPY infra infra
# The base dependencies only, at the versions the kit's tests ran with (the lock pins every
# package it names; the infra, build, import and dev extras are not installed).
RUN pip install --constraint requirements/dev.lock . \
    && rm -rf /src

# The pod runs as uid 1000 with fsGroup 1000 (infra/k8s/manifests.py): the same user
# owns what the front writes into the /models and /cache volumes Triton reads.
RUN groupadd --gid 1000 tdk && useradd --uid 1000 --gid 1000 --no-create-home tdk
USER 1000:1000
WORKDIR /tmp

EXPOSE 8080
ENTRYPOINT ["tdk", "front", "serve"]
