/**
 * Hostile plugins on the wire: GetInfo that never answers, no HTTP/2, text
 * instead of HTTP/2, a connection closed mid-call, a 3 MB reply, invalid UTF-8
 * (the last two are refused with a Notify(false) that says why).
 * The harness (20 churning good plugins, the 3x latency bound, hostile
 * plugins in child processes) is test/fixtures/hostile-harness.ts.
 */
import { describe, it } from 'node:test';
import { assertNotRegistered, failsWith, hostileCase, refusedWith } from './fixtures/hostile-harness.js';

describe('hostile plugins: the wire', { concurrency: false }, () => {
  it('GetInfo never answers: the call times out and is retried with backoff', () =>
    hostileCase('getinfo-hang', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED'], /DEADLINE|deadline|timed out/i);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that never speaks HTTP/2 fails its dial or GetInfo within the timeouts', () =>
    hostileCase('no-http2', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_DIAL_FAILED', 'BERTH_GET_INFO_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that answers HTTP/2 with text fails its dial or GetInfo', () =>
    hostileCase('garbage', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_DIAL_FAILED', 'BERTH_GET_INFO_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a plugin that closes the connection mid-call fails GetInfo', () =>
    hostileCase('close-mid-call', async (daemon, _hostile, socketPath) => {
      await failsWith(daemon, socketPath, ['BERTH_GET_INFO_FAILED', 'BERTH_DIAL_FAILED']);
      assertNotRegistered(daemon, 'hostile-');
    }));

  it('a 3 MB GetInfo reply is refused by the 64 KiB receive limit, and the plugin is told so', () =>
    hostileCase('oversized-reply', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /GetInfo reply is \d+ bytes, more than the limit of 65536/),
    ));

  it('invalid UTF-8 fails GetInfo (as in the kubelet) instead of being replaced, and the plugin is told so', () =>
    hostileCase('invalid-utf8', (daemon, hostile, socketPath) =>
      refusedWith(daemon, hostile, socketPath, /GetInfo reply field name is not valid UTF-8/),
    ));
});
