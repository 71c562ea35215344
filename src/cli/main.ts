#!/usr/bin/env -S node --max-semi-space-size=4
import { existsSync } from 'node:fs';

// The build bundles the CLI and daemon into dist/bundle/ (scripts/build.mjs):
// a few files instead of hundreds of modules, which is most of a start's cost.
// Without a bundle (running from the sources), or with BERTH_NO_BUNDLE=1 (stack traces that
// name dist/src's files, for debugging), the modules load one by one.
const bundle = new URL('../../bundle/program.js', import.meta.url);
const { runCli }: typeof import('./program.js') =
  process.env.BERTH_NO_BUNDLE !== '1' && existsSync(bundle)
    ? await import(bundle.href)
    : await import('./program.js');

const code = await runCli(process.argv.slice(2));
// A failure exits now (nothing left to finish); on success the process ends by
// itself, or keeps serving for `berth run` and `berth example-plugin`.
if (code === 0) process.exitCode = 0;
else process.exit(code);
