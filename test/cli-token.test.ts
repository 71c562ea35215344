/**
 * The CLI keeps the local daemon's token to itself: it sends a token only
 * when the user gave one (--token-file, $BERTH_TOKEN) or when the target is
 * the address the local daemon recorded in its data directory. A plain HTTP
 * server on loopback stands in for "some other server" and records what it
 * receives. Real daemon, real CLI processes.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { describe, it } from 'node:test';
import { silentLogger } from '../src/common/index.js';
import { createDaemon, resolveDaemonConfig } from '../src/daemon/index.js';
import { BERTH_CLI, runModule } from '../src/testing/harness/index.js';
import { createTempDir } from '../src/testing/index.js';

const MAIN = BERTH_CLI;

/** Answers every request 401 as a berth daemon would, and keeps the headers it got. */
async function recordingServer(): Promise<{ server: Server; port: number; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'BERTH_UNAUTHORIZED', message: 'needs a token' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, port, seen };
}

describe('CLI token safety', () => {
  it("never sends the data directory's token to another server, and says no token was given", async (t) => {
    await using dir = createTempDir('berth-token-');
    const config = resolveDaemonConfig(
      { listen: { host: '127.0.0.1', port: 0 } },
      { dataDir: dir.join('data') },
      { env: {} },
    );
    const daemon = createDaemon(config, { logger: silentLogger });
    await daemon.start();
    t.after(() => daemon.stop());
    const other = await recordingServer();
    t.after(() => other.server.close());
    const tcp = daemon.apiAddress.tcp;
    assert.ok(tcp);
    const env = { PATH: process.env.PATH ?? '', HOME: dir.path };

    // The daemon recorded its own address, private to its user.
    const recorded = dir.join('data', 'api-address');
    assert.equal(readFileSync(recorded, 'utf8'), `127.0.0.1:${tcp.port}\n`);
    assert.equal(statSync(recorded).mode & 0o777, 0o600);

    // Aimed at the other server with the local data dir: no Authorization header at all.
    const leaked = await runModule(
      MAIN,
      ['status', '--api', `127.0.0.1:${other.port}`, '--data-dir', dir.join('data')],
      { env },
    );
    assert.equal(leaked.code, 1, leaked.stderr);
    assert.equal(other.seen.length, 1);
    assert.equal(other.seen[0]?.authorization, undefined);
    assert.equal(
      leaked.stderr
        .trim()
        .split('\n')[0]
        ?.startsWith(
          `berth: no token given for 127.0.0.1:${other.port}; pass --token-file or set BERTH_TOKEN`,
        ),
      true,
      leaked.stderr,
    );

    // The daemon's own recorded address gets the token (global options before the subcommand too).
    const own = await runModule(
      MAIN,
      ['--api', `127.0.0.1:${tcp.port}`, '--data-dir', dir.join('data'), 'status', '-o', 'json'],
      { env },
    );
    assert.equal(own.code, 0, own.stderr);
    assert.equal(JSON.parse(own.stdout).state, 'ready');

    // A token the user gives goes where the user says; a wrong one is named as wrong.
    writeFileSync(dir.join('wrong-token'), 'not-the-token\n');
    const wrong = await runModule(
      MAIN,
      ['status', '--api', `127.0.0.1:${tcp.port}`, '--token-file', dir.join('wrong-token')],
      { env },
    );
    assert.equal(wrong.code, 1);
    assert.match(
      wrong.stderr,
      /^berth: the bearer token is not valid for 127\.0\.0\.1:\d+ \(it came from --token-file\)/,
    );
    const given = await runModule(MAIN, ['status', '--api', `127.0.0.1:${other.port}`], {
      env: { ...env, BERTH_TOKEN: 'user-given' },
    });
    assert.equal(given.code, 1);
    assert.equal(other.seen.at(-1)?.authorization, 'Bearer user-given');
    assert.match(
      given.stderr,
      /the bearer token is not valid for 127\.0\.0\.1:\d+ \(it came from \$BERTH_TOKEN\)/,
    );

    await daemon.stop();
    assert.equal(existsSync(recorded), false, 'the address file goes with the daemon');
  });
});
