/**
 * The bin's shebang carries NODE_FLAGS, and the kernel's shebang handling
 * (through `env -S`) really starts node with them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTempDir } from '../testing/index.js';
import { NODE_FLAGS } from './node-options.js';

const BIN = fileURLToPath(new URL('./main.js', import.meta.url));

test('the bin starts node with NODE_FLAGS through its shebang', (t) => {
  const shebang = readFileSync(BIN, 'utf8').split('\n', 1)[0];
  assert.equal(shebang, `#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`);

  const dir = createTempDir();
  t.after(() => dir.remove());
  const seen = join(dir.path, 'exec-argv.json');
  const probe = join(dir.path, 'probe.cjs');
  writeFileSync(
    probe,
    `require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.execArgv));\n`,
  );
  // The bin itself, as a program (the build makes it executable), not `node main.js`.
  const result = spawnSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: {
      ...process.env,
      NODE_OPTIONS: `--require ${probe}`,
      PATH: `${join(process.execPath, '..')}:${process.env.PATH}`,
    },
  });
  assert.equal(result.status, 0, result.stderr);
  const execArgv = JSON.parse(readFileSync(seen, 'utf8')) as string[];
  for (const flag of NODE_FLAGS) assert.ok(execArgv.includes(flag), `${flag} in ${JSON.stringify(execArgv)}`);
});
