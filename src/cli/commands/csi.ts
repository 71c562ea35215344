import type { Command } from 'commander';
import type {
  CsiCreatedVolumeView,
  CsiPublicationResult,
  CsiVolumeListResponse,
} from '../../daemon/contract.js';
import type { CsiDriverView } from '../../handlers/csi/index.js';
import { usageError } from '../cli-error.js';
import { formatTable, observedName } from '../format-table.js';
import { type ClientFlags, clientFor, printListing, withClientOptions } from './client-options.js';

/** The answer as indented JSON (the volume commands' --json). */
function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

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
  const csi = program.command('csi').description('CSI drivers registered with the daemon, and their volumes');
  volumesCommand(csi);
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

type VolumeRow = CsiVolumeListResponse['volumes'][number];

export function formatCsiVolumes(volumes: readonly VolumeRow[]): string {
  if (volumes.length === 0) return 'no CSI volumes';
  const rows: string[][] = [];
  for (const v of volumes) {
    const staging =
      v.staging === null ? '-' : `${v.staging.path}${v.staging.mounted ? '' : ' (not mounted)'}`;
    const used = v.stats?.usage.find((u) => u.unit === 'BYTES');
    const common = [
      v.driver + (v.driverRegistered ? '' : ' (away)'),
      v.volumeId,
      v.name ?? '-',
      staging,
      used === undefined ? '-' : `${used.used}/${used.total}`,
    ];
    if (v.publications.length === 0) rows.push([...common, '-', '-', '-']);
    for (const p of v.publications) {
      rows.push([...common, p.workload, p.status + (p.readOnly ? ' ro' : ''), p.targetPath]);
    }
  }
  return formatTable(
    ['DRIVER', 'VOLUME', 'NAME', 'STAGING', 'BYTES USED', 'WORKLOAD', 'STATUS', 'TARGET'],
    rows,
  );
}

/** `key=value` pairs of a repeatable flag into a map. */
function pairs(values: string[] | undefined, flag: string): Record<string, string> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const value of values) {
    const at = value.indexOf('=');
    if (at <= 0) throw usageError(`${flag} expects KEY=VALUE, got ${JSON.stringify(value)}`);
    out[value.slice(0, at)] = value.slice(at + 1);
  }
  return out;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

const volumePath = (driver: string, volumeId: string) =>
  `/v1/csi/volumes/${encodeURIComponent(driver)}/${encodeURIComponent(volumeId)}`;

function volumesCommand(csi: Command): void {
  const volumes = csi
    .command('volumes')
    .description('create, publish, unpublish, delete and list CSI volumes of registered drivers');

  withClientOptions(
    volumes
      .command('create')
      .description('CreateVolume on a driver (idempotent by name)')
      .argument('<driver>')
      .argument('<name>')
      .option('--capacity <bytes>', 'required capacity in bytes')
      .option('--parameter <key=value>', 'a CreateVolume parameter (repeatable)', collect)
      .option('--access-mode <mode>', 'e.g. single-node-writer, multi-node-multi-writer')
      .option('--fs-type <type>', 'file system type'),
  ).action(
    async (
      driver: string,
      name: string,
      flags: ClientFlags & { capacity?: string; parameter?: string[]; accessMode?: string; fsType?: string },
    ) => {
      let capacityBytes: number | undefined;
      if (flags.capacity !== undefined) {
        capacityBytes = Number(flags.capacity);
        if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0)
          throw usageError(
            `--capacity expects a whole number of bytes, got ${JSON.stringify(flags.capacity)}`,
          );
      }
      const body = await clientFor(flags).request<CsiCreatedVolumeView>('POST', '/v1/csi/volumes', {
        driver,
        name,
        ...(capacityBytes === undefined ? {} : { capacityBytes }),
        ...(flags.parameter === undefined ? {} : { parameters: pairs(flags.parameter, '--parameter') }),
        ...(flags.accessMode === undefined ? {} : { accessMode: flags.accessMode }),
        ...(flags.fsType === undefined ? {} : { fsType: flags.fsType }),
      });
      if (flags.json) printJson(body);
      else console.log(`created volume ${body.volumeId} on ${body.driver} (${body.capacityBytes} bytes)`);
    },
  );

  withClientOptions(
    volumes
      .command('publish')
      .description('make a volume available to a workload (controller publish, stage, publish as needed)')
      .argument('<driver>')
      .argument('<volumeId>')
      .argument('<workload>')
      .option('--read-only', 'publish read-only', false)
      .option('--access-mode <mode>', 'e.g. single-node-writer, multi-node-multi-writer')
      .option('--fs-type <type>', 'file system type')
      .option('--mount-flag <flag>', 'a mount flag (repeatable)', collect)
      .option('--context <key=value>', 'a volume context entry (repeatable)', collect),
  ).action(
    async (
      driver: string,
      volumeId: string,
      workload: string,
      flags: ClientFlags & {
        readOnly: boolean;
        accessMode?: string;
        fsType?: string;
        mountFlag?: string[];
        context?: string[];
      },
    ) => {
      const body = await clientFor(flags).request<CsiPublicationResult>(
        'POST',
        `${volumePath(driver, volumeId)}/publications`,
        {
          workload,
          readOnly: flags.readOnly,
          ...(flags.accessMode === undefined ? {} : { accessMode: flags.accessMode }),
          ...(flags.fsType === undefined ? {} : { fsType: flags.fsType }),
          ...(flags.mountFlag === undefined ? {} : { mountFlags: flags.mountFlag }),
          ...(flags.context === undefined ? {} : { volumeContext: pairs(flags.context, '--context') }),
        },
      );
      if (flags.json) printJson(body);
      else console.log(`published ${volumeId} for ${workload} at ${body.targetPath}`);
    },
  );

  withClientOptions(
    volumes
      .command('unpublish')
      .description("remove a workload's publication (unstage and controller unpublish after the last)")
      .argument('<driver>')
      .argument('<volumeId>')
      .argument('<workload>'),
  ).action(async (driver: string, volumeId: string, workload: string, flags: ClientFlags) => {
    const body = await clientFor(flags).request<CsiPublicationResult>(
      'DELETE',
      `${volumePath(driver, volumeId)}/publications/${encodeURIComponent(workload)}`,
    );
    if (flags.json) printJson(body);
    else console.log(`unpublished ${volumeId} for ${workload}`);
  });

  withClientOptions(
    volumes
      .command('delete')
      .description('DeleteVolume (refused while the volume is published)')
      .argument('<driver>')
      .argument('<volumeId>'),
  ).action(async (driver: string, volumeId: string, flags: ClientFlags) => {
    const body = await clientFor(flags).request<{ driver: string; volumeId: string }>(
      'DELETE',
      volumePath(driver, volumeId),
    );
    if (flags.json) printJson(body);
    else console.log(`deleted volume ${body.volumeId} on ${body.driver}`);
  });

  withClientOptions(
    volumes.command('list').description('volumes with their publications, staging and usage'),
  ).action(async (flags: ClientFlags) => {
    const body = await clientFor(flags).request<CsiVolumeListResponse>('GET', '/v1/csi/volumes');
    if (flags.json) printJson(body);
    else console.log(formatCsiVolumes(body.volumes));
  });
}
