import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTempDir } from '../testing/index.js';
import { runCli } from './program.js';

async function run(args: string[]) {
  const errors: string[] = [];
  const code = await runCli(args, { error: (line) => errors.push(line), out: () => {} });
  return { code, errors };
}

describe("berth run: a plugins directory holding berth's own sockets is refused (issue 17)", () => {
  it('the data directory itself: exit 2 naming both', async () => {
    await using dir = createTempDir('berth-own-');
    const { code, errors } = await run(['run', '--data-dir', dir.path, '--plugins-dir', dir.path]);
    assert.equal(code, 2);
    assert.equal(errors.length, 1);
    assert.match(
      errors[0] ?? '',
      new RegExp(`pluginsDir ${dir.path} is the data directory ${dir.path}, which holds berth's own sockets`),
    );
  });

  it('a directory above the data directory (holding berth.sock): exit 2 naming both', async () => {
    await using dir = createTempDir('berth-own-');
    const dataDir = join(dir.path, 'state');
    const { code, errors } = await run(['run', '--data-dir', dataDir, '--plugins-dir', dir.path]);
    assert.equal(code, 2);
    assert.match(
      errors[0] ?? '',
      new RegExp(`pluginsDir ${dir.path} contains berth's own socket ${join(dataDir, 'berth.sock')}`),
    );
  });

  it("a directory holding the legacy device-plugin socket (the data dir's device-plugins): exit 2", async () => {
    await using dir = createTempDir('berth-own-');
    const pluginsDir = join(dir.path, 'device-plugins');
    const { code, errors } = await run(['run', '--data-dir', dir.path, '--plugins-dir', pluginsDir]);
    assert.equal(code, 2);
    assert.match(
      errors[0] ?? '',
      new RegExp(`pluginsDir ${pluginsDir} contains berth's own socket ${join(pluginsDir, 'kubelet.sock')}`),
    );
  });
});
