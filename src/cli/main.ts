#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseRunArgs } from './run-args.js';

// The build bundles the CLI and daemon into dist/bundle/ (scripts/build.mjs):
// a few files instead of hundreds of modules, which is most of a start's cost.
// Without a bundle (running from the sources), or with BERTH_NO_BUNDLE=1 (stack traces that
// name dist/src's files, for debugging), the modules load one by one.
const fromBundle =
  process.env.BERTH_NO_BUNDLE !== '1' && existsSync(new URL('../../bundle/program.js', import.meta.url));
const args = process.argv.slice(2);
// A plain `berth run` skips the command-line program (run-args.ts says which are plain).
const runFlags = parseRunArgs(args);
let code: number;
if (runFlags !== undefined) {
  // The bundle's run entry is CommonJS (scripts/bundle.mjs says why): require()d.
  const { runDaemonCli }: typeof import('./run-entry.js') = fromBundle
    ? createRequire(import.meta.url)(fileURLToPath(new URL('../../bundle/run-entry.cjs', import.meta.url)))
    : await import('./run-entry.js');
  code = await runDaemonCli(runFlags);
} else {
  const { runCli }: typeof import('./program.js') = fromBundle
    ? await import(new URL('../../bundle/program.js', import.meta.url).href)
    : await import('./program.js');
  code = await runCli(args);
}
// A failure exits now (nothing left to finish); on success the process ends by
// itself, or keeps serving for `berth run` and `berth example-plugin`.
if (code === 0) process.exitCode = 0;
else process.exit(code);
