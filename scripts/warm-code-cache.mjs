// Starts `berth run` once from the fresh build, in a throwaway data
// directory, so the daemon bundle's code cache is written beside it
// (src/cli/code-cache.ts): the first `berth run` after `npm run build` or an
// install from `npm pack` then starts as fast as any later one. The daemon
// writes the cache once it is ready; this waits for the file, then stops it.
// Failing to warm is reported and does not fail the build: the first real
// start writes the cache instead.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const TIMEOUT_MS = 60_000;

export async function warmCodeCache(dist, bundle, manifestName) {
  const { file } = JSON.parse(readFileSync(join(bundle, manifestName), 'utf8'));
  const cache = join(bundle, `${file}.v8cache`);
  const dir = mkdtempSync(join(tmpdir(), 'berth-warm-'));
  // Own data directory and no config file, whoever runs the build (root included); the cache
  // goes beside the bundle whatever the environment says.
  const env = { ...process.env, BERTH_DATA_DIR: dir, BERTH_NO_BUNDLE: '' };
  delete env.BERTH_CODE_CACHE_DIR;
  delete env.NOTIFY_SOCKET;
  const child = spawn(
    process.execPath,
    [join(dist, 'src/cli/main.cjs'), 'run', '--data-dir', dir, '--log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'inherit'], env },
  );
  const exited = new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
  try {
    const deadline = Date.now() + TIMEOUT_MS;
    let ended;
    exited.then((how) => {
      ended = how;
    });
    while (!existsSync(cache) && ended === undefined && Date.now() < deadline) await sleep(20);
    if (!existsSync(cache)) {
      console.warn(
        `build: no code cache for the daemon bundle (berth run ${ended === undefined ? 'timed out' : `exited: ${ended}`}); the first start will write it`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
