import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBerthError } from '../common/index.js';
import { createHandlerTable } from './handler-table.js';
import { SerialQueues } from './serial-queues.js';
import type { PluginCallContext, PluginHandler } from './types.js';

const context: PluginCallContext = { type: 'T', socketPath: '/tmp/p.sock', foundInDeprecatedDir: false };

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Records "start <op> <name>" / "end <op> <name>" and blocks each call on a gate the test opens. */
function recordingHandler() {
  const log: string[] = [];
  const gates = new Map<string, Deferred>();
  const gate = (key: string) => {
    let d = gates.get(key);
    if (d === undefined) {
      d = deferred();
      gates.set(key, d);
    }
    return d;
  };
  const step = async (op: string, name: string) => {
    log.push(`start ${op} ${name}`);
    await gate(`${op} ${name}`).promise;
    log.push(`end ${op} ${name}`);
  };
  const handler: PluginHandler = {
    validatePlugin: (name) => step('validate', name),
    registerPlugin: (name) => step('register', name),
    deRegisterPlugin: (name) => step('deregister', name),
  };
  return { handler, log, open: (key: string) => gate(key).resolve() };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('calls for one plugin name never interleave and run in call order', async () => {
  const table = createHandlerTable();
  const rec = recordingHandler();
  table.add('T', rec.handler);
  const h = table.get('T');
  assert.ok(h);

  const validate = h.validatePlugin('a', '/e', ['v1'], context);
  const register = h.registerPlugin('a', '/e', ['v1'], context);
  const deregister = h.deRegisterPlugin('a', '/e', context);

  await until(() => rec.log.length === 1, 'validate to start');
  // Open the later gates first: they still must wait for the earlier calls.
  rec.open('deregister a');
  rec.open('register a');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(rec.log, ['start validate a']);
  rec.open('validate a');
  await Promise.all([validate, register, deregister]);
  assert.deepEqual(rec.log, [
    'start validate a',
    'end validate a',
    'start register a',
    'end register a',
    'start deregister a',
    'end deregister a',
  ]);
});

test('calls for different names run concurrently', async () => {
  const table = createHandlerTable();
  const rec = recordingHandler();
  table.add('T', rec.handler);
  const h = table.get('T');
  assert.ok(h);
  const a = h.registerPlugin('a', '/a', [], context);
  const b = h.registerPlugin('b', '/b', [], context);
  // Both are inside the handler at once: neither waits for the other.
  await until(() => rec.log.length === 2, 'both registers to start');
  assert.deepEqual([...rec.log].sort(), ['start register a', 'start register b']);
  rec.open('register b');
  await b;
  assert.ok(!rec.log.includes('end register a'));
  rec.open('register a');
  await a;
});

test('the same name under different types is not serialised together', async () => {
  const table = createHandlerTable();
  const one = recordingHandler();
  const two = recordingHandler();
  table.add('One', one.handler);
  table.add('Two', two.handler);
  const p1 = table.get('One')?.validatePlugin('same', '/1', [], context);
  const p2 = table.get('Two')?.validatePlugin('same', '/2', [], context);
  await until(() => one.log.length === 1 && two.log.length === 1, 'both validates to start');
  one.open('validate same');
  two.open('validate same');
  await Promise.all([p1, p2]);
});

test('a handler that throws synchronously or rejects fails only that call', async () => {
  const table = createHandlerTable();
  const seen: string[] = [];
  table.add('T', {
    validatePlugin(name) {
      seen.push(`validate ${name}`);
      throw new Error('sync boom');
    },
    async registerPlugin(name) {
      seen.push(`register ${name}`);
      throw new Error('async boom');
    },
    deRegisterPlugin(name) {
      seen.push(`deregister ${name}`);
    },
  });
  const h = table.get('T');
  assert.ok(h);
  const v = h.validatePlugin('a', '/e', [], context);
  assert.ok(v instanceof Promise, 'a synchronous throw surfaces as a rejected promise, not a throw');
  await assert.rejects(v, /sync boom/);
  await assert.rejects(Promise.resolve(h.registerPlugin('a', '/e', [], context)), /async boom/);
  await h.deRegisterPlugin('a', '/e', context);
  assert.deepEqual(seen, ['validate a', 'register a', 'deregister a']);
});

test('a replacement handler waits for the previous handler’s running call for the same name', async () => {
  const table = createHandlerTable();
  const old = recordingHandler();
  table.add('T', old.handler);
  const first = table.get('T')?.registerPlugin('a', '/e', [], context);
  await until(() => old.log.length === 1, 'old register to start');
  const replacement = recordingHandler();
  table.add('T', replacement.handler);
  const second = table.get('T')?.deRegisterPlugin('a', '/e', context);
  replacement.open('deregister a');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(replacement.log, []);
  old.open('register a');
  await Promise.all([first, second]);
  assert.deepEqual(replacement.log, ['start deregister a', 'end deregister a']);
});

test('add, get, remove, types and onAdded', () => {
  const table = createHandlerTable();
  const added: string[] = [];
  const unsubscribe = table.onAdded((type) => added.push(type));
  table.onAdded(() => {
    throw new Error('listener failure is contained');
  });
  const handler: PluginHandler = {
    validatePlugin() {},
    registerPlugin() {},
    deRegisterPlugin() {},
  };
  assert.equal(table.get('B'), undefined);
  table.add('B', handler);
  table.add('A', handler);
  assert.deepEqual(table.types(), ['A', 'B']);
  assert.equal(table.has('A'), true);
  const wrapper = table.get('A');
  assert.ok(wrapper);
  assert.notEqual(wrapper, handler, 'get returns the serialising wrapper');
  assert.equal(table.get('A'), wrapper, 'the wrapper is stable while the handler is unchanged');
  unsubscribe();
  table.add('C', handler);
  assert.deepEqual(added, ['B', 'A']);
  assert.equal(table.remove('A'), true);
  assert.equal(table.remove('A'), false);
  assert.equal(table.get('A'), undefined);
  assert.deepEqual(table.types(), ['B', 'C']);
});

test('bad handlers and types are refused with clear errors', () => {
  const table = createHandlerTable();
  assert.throws(
    () => table.add('', { validatePlugin() {}, registerPlugin() {}, deRegisterPlugin() {} }),
    (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT'),
  );
  assert.throws(
    () => table.add('T', { validatePlugin() {} } as unknown as PluginHandler),
    (err: unknown) => isBerthError(err, 'BERTH_INVALID_ARGUMENT') && /deRegisterPlugin/.test(err.message),
  );
});

test('serial queues drop a key once it is idle', async () => {
  const queues = new SerialQueues();
  const gate = deferred();
  const a = queues.run('k', () => gate.promise);
  const b = queues.run('k', () => 'second');
  const c = queues.run('other', () => 'other');
  assert.equal(queues.activeKeys, 2);
  assert.equal(await c, 'other');
  gate.resolve();
  await a;
  assert.equal(await b, 'second');
  await until(() => queues.activeKeys === 0, 'keys to be dropped');
  // A key that failed is dropped too, and later calls still run.
  await assert.rejects(
    queues.run('k', () => {
      throw new Error('x');
    }),
    /x/,
  );
  assert.equal(await queues.run('k', () => 1), 1);
  await until(() => queues.activeKeys === 0, 'keys to be dropped after a failure');
});
