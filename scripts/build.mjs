// `npm run build`: tsc into dist/, then removes compiled files whose source is
// gone (a stale *.test.js would still run, a stale module could still be
// imported).
//
// dist/ is never deleted first: a daemon started from this checkout
// (`npm start`) keeps importing its lazily loaded modules from dist/ while the
// test command rebuilds (deleting it left them missing for the whole 30-40 s
// compile). Nor can tsc build elsewhere and swap: the tests import berth by
// its own package name (`berth/registry`), whose exports point into dist/,
// and tsc maps those back to the sources only when it emits to that outDir.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { buildBundles, DAEMON_MANIFEST } from './bundle.mjs';
import { warmCodeCache } from './warm-code-cache.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'dist');

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
chmodSync(join(dist, 'src/cli/main.cjs'), 0o755);

/** The .ts file a compiled file came from (dist/src/a/b.js.map -> src/a/b.ts; .cjs -> .cts). */
function sourceOf(file) {
  const rel = relative(dist, file);
  const match = /(\.d)?\.(c?)(js|ts)(\.map)?$/.exec(rel);
  return match === null ? undefined : join(root, `${rel.slice(0, match.index)}.${match[2]}ts`);
}

/** Deletes compiled files without a source; returns whether the directory is now empty. */
function prune(dir) {
  let empty = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (prune(path)) rmdirSync(path);
      else empty = false;
      continue;
    }
    const source = sourceOf(path);
    if (source !== undefined && !existsSync(source)) rmSync(path, { force: true });
    else empty = false;
  }
  return empty;
}
prune(dist);

// The bundles (scripts/bundle.mjs): the CLI, the SQLite writer thread's entry
// and the daemon in a few files under dist/bundle/, which dist/src/cli/main.cjs
// (the bin) loads when they exist. Loading berth's ~400 modules and their
// dependencies one by one was most of `berth run`'s start (resolution,
// package.json reads, stat and open calls per module).
//
// Like dist/src, the bundle directory is not deleted first: a daemon started
// from this checkout imports its lazy chunks from it while the test command
// rebuilds. Chunk names carry their content's hash, so an unchanged chunk is
// rewritten in place under its own name; files the new build did not write
// (old chunks, the code cache of the previous daemon bundle) are removed
// afterwards, and one start of the new build writes the daemon's code cache.
const bundle = join(dist, 'bundle');
const written = new Set(await buildBundles(dist, bundle));
for (const name of readdirSync(bundle)) {
  const file = join(bundle, name);
  if (!written.has(resolve(file))) rmSync(file, { recursive: true, force: true });
}
await warmCodeCache(dist, bundle, DAEMON_MANIFEST);
