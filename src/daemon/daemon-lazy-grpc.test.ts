import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createTempDir } from '../testing/index.js';

/** What a daemon start must not load: the gRPC side is loaded by the first plugin that needs it (issue 20). */
const GRPC_SIDE = [
  /\/node_modules\/@grpc\/grpc-js\//,
  /\/node_modules\/@bufbuild\/protobuf\//,
  /\/gen\/.*_pb\.js$/,
];

test('a daemon start on the default handlers loads no grpc-js, protobuf-es or generated messages', (t) => {
  const dir = createTempDir();
  t.after(() => dir.remove());
  const loaded = join(dir.path, 'loaded.txt');
  const hooks = join(dir.path, 'hooks.mjs');
  // A load hook (in the loader's own thread) appends every module URL as it loads; the child
  // appends a marker once the daemon is ready, so what loaded before it is what the start loaded.
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(loaded)}, url + '\\n');
  return next(url, context);
}
`,
  );
  const url = (relative: string) => new URL(relative, import.meta.url).href;
  const child = join(dir.path, 'child.mjs');
  writeFileSync(
    child,
    `import { register } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const { resolveDaemonConfig } = await import(${JSON.stringify(url('./config/config.js'))});
const { createDaemon } = await import(${JSON.stringify(url('./index.js'))});
const { silentLogger } = await import(${JSON.stringify(url('../common/index.js'))});
const config = resolveDaemonConfig({}, { dataDir: ${JSON.stringify(join(dir.path, 'data'))} }, { env: {} });
const daemon = createDaemon(config, { logger: silentLogger });
await daemon.start();
if (!daemon.ready) throw new Error('the daemon is not ready');
appendFileSync(${JSON.stringify(loaded)}, 'READY\\n');
// The control: the CSI wire module does load the gRPC side, and the hook sees it.
await import(${JSON.stringify(url('../handlers/csi/csi-wire.js'))});
await daemon.stop();
`,
  );
  const run = spawnSync(process.execPath, [child], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const lines = readFileSync(loaded, 'utf8').trim().split('\n');
  const ready = lines.indexOf('READY');
  assert.ok(ready > 0, 'the daemon started');
  const atStart = lines.slice(0, ready);
  const grpcAtStart = atStart.filter((line) => GRPC_SIDE.some((pattern) => pattern.test(line)));
  assert.deepEqual(grpcAtStart, [], 'modules of the gRPC side loaded by the start');
  // Handlers were loaded (their light modules), so the check looked at a real start.
  assert.ok(atStart.some((line) => line.endsWith('/handlers/csi/csi-handler.js')));
  assert.ok(atStart.some((line) => line.endsWith('/handlers/device-plugin/legacy-registration-server.js')));
  const afterReady = lines.slice(ready + 1);
  for (const pattern of GRPC_SIDE) {
    assert.ok(
      afterReady.some((line) => pattern.test(line)),
      `the control import loads ${pattern} (the hook would have seen it)`,
    );
  }
});
