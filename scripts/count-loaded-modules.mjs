// Counts the modules one import loads: every ESM module the loader sees (a
// load hook in its own thread appends each URL to a file) plus every CommonJS
// file require() pulls in behind them (require.cache at exit). Node built-ins
// are not counted. Usage: node scripts/count-loaded-modules.mjs berth/plugin-node [--list]
// [-- args the imported module sees in process.argv, e.g. ./dist/src/cli/main.cjs -- --version]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const specifier = process.argv[2] ?? 'berth/plugin-node';
const dashes = process.argv.indexOf('--');
const own = dashes === -1 ? process.argv : process.argv.slice(0, dashes);
const list = own.includes('--list');
const args = dashes === -1 ? [] : process.argv.slice(dashes + 1);
const dir = mkdtempSync(join(tmpdir(), 'berth-modules-'));
const log = join(dir, 'loaded.txt');
const hooks = join(dir, 'hooks.mjs');
writeFileSync(
  hooks,
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}
`,
);
const preload = join(dir, 'preload.mjs');
writeFileSync(
  preload,
  `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(`file://${hooks}`)});
const require = createRequire(import.meta.url);
process.on('exit', () => {
  for (const file of Object.keys(require.cache)) appendFileSync(${JSON.stringify(log)}, pathToFileURL(file).href + '\\n');
});
`,
);
writeFileSync(log, '');
const root = fileURLToPath(new URL('..', import.meta.url));
const run = spawnSync(
  process.execPath,
  [
    '--import',
    `file://${preload}`,
    '--input-type=module',
    '-e',
    `process.argv.splice(1, Infinity, ${JSON.stringify(specifier)}, ...${JSON.stringify(args)}); await import(${JSON.stringify(specifier)})`,
  ],
  {
    cwd: root,
    encoding: 'utf8',
  },
);
if (run.status !== 0) {
  process.stderr.write(run.stderr);
  process.exit(1);
}
const urls = new Set(
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u !== '' && !u.startsWith(`file://${dir}`)),
);
rmSync(dir, { recursive: true, force: true });
const berth = [...urls].filter((u) => !u.includes('/node_modules/'));
if (list) for (const u of [...urls].sort()) console.log(u.replace(`file://${root}`, ''));
console.log(
  JSON.stringify({
    specifier,
    args,
    modules: urls.size,
    berth: berth.length,
    dependencies: urls.size - berth.length,
  }),
);
