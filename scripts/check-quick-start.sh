#!/usr/bin/env bash
# The README's quick start, in order, in a fresh clone with a fresh HOME:
#   1. npm ci && npm start      (the daemon keeps running)
#   2. bash .ci/run             (while it runs: install check, build, lint, every test)
# then the daemon must still be up and ready, and stop cleanly.
#
# Cost: step 1's `npm ci` is replaced by a hardlink copy of this checkout's
# node_modules (the same lockfile, checked; .ci/run has just run `npm ci` or
# found it current). That does not change what is tested here - the daemon
# runs from the clone's own build, and step 2 sees a node_modules that
# matches the lockfile, as after a real `npm ci`. Step 2 runs with
# BERTH_CI_INNER=1, so it does not recurse into this check, the package check
# or the image build.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

fail() { echo "check-quick-start: FAILED: $*" >&2; exit 1; }
step() { printf 'check-quick-start: [%ss] %s\n' "$SECONDS" "$*"; }
[ "${BERTH_CI_INNER:-0}" != 1 ] || fail "called from inside the quick-start check (recursion)"

WORK=$(mktemp -d /tmp/berth-quick-start.XXXXXX)
DAEMON_PID=
cleanup() {
  if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then kill -TERM "$DAEMON_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

CLONE=$WORK/clone
HOME_DIR=$WORK/home
mkdir -p "$HOME_DIR"
git clone --quiet --no-hardlinks "$REPO" "$CLONE"
cmp -s "$REPO/package-lock.json" "$CLONE/package-lock.json" || fail "package-lock.json has uncommitted changes"
cp -al "$REPO/node_modules" "$CLONE/node_modules"

# A fresh user: nothing of berth's or of this shell's settings leaks in.
# (BERTH_CI_TESTS, when set, is handed on: it limits the inner suite to some files, for rehearsals.)
fresh_env=(env -i PATH="$PATH" HOME="$HOME_DIR" LANG=C.UTF-8 TERM=dumb BERTH_CI_TESTS="${BERTH_CI_TESTS:-}")

step "1. npm start (npm ci: the hardlinked node_modules)"
(cd "$CLONE" && exec "${fresh_env[@]}" npm start >"$WORK/daemon.out" 2>"$WORK/daemon.err") &
NPM_PID=$!
for _ in $(seq 1 600); do
  grep -q '^berth: watching' "$WORK/daemon.out" 2>/dev/null && break
  kill -0 "$NPM_PID" 2>/dev/null || { cat "$WORK/daemon.out" "$WORK/daemon.err" >&2; fail "npm start exited"; }
  sleep 0.5
done
grep '^berth: watching' "$WORK/daemon.out" || fail "npm start printed no start-up line within 300 s"
# The daemon is npm's grandchild (npm -> sh -> node): the node process running from the clone.
for pid in $(pgrep -f 'dist/src/cli/main.cjs run' || true); do
  [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$CLONE" ] && DAEMON_PID=$pid
done
[ -n "$DAEMON_PID" ] || fail "cannot find the daemon process npm start began"
# The README's paths: as root the system ones, else the XDG state dir under the fresh HOME.
if [ "$(id -u)" = 0 ]; then API=/run/berth/berth.sock; else API=$HOME_DIR/.local/state/berth/berth.sock; fi
[ -S "$API" ] || fail "no API socket at $API"

step "2. bash .ci/run with the daemon (pid $DAEMON_PID) running"
start=$SECONDS
(cd "$CLONE" && "${fresh_env[@]}" BERTH_CI_INNER=1 bash .ci/run) >"$WORK/ci.log" 2>&1 \
  || { tail -60 "$WORK/ci.log" >&2; fail "bash .ci/run failed beside the running daemon"; }
grep -E '^# (tests|pass|fail)' "$WORK/ci.log" || true
echo ".ci/run took $((SECONDS - start)) s"
grep -q 'skipping npm ci' "$WORK/ci.log" || fail ".ci/run reinstalled node_modules under the daemon"

step "the daemon is still up and ready, and stops cleanly"
kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died while .ci/run ran (see $WORK/daemon.err)"
(cd "$CLONE" && "${fresh_env[@]}" node dist/src/cli/main.cjs status >/dev/null) || fail "berth status failed"
kill -TERM "$DAEMON_PID"
rc=0
wait "$NPM_PID" || rc=$?
DAEMON_PID=
[ "$rc" = 0 ] || { tail -20 "$WORK/daemon.err" >&2; fail "npm start exited $rc after SIGTERM"; }
step "ok"
