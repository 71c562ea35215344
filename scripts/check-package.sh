#!/usr/bin/env bash
# The package as users get it: `npm pack` on a clean clone of the committed
# tree (its prepack builds), then the tarball installed into an empty project
# and its `berth --version` run. Also: a config that names the etcd source on
# an install without the optional peer fails with the install command, and the
# installed size with and without the optional peers.
#
# The clone builds with a hardlink copy of this checkout's node_modules (same
# lockfile, checked below): what is under test is the clone's build and pack,
# not a second `npm ci`. Installing the tarball is done for real by npm from
# the registry, compiling better-sqlite3 when no prebuilt binary can be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

fail() { echo "check-package: FAILED: $*" >&2; exit 1; }
step() { printf 'check-package: [%ss] %s\n' "$SECONDS" "$*"; }

WORK=$(mktemp -d /tmp/berth-package.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
VERSION=$(node -p "require('./package.json').version")

step "clean clone of $(git rev-parse --short HEAD)"
git clone --quiet --no-hardlinks "$REPO" "$WORK/clone"
cmp -s "$REPO/package-lock.json" "$WORK/clone/package-lock.json" \
  || fail "package-lock.json has uncommitted changes; commit them first"
[ -d "$REPO/node_modules" ] || fail "no node_modules in $REPO (run npm ci)"
cp -al "$REPO/node_modules" "$WORK/clone/node_modules"

step "npm pack (prepack builds)"
(cd "$WORK/clone" && npm pack --pack-destination "$WORK" >"$WORK/pack.log" 2>&1) \
  || { tail -30 "$WORK/pack.log" >&2; fail "npm pack"; }
TARBALL=$WORK/berth-$VERSION.tgz
[ -f "$TARBALL" ] || fail "npm pack made no $TARBALL"
listing=$(tar -tzf "$TARBALL")
for path in package/dist/src/cli/main.cjs package/LICENSE package/CHANGELOG.md package/deploy/Containerfile; do
  grep -qx "$path" <<<"$listing" || fail "$path is not in the tarball"
done
if grep -E '\.test\.|/fixtures/|^package/(test|dist/test)/' <<<"$listing"; then fail "tests in the tarball"; fi
echo "tarball: $(du -h "$TARBALL" | cut -f1), $(wc -l <<<"$listing") files"

step "npm install of the tarball into an empty project"
mkdir -p "$WORK/app" "$WORK/home"
cd "$WORK/app"
echo '{"name":"berth-install-check","version":"1.0.0","private":true}' >package.json
start=$SECONDS
npm install --no-audit --no-fund "$TARBALL" >"$WORK/install.log" 2>&1 \
  || { tail -30 "$WORK/install.log" >&2; fail "npm install $TARBALL"; }
echo "install took $((SECONDS - start)) s"
[ ! -e node_modules/etcd3 ] && [ ! -e node_modules/@kubernetes/client-node ] \
  || fail "an optional peer was installed by default"

step "berth --version"
got=$(HOME=$WORK/home ./node_modules/.bin/berth --version) || fail "berth --version exited non-zero"
[ "$got" = "$VERSION" ] || fail "berth --version printed '$got', expected '$VERSION'"
echo "berth --version: $got"

step "berth run without the optional peers (nothing imports them unless configured)"
HOME=$WORK/home ./node_modules/.bin/berth run --data-dir "$WORK/data" --plugins-dir "$WORK/plugins" \
  >"$WORK/run.out" 2>"$WORK/run.err" &
run_pid=$!
for _ in $(seq 1 600); do
  grep -q '^berth: watching' "$WORK/run.out" && break
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 0.2
done
grep '^berth: watching' "$WORK/run.out" || { cat "$WORK/run.err" >&2; kill "$run_pid" 2>/dev/null; fail "berth run did not start"; }
kill -TERM "$run_pid"
rc=0
wait "$run_pid" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/run.err" >&2; fail "berth run exited $rc after SIGTERM"; }

step "the etcd object source without etcd3 installed"
printf 'objects:\n  source:\n    type: etcd\n    endpoints: [http://127.0.0.1:2379]\n' >"$WORK/etcd.yaml"
rc=0
HOME=$WORK/home ./node_modules/.bin/berth run --data-dir "$WORK/data" --plugins-dir "$WORK/plugins" \
  --config "$WORK/etcd.yaml" >"$WORK/run.out" 2>"$WORK/run.err" || rc=$?
want="npm install 'etcd3@"
if [ "$rc" != 2 ] || ! grep -qF "$want" "$WORK/run.err"; then
  cat "$WORK/run.out" "$WORK/run.err" >&2
  fail "expected exit 2 and \"$want...\" on stderr, got exit $rc"
fi
grep -F "$want" "$WORK/run.err"

step "installed size"
without=$(du -sb node_modules | cut -f1)
peers=$(node -p "Object.entries(require('$REPO/package.json').peerDependencies).map(([n, r]) => n + '@' + r).join(' ')")
# shellcheck disable=SC2086 # one word per package
npm install --no-audit --no-fund --no-save $peers >>"$WORK/install.log" 2>&1 \
  || { tail -30 "$WORK/install.log" >&2; fail "npm install $peers"; }
with=$(du -sb node_modules | cut -f1)
echo "node_modules: $((without / 1048576)) MiB without the optional peers, $((with / 1048576)) MiB with $peers"
step "ok"
