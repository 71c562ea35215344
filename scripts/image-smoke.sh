#!/bin/sh
# Runs inside the built image (scripts/build-image.sh): starts `berth run` on a
# scratch data dir, waits for GET /readyz to answer 200 over the API socket,
# then stops it with SIGTERM and expects a clean exit.
set -eu
dir=$(mktemp -d)
berth run --data-dir "$dir/data" --plugins-dir "$dir/plugins" >"$dir/out.log" 2>"$dir/err.log" &
pid=$!
ready=0
i=0
while [ "$i" -lt 300 ]; do
  if node -e '
    const req = require("node:http").get({ socketPath: process.argv[1], path: "/readyz" }, (res) => {
      process.exit(res.statusCode === 200 ? 0 : 1);
    });
    req.on("error", () => process.exit(1));
  ' "$dir/data/berth.sock" 2>/dev/null; then ready=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  i=$((i + 1))
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "image-smoke: berth did not become ready" >&2
  cat "$dir/out.log" "$dir/err.log" >&2
  kill "$pid" 2>/dev/null || true
  exit 1
fi
echo "image-smoke: /readyz 200; $(cat "$dir/out.log")"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
if [ "$rc" != 0 ]; then
  echo "image-smoke: berth exited $rc after SIGTERM" >&2
  cat "$dir/err.log" >&2
  exit 1
fi
echo "image-smoke: stopped cleanly"
