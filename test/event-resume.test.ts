/**
 * Resumable event streams on a real daemon: every event has an id,
 * `Last-Event-ID` replays what a client missed from the ring or sends
 * `reset` when the id is too old, a bad id is a 400, each listener has its
 * own stream budget, and `berth events` resumes by itself after its
 * connection is cut (a pausable TCP proxy stands between it and the daemon).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import type { ConfigFile } from '../src/daemon/index.js';
import { createDaemon, type Daemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { createExamplePlugin } from '../src/registration/index.js';
import {
  BERTH_CLI,
  spawnModule,
  startPausableProxy,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, type TempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
const EXAMPLE = 'example.com/berth-example';

async function startDaemon(dir: TempDir, file: ConfigFile = {}): Promise<Daemon> {
  const config = resolveDaemonConfig(
    { listen: { host: '127.0.0.1', port: 0 }, ...file },
    { dataDir: dir.join('data') },
    { env: {} },
  );
  const daemon = createDaemon(config, { logger: silentLogger });
  await daemon.start();
  return daemon;
}

interface Stream {
  status: number;
  text: () => string;
  /** The `id:`/`event:` pairs received so far. */
  events: () => Array<{ id: number; event: string; data: Record<string, unknown> }>;
  close: () => void;
}

/** Opens GET `path` and keeps what arrives; resolves once the answer's status is known. */
function openStream(
  where: { socketPath: string } | { port: number; token: string },
  path: string,
  headers: Record<string, string> = {},
): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const target =
      'socketPath' in where
        ? { socketPath: where.socketPath }
        : {
            host: '127.0.0.1',
            port: where.port,
            headers: { ...headers, authorization: `Bearer ${where.token}` },
          };
    const req = request({ headers, ...target, path, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('error', () => {});
      resolve({
        status: res.statusCode ?? 0,
        text: () => text,
        events: () =>
          text
            .split('\n\n')
            .filter((block) => block.startsWith('id: '))
            .map((block) => {
              const [id, event, data] = block.split('\n');
              return {
                id: Number(id?.slice(4)),
                event: event?.slice(7) ?? '',
                data: JSON.parse(data?.slice(6) ?? '{}'),
              };
            }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
}

/** How many clients follow an event stream, from /v1/status. */
async function eventClients(daemon: Daemon): Promise<number> {
  const stream = await openStream({ socketPath: daemon.apiAddress.socketPath }, '/v1/status');
  await waitFor('the status', () => {
    try {
      return JSON.parse(stream.text());
    } catch {
      return undefined;
    }
  });
  return JSON.parse(stream.text()).counts.eventClients as number;
}

async function addPlugin(t: { after: (fn: () => unknown) => void }, daemon: Daemon, name: string) {
  const plugin = createExamplePlugin({
    socketPath: join(daemon.config.pluginsDir, `${name}.sock`),
    name,
    type: EXAMPLE,
    versions: ['v1beta1'],
  });
  t.after(() => plugin.stop());
  await plugin.start();
  await daemon.registry.waitForPlugin(EXAMPLE, name, {});
  return plugin;
}

describe('resumable event streams', () => {
  it('numbers events, replays after Last-Event-ID, resets an id the ring lost, refuses a bad id', async (t) => {
    await using dir = createTempDir('berth-resume-');
    const daemon = await startDaemon(dir, { api: { eventRingSize: 3 } });
    t.after(() => daemon.stop());
    const unix = { socketPath: daemon.apiAddress.socketPath };
    const live = await openStream(unix, `/v1/events?type=${encodeURIComponent(EXAMPLE)}`);
    t.after(() => live.close());
    assert.equal(live.status, 200);
    await addPlugin(t, daemon, 'one');
    await waitFor('the first registration', () => live.events().some((e) => e.event === 'registered'));
    const first = live.events().find((e) => e.event === 'registered');
    assert.ok(first);

    await addPlugin(t, daemon, 'two');
    await waitFor(
      'the second registration',
      () => live.events().filter((e) => e.event === 'registered').length === 2,
    );
    const ids = live.events().map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'ids increase',
    );
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');

    // A client that saw the first registration resumes: it gets exactly what followed, in order.
    const resumed = await openStream(unix, `/v1/events?type=${encodeURIComponent(EXAMPLE)}`, {
      'last-event-id': String(first.id),
    });
    t.after(() => resumed.close());
    await waitFor('the replay', () => resumed.events().some((e) => e.data.plugin !== undefined));
    const after = live.events().filter((e) => e.id > first.id);
    await waitFor('the whole replay', () => resumed.events().length >= after.length);
    assert.deepEqual(
      resumed.events().map((e) => [e.id, e.event]),
      after.map((e) => [e.id, e.event]),
    );

    // Far more than three events later, the first id is no longer held: reset, then live events.
    for (let i = 0; i < 3; i += 1) await addPlugin(t, daemon, `more-${i}`);
    const stale = await openStream(unix, '/v1/events', { 'last-event-id': String(first.id) });
    t.after(() => stale.close());
    await waitFor('the reset', () => stale.events().length > 0);
    const [reset] = stale.events();
    assert.equal(reset?.event, 'reset');
    assert.equal(reset?.data.lastEventId, first.id);
    assert.match(String(reset?.data.message), /re-list/);

    for (const bad of ['abc', '-1', '1.5', '9'.repeat(20)]) {
      const refused = await openStream(unix, '/v1/events', { 'last-event-id': bad });
      assert.equal(refused.status, 400, bad);
      await waitFor('the error body', () => refused.text().includes('}'));
      const body = JSON.parse(refused.text());
      assert.equal(body.error.code, 'BERTH_BAD_REQUEST');
      assert.match(body.error.message, /^Last-Event-ID must be an event id/);
    }
  });

  it('gives each listener its own stream budget: full TCP streams do not lock the unix socket out', async (t) => {
    await using dir = createTempDir('berth-resume-');
    const daemon = await startDaemon(dir, { api: { maxEventStreams: 2 } });
    t.after(() => daemon.stop());
    const token = readFileSync(dir.join('data', 'api-token'), 'utf8').trim();
    const tcp = { port: daemon.apiAddress.tcp?.port ?? 0, token };
    const open: Stream[] = [];
    t.after(() => {
      for (const s of open) s.close();
    });
    for (let i = 0; i < 2; i += 1) open.push(await openStream(tcp, '/v1/events'));
    assert.deepEqual(
      open.map((s) => s.status),
      [200, 200],
    );
    const third = await openStream(tcp, '/v1/events');
    open.push(third);
    assert.equal(third.status, 503);
    await waitFor('the error body', () => third.text().includes('TCP listener'));
    // The cluster route shares the budget (it answers 404 here only because no cluster is configured).
    const local = await openStream({ socketPath: daemon.apiAddress.socketPath }, '/v1/events');
    open.push(local);
    assert.equal(local.status, 200, 'the unix socket has its own budget');
  });

  it('`berth events` resumes after its connection is cut, without losing or repeating an event', async (t) => {
    await using dir = createTempDir('berth-resume-');
    const daemon = await startDaemon(dir);
    t.after(() => daemon.stop());
    const tcp = daemon.apiAddress.tcp;
    assert.ok(tcp);
    const proxy = await startPausableProxy(tcp);
    t.after(() => proxy.close());
    const port = Number(new URL(proxy.endpoint).port);
    const children = new Set<ChildProcess>();
    t.after(async () => {
      for (const child of children) await stopChild(child);
    });
    const cli = trackChild(
      spawnModule(
        MAIN,
        ['events', '--api', `127.0.0.1:${port}`, '--token-file', dir.join('data', 'api-token'), '--json'],
        { env: { PATH: process.env.PATH ?? '', HOME: dir.path } },
      ),
      children,
    );
    await waitFor('the CLI to follow', async () => (await eventClients(daemon)) === 1);
    await addPlugin(t, daemon, 'before');
    await waitForLine(cli, 'the first registration', (line) => line.includes('"name":"before"'));

    proxy.partition();
    await addPlugin(t, daemon, 'during');
    proxy.heal(); // the held connection is reset: the CLI reconnects with Last-Event-ID
    await waitForLine(cli, 'the missed registration', (line) => line.includes('"name":"during"'));
    assert.ok(
      cli.stderr.some((line) => /event stream lost .* reconnecting in .* from event \d+/.test(line)),
      cli.stderr.join('\n'),
    );
    const registered = cli.stdout.filter((line) => line.includes('"type":"registered"'));
    assert.equal(registered.filter((l) => l.includes('"name":"before"')).length, 1, 'no repeats');
    assert.equal(registered.filter((l) => l.includes('"name":"during"')).length, 1);

    cli.child.kill('SIGINT');
    assert.equal(await cli.exited, 0);
  });
});
