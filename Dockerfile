# The hypertopo image: one binary, `hypertopo`, for the agent DaemonSet, the scheduler extender and
# the CLI. scripts/image.sh builds it with podman, buildah or docker, offline too (it makes the
# debian:bookworm-slim base locally when no registry can be reached).
#
#   scripts/image.sh                          # or: podman build -t hypertopo:0.1.0 .
#   scripts/image.sh --from-build build-asan  # only the runtime stage, around an already built binary
#
# The package lists live in scripts/packages/ (scripts/setup.sh installs the same build list).
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim

# The runtime libraries and nothing else; both images below start from here.
FROM ${BASE_IMAGE} AS runtime-base
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=https://github.com/hypertopo/hypertopo
# 1 adds g++'s ASan/UBSan runtimes, for a sanitizer build wrapped with --from-build (tests only).
ARG SANITIZER_RUNTIME=0
COPY scripts/packages/runtime.txt scripts/packages/sanitizer-runtime.txt /tmp/packages/
# The runtime packages; then liblldpctl alone from Debian's lldpd package (see runtime.txt), with its
# copyright file; then the user the agent runs as.
RUN set -eu; \
    lists=/tmp/packages/runtime.txt; \
    [ "$SANITIZER_RUNTIME" = 1 ] && lists="$lists /tmp/packages/sanitizer-runtime.txt"; \
    apt-get update -qq; \
    sed 's/#.*//' $lists | DEBIAN_FRONTEND=noninteractive xargs apt-get install -y -qq --no-install-recommends; \
    mkdir /tmp/lldpd; chown _apt /tmp/lldpd; cd /tmp/lldpd; \
    apt-get download -qq lldpd; \
    dpkg-deb -x lldpd_*.deb root; \
    cd root; \
    find usr/lib -name 'liblldpctl.so*' -exec cp -a --parents {} / \; ; \
    cp -a --parents usr/share/doc/lldpd/copyright /; \
    cd /; ldconfig; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/* /tmp/packages /tmp/lldpd; \
    groupadd --gid 65532 hypertopo; \
    useradd --uid 65532 --gid 65532 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin hypertopo
LABEL org.opencontainers.image.title="hypertopo" \
      org.opencontainers.image.description="GPU-cluster network topology discovery (Volcano HyperNodes) and topology-aware placement" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
# Reading sysfs, NVML and the Kubernetes API needs no privilege. Only the live umad walk
# (source ibnetdisc) needs more: the /dev/infiniband device and CAP_IPC_LOCK (see the README).
USER 65532:65532
ENTRYPOINT ["hypertopo"]
CMD ["--help"]

# scripts/image.sh --from-build DIR: its context holds DIR/bin/hypertopo (and the package lists).
FROM runtime-base AS prebuilt
COPY hypertopo /usr/local/bin/hypertopo

# The release binary, built from the package list scripts/setup.sh installs.
FROM ${BASE_IMAGE} AS build
COPY scripts/packages/build.txt /tmp/packages/build.txt
RUN set -eu; \
    apt-get update -qq; \
    sed 's/#.*//' /tmp/packages/build.txt | DEBIAN_FRONTEND=noninteractive xargs apt-get install -y -qq --no-install-recommends; \
    rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The context has no .git: `hypertopo --version` names the commit scripts/image.sh passes
# (cmake/version_info.cmake reads HYPERTOPO_GIT_COMMIT).
ARG REVISION=unknown
# -O2 like the release build scripts/setup.sh makes (and the README's numbers), without debug info.
RUN export HYPERTOPO_GIT_COMMIT="$(printf %.12s "$REVISION")"; \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
      -DHYPERTOPO_BUILD_TESTS=OFF -DHYPERTOPO_BUILD_BENCHMARKS=OFF >/dev/null && \
    cmake --build /build --target hypertopo && \
    strip /build/bin/hypertopo

# The default (last) stage: the release image.
FROM runtime-base AS runtime
COPY --from=build /build/bin/hypertopo /usr/local/bin/hypertopo
