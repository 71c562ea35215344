// Decides whether .ci/run may (re)install node_modules with `npm ci`.
//
// The README's quick start is `npm ci && npm start`, then `bash .ci/run` while
// that daemon still runs. `npm ci` deletes node_modules first, pulling the
// files from under the running daemon (its lazily loaded modules, its SQLite
// addon's package). So:
//   - node_modules already matches package-lock.json: skip `npm ci` (exit 10);
//   - it does not, and a berth daemon runs from this checkout: refuse, naming
//     the process (exit 20);
//   - otherwise: install (exit 0).
// "Matches": npm's own record of the tree (node_modules/.package-lock.json)
// has every package of the lockfile at its version and integrity (platform
// packages marked optional may be absent), nothing more, and each recorded
// package's package.json on disk has that version.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Why node_modules does not match the lockfile, or undefined when it does. */
function mismatch() {
  const lock = readJson(join(root, 'package-lock.json'))?.packages;
  const installed = readJson(join(root, 'node_modules', '.package-lock.json'))?.packages;
  if (lock === undefined) return 'no package-lock.json';
  if (installed === undefined)
    return 'no node_modules/.package-lock.json (node_modules missing or not from npm)';
  for (const [path, entry] of Object.entries(lock)) {
    if (path === '') continue;
    const have = installed[path];
    if (have === undefined) {
      if (entry.optional) continue;
      return `${path} is not installed`;
    }
    if (have.version !== entry.version || have.integrity !== entry.integrity) {
      return `${path} is ${have.version}, the lockfile wants ${entry.version}`;
    }
    if (have.link) continue;
    const onDisk = readJson(join(root, path, 'package.json'))?.version;
    if (onDisk !== entry.version)
      return `${path}/package.json says ${onDisk ?? 'nothing'}, expected ${entry.version}`;
  }
  for (const path of Object.keys(installed)) {
    if (!(path in lock)) return `${path} is installed but not in the lockfile`;
  }
  return undefined;
}

/** berth daemons (`.../dist/src/cli/main.cjs run`) started from this checkout. */
function daemonsFromHere() {
  const found = [];
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return found; // no /proc: cannot tell, assume none
  }
  const main = join(root, 'dist', 'src', 'cli', 'main.cjs');
  for (const pid of pids) {
    let argv;
    let cwd;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone, or not ours to read
    }
    const script = argv.find((arg) => arg.endsWith(join('dist', 'src', 'cli', 'main.cjs')));
    if (script === undefined || !argv.includes('run')) continue;
    if (resolve(cwd, script) === main) found.push(`${pid} (${argv.join(' ')})`);
  }
  return found;
}

const why = mismatch();
if (why === undefined) {
  console.log('ci-install-guard: node_modules matches package-lock.json; skipping npm ci');
  process.exit(10);
}
const daemons = daemonsFromHere();
if (daemons.length > 0) {
  console.error(
    `ci-install-guard: node_modules does not match package-lock.json (${why}), and npm ci would ` +
      `delete it under the berth daemon running from this checkout: pid ${daemons.join(', pid ')}. ` +
      'Stop the daemon, then run .ci/run again.',
  );
  process.exit(20);
}
console.log(`ci-install-guard: ${why}; running npm ci`);
process.exit(0);
