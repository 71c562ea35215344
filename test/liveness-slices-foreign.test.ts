/**
 * A liveness period's pings go out in slices (plugin-manager/ping-slices.ts),
 * here against plugins in another process: the Go farm (grpc-go, one
 * grpc.Server per socket, whose keepalive enforcement closes a connection
 * that gets three PINGs with no call between) and the Node farm. Over four
 * periods every plugin is pinged once a period, in slices of at most
 * PINGS_PER_SLICE, every ping is answered, and each plugin keeps the one
 * connection it was first probed on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLivenessProber } from '../src/plugin-manager/index.js';
import { dialRegistration } from '../src/registration/index.js';
import { createRecordingLogger } from '../src/testing/harness/index.js';
import { FakeClock, waitFor } from '../src/testing/index.js';
import { FARM_KINDS, openFarm } from './fixtures/plugin-farms.js';

const PLUGINS = 250;
const PERIOD_MS = 3_000;
const PERIODS = 4;

for (const kind of FARM_KINDS) {
  describe(`liveness pings in slices (${kind} plugins)`, () => {
    it(`${PLUGINS} plugins, ${PERIODS} periods: slices of 83, 83 and 84 a period, all answered, one connection each`, async (t) => {
      const opened = await openFarm(t, kind);
      if (opened === undefined) return;
      const paths = await opened.serve(Array.from({ length: PLUGINS }, (_, i) => `p${i}`));
      const logger = createRecordingLogger();
      const dead: string[] = [];
      const clock = new FakeClock();
      const prober = createLivenessProber({
        periodMs: PERIOD_MS,
        // Real time (each slice's judge timer): room for a loaded machine, never waited out when all answer.
        timeoutMs: 1_500,
        failureThreshold: 1,
        clock,
        logger,
        dial: dialRegistration,
        isBusy: () => false,
        onDead: (plugin) => dead.push(plugin.socketPath),
      });
      t.after(() => prober.stop());
      await prober.start();
      for (const [i, socketPath] of paths.entries())
        prober.watch({ socketPath, timestamp: 1, uuid: 'gen-1', foundInDeprecatedDir: false, name: `p${i}` });
      await waitFor('every plugin connected', async () =>
        (await opened.farm.stats()).sockets.every((s) => s.openConnections === 1),
      );

      const judged = () =>
        logger.records
          .filter((r) => r.message === 'liveness pings judged')
          .map((r) => r.fields as { sent: number; answered: number });
      for (let period = 1; period <= PERIODS; period++) {
        // The period's tick sends the first slice; the next two follow a second apart.
        await clock.advance(period === 1 ? PERIOD_MS : PERIOD_MS - 2_000);
        await clock.advance(1_000);
        await clock.advance(1_000);
        await waitFor(`period ${period}'s three slices judged`, () => judged().length === 3 * period, {
          timeoutMs: 20_000,
        });
        const slices = judged().slice(-3);
        assert.deepEqual(
          slices.map((s) => s.sent),
          [83, 83, 84],
          `period ${period}: every plugin pinged once`,
        );
        assert.deepEqual(
          slices.map((s) => s.answered),
          [83, 83, 84],
          `period ${period}: every ping answered`,
        );
      }
      assert.deepEqual(dead, []);
      // grpc-go sends GOAWAY (too_many_pings) to a connection pinged three times with no call between:
      // the third probe is a health-check call, so no plugin lost its connection or got another.
      for (const s of (await opened.farm.stats()).sockets) {
        assert.deepEqual([s.connections, s.openConnections], [1, 1], s.path);
      }
    });
  });
}
