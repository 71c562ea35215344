import type { Command } from 'commander';
import type { CsiDriverView } from '../../handlers/index.js';
import { formatTable, observedName } from '../format-table.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';

/** A driver as GET /v1/csi/drivers sends it (times as ISO text). */
export type CsiDriverRow = Omit<CsiDriverView, 'registeredAt'> & { registeredAt: string | null };

export function formatCsiDrivers(drivers: readonly CsiDriverRow[], maxWidth?: number): string {
  if (drivers.length === 0) return 'no CSI drivers registered';
  return formatTable(
    ['DRIVER', 'NODE ID', 'MAX VOLUMES', 'TOPOLOGY', 'VENDOR VERSION', 'CAPABILITIES', 'READY'],
    drivers.map((d) => [
      observedName(d.name, d.observed),
      d.nodeId,
      d.maxVolumesPerNode === null ? '-' : String(d.maxVolumesPerNode),
      d.accessibleTopology === null
        ? '-'
        : Object.entries(d.accessibleTopology)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '-',
      d.vendorVersion ?? '-',
      d.capabilities === null ? '?' : d.capabilities.join(',') || '-',
      d.ready === null ? '?' : d.ready ? 'yes' : 'no',
    ]),
    maxWidth,
  );
}

export function csiCommand(program: Command): void {
  const csi = program.command('csi').description('CSI drivers registered with the daemon');
  withClientOptions(
    csi
      .command('drivers')
      .description('one line per CSI driver: node id, volume limit, topology, version, capabilities'),
  ).action(async (flags: ClientFlags) => {
    await printListing(
      'berth csi drivers',
      flags,
      async (client) => {
        const body = await client.request<{ drivers: CsiDriverRow[] }>('GET', '/v1/csi/drivers');
        return {
          command: 'berth csi drivers',
          body,
          table: (width) => formatCsiDrivers(body.drivers, width),
          names: () => body.drivers.map((d) => d.name),
        };
      },
      '/v1/events?type=CSIPlugin',
    );
  });
}
