/**
 * One registrar per plugins directory, with real `berth run` processes: a
 * second registrar is refused (exit 1, naming the directory and the owner's
 * pid and data dir), an observer is allowed, the directory is taken over
 * after `kill -9` of the owner, and a directory a running kubelet seems to
 * own (its device-plugins/kubelet.sock answers beside it) is refused unless
 * --force.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BERTH_CLI,
  runModule,
  serveSocket,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir } from '../src/testing/index.js';

const MAIN = BERTH_CLI;

test('one registrar per plugins directory', { timeout: 180_000 }, async (t) => {
  const dir = createTempDir('lock-');
  const children = new Set<ChildProcess>();
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    dir.remove();
  });
  const pluginsDir = dir.join('plugins');
  mkdirSync(pluginsDir);
  const run = (dataDir: string, ...extra: string[]) =>
    trackChild(
      spawnModule(MAIN, ['run', '--data-dir', dataDir, '--plugins-dir', pluginsDir, ...extra]),
      children,
    );

  const ownerDir = dir.join('owner');
  const owner = run(ownerDir);
  await waitForLine(owner, 'the owner started', (l) => l.startsWith('berth: watching'));

  // A second registrar, through another path to the same directory (a symlink): refused.
  const alias = dir.join('alias');
  symlinkSync(pluginsDir, alias);
  const second = await runModule(MAIN, ['run', '--data-dir', dir.join('second'), '--plugins-dir', alias]);
  assert.equal(second.code, 1, second.stderr);
  assert.equal(second.stderr.trimEnd().split('\n').length, 1, second.stderr);
  assert.match(second.stderr, /^berth: plugins directory .*alias already has a registrar: /);
  assert.ok(second.stderr.includes(`berth pid ${owner.child.pid} (data dir ${ownerDir})`), second.stderr);
  assert.match(second.stderr, /--observe/);

  // An observer is always allowed beside it.
  const observer = run(dir.join('observer'), '--observe');
  await waitForLine(observer, 'the observer started', (l) => l.startsWith('berth: observing'));
  await stopChild(observer.child, 'SIGTERM');

  // kill -9 frees the lock with the process: the next registrar takes the directory over.
  owner.child.kill('SIGKILL');
  await owner.exited;
  const heir = run(dir.join('heir'));
  await waitForLine(heir, 'the heir started', (l) => l.startsWith('berth: watching'));
  const third = await runModule(MAIN, ['run', '--data-dir', dir.join('third'), '--plugins-dir', pluginsDir]);
  assert.equal(third.code, 1);
  assert.ok(
    third.stderr.includes(`berth pid ${heir.child.pid} (data dir ${dir.join('heir')})`),
    third.stderr,
  );
});

test('a directory a running kubelet seems to own needs --force (or --observe)', {
  timeout: 120_000,
}, async (t) => {
  const dir = createTempDir('kubelet-');
  const children = new Set<ChildProcess>();
  const root = dir.join('var-lib-kubelet');
  const pluginsDir = join(root, 'plugins_registry');
  mkdirSync(pluginsDir, { recursive: true });
  mkdirSync(join(root, 'device-plugins'));
  const kubeletSocket = join(root, 'device-plugins', 'kubelet.sock');
  const kubelet = await serveSocket(kubeletSocket);
  t.after(async () => {
    await Promise.all([...children].map((child) => stopChild(child, 'SIGKILL', 1000)));
    await kubelet.close();
    dir.remove();
  });
  const args = (name: string) => ['run', '--data-dir', dir.join(name), '--plugins-dir', pluginsDir];

  const refused = await runModule(MAIN, args('refused'));
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /^berth: plugins directory .*plugins_registry looks owned by a running kubelet \(.*device-plugins\/kubelet\.sock answers\).*--observe.*--force/,
  );

  const observer = trackChild(spawnModule(MAIN, [...args('observer'), '--observe']), children);
  await waitForLine(observer, 'the observer started', (l) => l.startsWith('berth: observing'));
  await stopChild(observer.child, 'SIGTERM');

  const forced = trackChild(spawnModule(MAIN, [...args('forced'), '--force']), children);
  await waitForLine(forced, 'the forced registrar started', (l) => l.startsWith('berth: watching'));
  await stopChild(forced.child, 'SIGTERM');

  // A stopped kubelet (its socket gone) does not count.
  await kubelet.close();
  const after = trackChild(spawnModule(MAIN, args('after')), children);
  await waitForLine(after, 'the registrar started', (l) => l.startsWith('berth: watching'));
});
