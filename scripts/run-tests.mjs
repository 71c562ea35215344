// Runs every compiled test file under dist/ with node's test runner.
// Node 20's `node --test` takes no globs, so the files are listed here.
// Usage: node scripts/run-tests.mjs [path-substring ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
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

const filters = process.argv.slice(2);
const files = [...collect('dist/src', []), ...collect('dist/test', [])]
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no compiled test files found under dist/ (run `npm run build` first)');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=240000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
