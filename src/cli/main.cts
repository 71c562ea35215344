#!/usr/bin/env node
// berth's command line. CommonJS on purpose: an ES module entry makes node set up its ES module
// loader before the first line runs, about 4 ms of every start (issue 20); a `berth run` needs
// no ES module at all (its entry is the CommonJS run-entry.cjs), the other commands import theirs.
import fs = require('node:fs');
import path = require('node:path');
import url = require('node:url');

type RunEntry = typeof import('./run-entry.js', { with: { 'resolution-mode': 'import' }});
type Program = typeof import('./program.js', { with: { 'resolution-mode': 'import' }});

// The build bundles the CLI and daemon into dist/bundle/ (scripts/build.mjs): a few files
// instead of hundreds of modules, which is most of a start's cost. Without a bundle (running
// from the sources), or with BERTH_NO_BUNDLE=1 (stack traces that name dist/src's files, for
// debugging), the modules load one by one.
const bundle = path.join(__dirname, '../../bundle');
const fromBundle = process.env.BERTH_NO_BUNDLE !== '1' && fs.existsSync(path.join(bundle, 'program.js'));

async function main(args: string[]): Promise<number> {
  // A plain `berth run` skips the command-line program (run-args.ts says which are plain).
  const runEntry: RunEntry = fromBundle
    ? require(path.join(bundle, 'run-entry.cjs'))
    : await import('./run-entry.js');
  const runFlags = runEntry.parseRunArgs(args);
  if (runFlags !== undefined) return runEntry.runDaemonCli(runFlags);
  const { runCli }: Program = fromBundle
    ? await import(url.pathToFileURL(path.join(bundle, 'program.js')).href)
    : await import('./program.js');
  return runCli(args);
}

void main(process.argv.slice(2)).then((code) => {
  // A failure exits now (nothing left to finish); on success the process ends by
  // itself, or keeps serving for `berth run` and `berth example-plugin`.
  if (code === 0) process.exitCode = 0;
  else process.exit(code);
});
