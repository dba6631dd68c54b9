#!/usr/bin/env bash
# Builds the hypertopo container image (Dockerfile) with whatever is installed: podman, buildah or
# docker. The image is tagged hypertopo:<version> in that tool's default image store (what
# `podman images` lists); --push REF also pushes it to REF.
#
#   scripts/image.sh                               # full build: the release binary is compiled in the image
#   scripts/image.sh --push registry.example.com/ml/hypertopo:0.1.0
#   scripts/image.sh --from-build build-asan       # only the runtime stage, around DIR/bin/hypertopo
#                                                  # (a sanitizer build: hypertopo:<version>-sanitized)
#   scripts/image.sh --from-build build --tag hypertopo:dev
#                                                  # (stripped, as the full build's binary is)
#
# Where no registry can be reached, the debian:bookworm-slim base is made locally with
# `debootstrap --variant=minbase` from the Debian mirror apt already uses, kept in
# ${XDG_CACHE_HOME:-~/.cache}/hypertopo and imported.
# Environment: HYPERTOPO_IMAGE_TOOL (podman, buildah or docker), HYPERTOPO_IMAGE_STORE (a directory:
# podman/buildah keep images and containers under it, not in the default store),
# HYPERTOPO_DEBIAN_MIRROR (the mirror debootstrap and apt use, instead of the one apt uses here).
set -euo pipefail
invoked_from=$PWD
cd "$(dirname "$0")/.."

from_build=""
push_ref=""
tag=""
while (($#)); do
  case "$1" in
    --from-build)
      from_build=${2:?--from-build needs a build directory}
      [[ $from_build == /* ]] || from_build=$invoked_from/$from_build
      shift 2 ;;
    --push) push_ref=${2:?--push needs an image reference}; shift 2 ;;
    --tag) tag=${2:?--tag needs a name:tag}; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

version=$(sed -n 's/^project(hypertopo VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[[ -n $version ]] || { echo "image.sh: no version in CMakeLists.txt's project()" >&2; exit 1; }
sanitized=0
if [[ -n $from_build ]]; then
  binary="$from_build/bin/hypertopo"
  [[ -x $binary ]] || { echo "image.sh: no binary at $binary (build it first)" >&2; exit 1; }
  # A sanitizer build (build-asan/) needs the sanitizer runtimes in the image, and is no release.
  readelf -d "$binary" 2>/dev/null | grep -q 'NEEDED.*libasan' && sanitized=1
fi
((sanitized)) && tag=${tag:-hypertopo:$version-sanitized}
tag=${tag:-hypertopo:$version}

tool=${HYPERTOPO_IMAGE_TOOL:-}
if [[ -z $tool ]]; then
  for candidate in podman buildah docker; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    # A docker client without a reachable daemon cannot build.
    [[ $candidate == docker ]] && ! docker info >/dev/null 2>&1 && continue
    tool=$candidate
    break
  done
fi
[[ -n $tool ]] || { echo "image.sh: needs podman, buildah or docker (scripts/setup.sh installs podman)" >&2; exit 1; }

cmd=("$tool")
build_flags=()
if [[ $tool == podman || $tool == buildah ]]; then
  if [[ -n ${HYPERTOPO_IMAGE_STORE:-} ]]; then
    cmd+=(--root "$HYPERTOPO_IMAGE_STORE/root" --runroot "$HYPERTOPO_IMAGE_STORE/run")
  fi
  # crun, Debian's default runtime, cannot start containers on hosts with a hybrid cgroup v1/v2
  # hierarchy; runc can, and behaves the same elsewhere.
  if command -v runc >/dev/null 2>&1; then
    [[ $tool == podman ]] && cmd+=(--runtime runc) || build_flags+=(--runtime runc)
  fi
fi
build_cmd=("${cmd[@]}" build)
# Explicit limits for the build steps: podman's defaults (a million open files, more processes than
# some hosts let a container have) make a step fail to start ("error setting rlimit") where the host
# caps them. This shell's open-file limit, and 32768 processes, are what such hosts accept and plenty
# for a build.
build_flags+=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=32768:32768")
# The build steps run apt-get against the Debian mirror; the host's network avoids setting up a
# container network (and touching the host's firewall) for them.
build_flags+=(--network host)

image_exists() {
  case "$tool" in
    docker) docker image inspect "$1" >/dev/null 2>&1 ;;
    *) "${cmd[@]}" image exists "$1" 2>/dev/null || "${cmd[@]}" inspect --type image "$1" >/dev/null 2>&1 ;;
  esac
}

# The mirror apt uses here for SUITE (one-line sources.list or deb822 .sources), or $2.
apt_mirror() {
  local suite=$1 fallback=$2 found=""
  local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
  for f in "${files[@]}"; do
    [[ -r $f ]] || continue
    found=$(awk -v suite="$suite" '
      function found(uri) { print uri; done = 1; exit }
      function flush() { if (uris != "" && (" " suites " ") ~ (" " suite " ") && enabled) found(uris)
                         uris = ""; suites = ""; enabled = 1 }
      BEGIN { enabled = 1 }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      $1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == suite) found($i); next }
      tolower($1) == "uris:" { uris = $2 }
      tolower($1) == "suites:" { $1 = ""; suites = $0; gsub(/^ +| +$/, "", suites) }
      tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
      END { if (!done) flush() }' "$f")
    [[ -n $found ]] && break
  done
  echo "${found:-$fallback}"
}

# Makes debian:bookworm-slim from the Debian mirror (debootstrap minbase, then the files the official
# slim image leaves out) and imports it as $1. The root filesystem is cached between runs.
bootstrap_base() {
  local ref=$1
  local mirror security cache tarball
  mirror=${HYPERTOPO_DEBIAN_MIRROR:-$(apt_mirror bookworm http://deb.debian.org/debian)}
  security=$(apt_mirror bookworm-security http://deb.debian.org/debian-security)
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/hypertopo
  tarball="$cache/debian-bookworm-slim-$(printf '%s %s' "$mirror" "$security" | sha256sum | cut -c1-12).tar"
  if [[ ! -s $tarball ]]; then
    command -v debootstrap >/dev/null 2>&1 || {
      echo "image.sh: no registry reachable and no debootstrap to make the base (scripts/setup.sh installs it)" >&2
      return 1
    }
    [[ $(id -u) -eq 0 ]] || { echo "image.sh: debootstrap needs root to make the base image" >&2; return 1; }
    echo "image.sh: making debian:bookworm-slim with debootstrap from $mirror (cached in $cache)"
    mkdir -p "$cache"
    local rootfs log
    rootfs=$(mktemp -d)
    log=$(mktemp)
    # shellcheck disable=SC2064  # expand now: the trap must remove these
    trap "rm -rf '$rootfs' '$log'; trap - RETURN" RETURN
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$log" 2>&1; then
      tail -20 "$log" >&2
      return 1
    fi
    # What debian:bookworm-slim drops and keeps out of later installs (debuerreotype's slimify).
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$rootfs"/usr/share/{groff,info,linda,locale,man}/* "$rootfs"/usr/share/lintian/overrides/*
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
      "$mirror" "$mirror" "$security" >"$rootfs/etc/apt/sources.list"
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/var/log/*.log "$rootfs"/tmp/*
    local partial
    partial=$(mktemp "$tarball.XXXXXX")
    tar -C "$rootfs" --numeric-owner -cf "$partial" .
    mv "$partial" "$tarball"
  fi
  local context
  context=$(mktemp -d)
  cp "$tarball" "$context/rootfs.tar"
  printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' >"$context/Containerfile"
  local rc=0
  "${build_cmd[@]}" "${build_flags[@]}" -t "$ref" -f "$context/Containerfile" "$context" >/dev/null || rc=$?
  rm -rf "$context"
  return $rc
}

base=docker.io/library/debian:bookworm-slim
if ! image_exists "$base"; then
  pull=("${cmd[@]}" pull "$base")
  [[ $tool == buildah ]] && pull=("${cmd[@]}" pull "docker://$base")
  if ! timeout 120 "${pull[@]}" >/dev/null 2>&1; then
    base=localhost/hypertopo-base:bookworm-slim
    if ! image_exists "$base"; then
      echo "image.sh: cannot pull debian:bookworm-slim; making it locally"
      bootstrap_base "$base"
    fi
  fi
fi

args=(--build-arg "BASE_IMAGE=$base" --build-arg "VERSION=$version")
revision=$(git rev-parse HEAD 2>/dev/null || true)
[[ -n $revision ]] && args+=(--build-arg "REVISION=$revision")
source_url=$(git config --get remote.origin.url 2>/dev/null || true)
[[ $source_url == http* ]] && args+=(--build-arg "SOURCE=$source_url")

start=$(date +%s)
if [[ -n $from_build ]]; then
  # Only the runtime stage: a context with the binary and the package lists, nothing else.
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  mkdir -p "$context/scripts/packages"
  cp scripts/packages/*.txt "$context/scripts/packages/"
  if ((sanitized)); then
    # The sanitizers' reports name functions and lines from the symbols: kept.
    cp "$binary" "$context/hypertopo"
  else
    # A release build's symbols and debug sections (RelWithDebInfo) are most of its size; the image
    # gets what the full build's stage strips too (Dockerfile: `strip /build/bin/hypertopo`).
    strip --strip-unneeded -o "$context/hypertopo" "$binary"
  fi
  echo "image.sh: $(stat -c %s "$binary") bytes built, $(stat -c %s "$context/hypertopo") in the image"
  ((sanitized)) && args+=(--build-arg SANITIZER_RUNTIME=1)
  echo "image.sh: building $tag around $binary with $tool"
  "${build_cmd[@]}" "${build_flags[@]}" "${args[@]}" --target prebuilt -t "$tag" -f "$PWD/Dockerfile" "$context"
else
  echo "image.sh: building $tag with $tool (the release binary is compiled in the build stage)"
  "${build_cmd[@]}" "${build_flags[@]}" "${args[@]}" -t "$tag" -f Dockerfile .
fi
echo "image.sh: built $tag in $(($(date +%s) - start))s"

if [[ -n $push_ref ]]; then
  case "$tool" in
    podman) "${cmd[@]}" push "$tag" "$push_ref" ;;
    buildah) "${cmd[@]}" push "$tag" "docker://$push_ref" ;;
    docker) docker tag "$tag" "$push_ref" && docker push "$push_ref" ;;
  esac
  echo "image.sh: pushed $push_ref"
fi
