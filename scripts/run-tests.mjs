// Runs every compiled test file under dist/ with node's test runner.
// Node 20's `node --test` takes no globs, so the files are listed here.
// Usage: node scripts/run-tests.mjs [path-substring ...]
//
// The tests never see the real home: they run with a fresh temp HOME (and XDG
// dirs inside it), no BERTH_* variables and no npm user config, so a daemon
// started from this checkout (`npm start`, with its token under
// ~/.local/state/berth) or a developer's environment cannot change what they
// see. After the run, berth's real state and config dirs must not have
// appeared (test/test-environment.test.ts checks the environment from inside).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) collect(full, out);
    else if (name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

/** The environment the test processes get: the caller's, minus what points at real user state. */
function testEnvironment(outer, home) {
  const env = {};
  for (const [key, value] of Object.entries(outer)) {
    if (key.startsWith('BERTH_') || key.startsWith('XDG_') || /^npm_config_/i.test(key)) continue;
    env[key] = value;
  }
  env.HOME = home;
  env.XDG_STATE_HOME = join(home, '.local', 'state');
  env.XDG_CONFIG_HOME = join(home, '.config');
  env.XDG_DATA_HOME = join(home, '.local', 'share');
  env.XDG_CACHE_HOME = join(home, '.cache');
  env.XDG_RUNTIME_DIR = join(home, 'run');
  return env;
}

/** berth's directories in the real home and on the system; none may appear during a run. */
function realBerthPaths(outer) {
  const home = outer.HOME || homedir();
  return [
    join(outer.XDG_STATE_HOME || join(home, '.local', 'state'), 'berth'),
    join(outer.XDG_CONFIG_HOME || join(home, '.config'), 'berth'),
    join(home, '.local', 'state', 'berth'),
    join(home, '.config', 'berth'),
    '/var/lib/berth',
    '/run/berth',
    '/etc/berth',
  ];
}

const filters = process.argv.slice(2);
const files = [...collect('dist/src', []), ...collect('dist/test', [])]
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no compiled test files found under dist/ (run `npm run build` first)');
  process.exit(1);
}

const home = mkdtempSync('/tmp/berth-test-home-');
for (const dir of ['.local/state', '.config', '.local/share', '.cache'])
  mkdirSync(join(home, dir), { recursive: true });
mkdirSync(join(home, 'run'), { mode: 0o700 });
const watched = realBerthPaths(process.env).filter((path) => !existsSync(path));

const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=240000', ...files],
  { stdio: 'inherit', env: testEnvironment(process.env, home) },
);
rmSync(home, { recursive: true, force: true });

const appeared = watched.filter((path) => existsSync(path));
if (appeared.length > 0) {
  console.error(`run-tests: the tests created berth's real directories: ${appeared.join(', ')}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
