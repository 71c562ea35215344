import type { Command } from 'commander';
import type { DraDriverView } from '../../handlers/dra/index.js';
import { formatTable, observedName } from '../format-table.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';

/** A driver as GET /v1/dra/drivers sends it (times as ISO text). */
export type DraDriverRow = Omit<DraDriverView, 'unusableSince' | 'instances'> & {
  unusableSince: string | null;
  instances: Array<
    Omit<DraDriverView['instances'][number], 'registeredAt'> & { registeredAt: string | null }
  >;
};

/** One row per instance, newest first within a driver; `*` marks the instance calls go to. */
export function formatDraDrivers(drivers: readonly DraDriverRow[], maxWidth?: number): string {
  if (drivers.length === 0) return 'no DRA drivers registered';
  return formatTable(
    ['DRIVER', 'USABLE', 'INSTANCE', 'SERVICE', 'STATE'],
    drivers.flatMap((d) =>
      d.instances.map((i) => [
        observedName(d.name, d.observed),
        d.usable ? 'yes' : `no (since ${d.unusableSince ?? '?'})`,
        `${d.chosen?.endpoint === i.endpoint ? '*' : ' '}${i.endpoint}`,
        i.service,
        i.state,
      ]),
    ),
    maxWidth,
  );
}

export function draCommand(program: Command): void {
  const dra = program.command('dra').description('DRA drivers registered with the daemon');
  withClientOptions(
    dra
      .command('drivers')
      .description('one line per DRA driver instance: connection state, service; * marks the chosen one'),
  ).action(async (flags: ClientFlags) => {
    await printListing('berth dra drivers', flags, async (client) => {
      const body = await client.request<{ drivers: DraDriverRow[] }>('GET', '/v1/dra/drivers');
      return {
        command: 'berth dra drivers',
        body,
        table: (width) => formatDraDrivers(body.drivers, width),
        names: () => body.drivers.map((d) => d.name),
      };
    });
  });
}
