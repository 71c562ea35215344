#!/usr/bin/env bash
# Builds deploy/Containerfile offline and checks the image runs.
#
# No registry image can be pulled here, so the base (node:20-bookworm-slim in
# the Containerfile) is stood in for by Debian bookworm from debootstrap
# (minbase, from Debian's package mirror) plus this machine's Node 20 and npm.
# buildah runs rootless-style storage (vfs) under a private root in $WORK, with
# chroot isolation; the Containerfile's apt-get and npm ci use the host network.
# Then `berth --version` and a short `berth run` (start, wait for /readyz 200,
# SIGTERM, clean exit) run inside the image.
#
# Usage: scripts/build-image.sh [work-dir]   (default: a fresh temp dir, removed at the end)
# Env:   BERTH_IMAGE_KEEP=1 keeps the work dir; BERTH_IMAGE_ROOTFS=<dir> reuses a
#        finished debootstrap tree (it is copied, never changed).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

fail() { echo "build-image: FAILED: $*" >&2; exit 1; }
step() { printf '\nbuild-image: [%ss] %s\n' "$SECONDS" "$*"; }

for tool in debootstrap buildah node npm ldd tar; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (.ci/run installs debootstrap and buildah)"
done
[ "$(id -u)" = 0 ] || fail "run as root (debootstrap and buildah's chroot isolation need it)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" = 20 ] || fail "the base stands in for node:20; this machine's node is $(node --version)"

OWN_WORK=1
if [ -n "${1:-}" ]; then WORK=$1; OWN_WORK=0; else WORK=$(mktemp -d /tmp/berth-image.XXXXXX); fi
mkdir -p "$WORK"
cleanup() {
  local rc=$?
  # Containers this script made; the private storage goes with the work dir.
  if [ -d "$WORK/storage" ]; then bh rm --all >/dev/null 2>&1 || true; fi
  if [ "${BERTH_IMAGE_KEEP:-0}" != 1 ] && [ "$OWN_WORK" = 1 ]; then
    rm -rf "$WORK" 2>/dev/null || true
  fi
  [ "$rc" = 0 ] || echo "build-image: FAILED after ${SECONDS}s (work dir: $WORK)" >&2
}
trap cleanup EXIT

bh() { buildah --storage-driver vfs --root "$WORK/storage" --runroot "$WORK/runroot" "$@"; }

BASE_IMAGE=localhost/berth-base:bookworm-node20
IMAGE=localhost/berth:build-check

# 1. Debian bookworm, minbase.
ROOTFS=$WORK/rootfs
if [ -n "${BERTH_IMAGE_ROOTFS:-}" ]; then
  step "copying the debootstrap tree $BERTH_IMAGE_ROOTFS"
  rm -rf "$ROOTFS" && cp -a "$BERTH_IMAGE_ROOTFS" "$ROOTFS"
else
  step "debootstrap --variant=minbase bookworm"
  rm -rf "$ROOTFS"
  # The mirror this machine's apt is set up with (the first plain `debian` URI of its sources).
  MIRROR=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$MIRROR" ] || fail "cannot find a Debian mirror in this machine's apt sources"
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; fail "debootstrap (log: $WORK/debootstrap.log)"; }
fi
[ -x "$ROOTFS/bin/sh" ] || fail "the debootstrap tree $ROOTFS has no /bin/sh"

# 2. This machine's Node 20 and npm, laid out as the official image lays them
#    out (/usr/local), with the shared libraries node needs that minbase lacks.
step "adding $(command -v node) ($(node --version)) and npm $(npm --version)"
NODE_BIN=$(readlink -f "$(command -v node)")
install -D -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
while read -r lib; do
  [ -e "$ROOTFS$lib" ] || install -D -m 0644 "$lib" "$ROOTFS$lib"
done < <(ldd "$NODE_BIN" | awk '/=> \//{print $3} /^\s*\/.*ld-linux/{print $1}')
NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -f "$NPM_DIR/package.json" ] || fail "cannot find npm's package directory (got $NPM_DIR)"
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# Node's headers, so better-sqlite3's fallback compile needs no download.
HEADERS=$(dirname "$(dirname "$NODE_BIN")")/include/node
[ -f "$HEADERS/node.h" ] || fail "no Node headers at $HEADERS (needed for native addons offline)"
mkdir -p "$ROOTFS/usr/local/include" && cp -a "$HEADERS" "$ROOTFS/usr/local/include/node"
# This machine may reach the registry through a TLS proxy whose CA only its own
# bundle holds: the base carries that bundle and Node is told to trust it
# (NODE_EXTRA_CA_CERTS below), as the host's npm does.
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
EXTRA_ENV=()
if [ -f "$CA_BUNDLE" ]; then
  install -D -m 0644 "$CA_BUNDLE" "$ROOTFS/usr/local/share/berth-build/host-ca.crt"
  EXTRA_ENV=(--env NODE_EXTRA_CA_CERTS=/usr/local/share/berth-build/host-ca.crt)
fi
chroot "$ROOTFS" /usr/local/bin/node --version >/dev/null || fail "node does not run inside the base tree (missing libraries?)"

# 3. Import the tree as the base image.
step "importing the base as $BASE_IMAGE"
tar -C "$ROOTFS" --numeric-owner -cf "$WORK/rootfs.tar" .
ctr=$(bh from scratch)
bh add "$ctr" "$WORK/rootfs.tar" / >/dev/null
bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${EXTRA_ENV[@]}" --cmd node "$ctr"
bh commit --quiet "$ctr" "$BASE_IMAGE" >/dev/null
bh rm "$ctr" >/dev/null
rm -f "$WORK/rootfs.tar"

# 4. The Containerfile, on that base.
step "building deploy/Containerfile (BASE=$BASE_IMAGE)"
bh bud --isolation chroot --network host --pull-never \
  --build-arg "BASE=$BASE_IMAGE" -f "$REPO/deploy/Containerfile" -t "$IMAGE" "$REPO" \
  || fail "buildah bud deploy/Containerfile"

# 5. Run it.
step "berth --version inside the image"
ctr=$(bh from --pull-never "$IMAGE")
version=$(bh run --isolation chroot "$ctr" -- berth --version) || fail "berth --version exited non-zero"
expected=$(node -p "require('./package.json').version")
[ "$version" = "$expected" ] || fail "berth --version printed '$version', expected '$expected'"
echo "berth --version: $version"

step "a short berth run inside the image"
bh copy "$ctr" "$REPO/scripts/image-smoke.sh" /usr/local/bin/berth-image-smoke >/dev/null
bh run --isolation chroot "$ctr" -- sh /usr/local/bin/berth-image-smoke || fail "berth run inside the image"
bh rm "$ctr" >/dev/null

size=$(bh images --format '{{.Size}}' "$IMAGE" 2>/dev/null || echo '?')
step "done: $IMAGE ($size) in ${SECONDS}s"
