// Counts the public surface with the TypeScript checker: the names each
// package.json `exports` subpath exports (re-exports followed, `export *`
// expanded), and the source files per top-level folder.
// Usage: node scripts/count-exports.mjs [--json]
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readSurface, root } from './api-surface.mjs';

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

const perSubpath = {};
let total = 0;
for (const { subpath, names } of readSurface({ withSignatures: false })) {
  perSubpath[subpath] = names.length;
  total += names.length;
}

const files = walk(join(root, 'src')).filter((f) => f.endsWith('.ts') && !f.includes('/gen/'));
const perFolder = {};
for (const f of files) {
  const folder = relative(join(root, 'src'), f).split('/')[0];
  perFolder[folder] ??= { source: 0, tests: 0 };
  const bucket = perFolder[folder];
  if (/\.test\.ts$/.test(f)) bucket.tests += 1;
  else bucket.source += 1;
}

const result = { exportedNames: total, perSubpath, filesPerFolder: perFolder };
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`exported names (all package.json exports subpaths, by the TypeScript checker): ${total}`);
  for (const [subpath, n] of Object.entries(perSubpath)) console.log(`  ${subpath}: ${n}`);
  console.log('files per folder (source / tests):');
  for (const [folder, c] of Object.entries(perFolder).sort())
    console.log(`  ${folder}: ${c.source} / ${c.tests}`);
}
