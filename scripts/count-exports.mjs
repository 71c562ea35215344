// Counts the public surface: the names exported by every src/**/index.ts (and
// the other package entry points), and the source files per top-level folder.
// Usage: node scripts/count-exports.mjs [--json]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/** Names exported by one module's `export { ... }` / `export type { ... }` lists and declarations. */
export function exportedNames(source) {
  const names = new Set();
  for (const m of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[1].split(',')) {
      const item = part.trim().replace(/^type\s+/, '');
      if (item === '') continue;
      const as = item.split(/\s+as\s+/);
      names.add((as[1] ?? as[0]).trim());
    }
  }
  for (const m of source.matchAll(
    /export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g,
  )) {
    names.add(m[1]);
  }
  return names;
}

const entries = Object.values(pkg.exports)
  .map((e) => (typeof e === 'object' ? e.default : undefined))
  .filter((p) => typeof p === 'string' && p.startsWith('./dist/src/'))
  .map((p) => p.replace('./dist/', '').replace(/\.js$/, '.ts'));

const perEntry = {};
let total = 0;
for (const entry of entries) {
  const names = exportedNames(readFileSync(join(root, entry), 'utf8'));
  perEntry[entry] = names.size;
  total += names.size;
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

const result = { exportedSymbols: total, perEntry, filesPerFolder: perFolder };
if (process.argv.includes('--json')) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`exported symbols (package entry points): ${total}`);
  for (const [entry, n] of Object.entries(perEntry)) console.log(`  ${entry}: ${n}`);
  console.log('files per folder (source / tests):');
  for (const [folder, c] of Object.entries(perFolder).sort())
    console.log(`  ${folder}: ${c.source} / ${c.tests}`);
}
