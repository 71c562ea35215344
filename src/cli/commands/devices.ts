import type { Command } from 'commander';
import type {
  DeviceAllocationResponse,
  DeviceListResponse,
  DeviceResourceView,
} from '../../daemon/contract.js';
import { usageError } from '../cli-error.js';
import { formatTable, observedName, relativeTime } from '../format-table.js';
import { outputFormat } from '../output.js';
import {
  type ClientFlags,
  clientFor,
  printListing,
  printResult,
  withClientOptions,
} from './client-options.js';

/** A resource as /v1/devices sends it (a daemon/contract wire type). */
export type ResourceRow = DeviceResourceView;

export function formatDevices(resources: readonly ResourceRow[], now: number, maxWidth?: number): string {
  if (resources.length === 0) return 'no device plugin resources';
  const summary = formatTable(
    ['RESOURCE', 'STATE', 'HEALTHY', 'UNHEALTHY', 'ALLOCATIONS', 'ENDPOINT'],
    resources.map((r) => [
      observedName(r.resource, r.observed),
      r.state === 'disconnected' && r.removeAt
        ? `disconnected (removed ${relativeTime(r.removeAt, now)})`
        : r.state,
      String(r.healthy),
      String(r.unhealthy),
      String(r.allocations.length),
      r.endpoint ?? '-',
    ]),
    maxWidth,
  );
  const devices = resources.flatMap((r) =>
    r.devices.map((d) => [r.resource, d.id, d.health, d.numaNodes.join(',') || '-', d.allocatedTo ?? '-']),
  );
  const flagged = resources.flatMap((r) =>
    r.allocations
      .filter((a) => a.unhealthyDeviceIds.length > 0)
      .map(
        (a) =>
          `warning: ${a.workload} holds unhealthy ${r.resource} devices ${a.unhealthyDeviceIds.join(',')}`,
      ),
  );
  const parts = [summary];
  if (devices.length > 0)
    parts.push(formatTable(['RESOURCE', 'DEVICE', 'HEALTH', 'NUMA', 'ALLOCATED TO'], devices, maxWidth));
  if (flagged.length > 0) parts.push(flagged.join('\n'));
  return parts.join('\n\n');
}

/** The allocation path; the resource's "/" is percent-encoded, which the API accepts. */
const allocationsPath = (resource: string) => `/v1/devices/${encodeURIComponent(resource)}/allocations`;

function parseCount(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw usageError(`--count must be a whole number of at least 1, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * `berth devices` and its subcommands share the client options, and commander hands an option to
 * whichever command parses it first; take the parent's, then the subcommand's where it has one.
 */
function mergedFlags<T>(command: Command): T {
  const merged: Record<string, unknown> = { ...(command.parent?.opts() ?? {}) };
  for (const [key, value] of Object.entries(command.opts())) {
    if (value !== undefined && !(value === false && merged[key] === true)) merged[key] = value;
  }
  return merged as T;
}

export function devicesCommand(program: Command): void {
  const devices = withClientOptions(
    program.command('devices').description('list device plugin resources, their devices and allocations'),
  ).action(async (flags: ClientFlags) => {
    await printListing(
      'berth devices',
      flags,
      async (client) => {
        const body = await client.request<DeviceListResponse>('GET', '/v1/devices');
        return {
          command: 'berth devices',
          body,
          table: (width) => formatDevices(body.resources, Date.now(), width),
          names: () => body.resources.map((r) => r.resource),
        };
      },
      '/v1/events?type=DevicePlugin',
    );
  });

  withClientOptions(
    devices
      .command('allocate')
      .description("allocate healthy free devices of RESOURCE to a workload (calls the plugin's Allocate)")
      .argument('<resource>', 'the extended resource, e.g. vendor.com/gpu')
      .requiredOption('--workload <name>', 'who holds the devices (released with `berth devices release`)')
      .option('--count <n>', 'how many devices berth picks', parseCount)
      .option('--device-ids <ids>', 'exactly these devices, comma-separated'),
  ).action(async (resource: string, _flags: unknown, command: Command) => {
    const flags = mergedFlags<ClientFlags & { workload: string; count?: number; deviceIds?: string }>(
      command,
    );
    if ((flags.count === undefined) === (flags.deviceIds === undefined)) {
      throw usageError('give either --count N or --device-ids a,b');
    }
    const request =
      flags.count !== undefined
        ? { workload: flags.workload, count: flags.count }
        : {
            workload: flags.workload,
            deviceIds: (flags.deviceIds ?? '').split(',').filter((id) => id !== ''),
          };
    outputFormat(flags);
    const body = await clientFor(flags).request<DeviceAllocationResponse>(
      'POST',
      allocationsPath(resource),
      request,
    );
    const a = body.allocation;
    printResult('berth devices allocate', flags, {
      body,
      table: () => {
        const envs = Object.entries(a.envs).map(([k, v]) => `${k}=${v}`);
        const lines = [`allocated ${a.resource} ${a.deviceIds.join(',')} to ${a.workload}`];
        if (envs.length > 0) lines.push(`env: ${envs.join(' ')}`);
        if (a.cdiDevices.length > 0) lines.push(`cdi: ${a.cdiDevices.join(' ')}`);
        return lines.join('\n');
      },
      names: () => a.deviceIds.map((id) => `${a.resource}/${id}`),
    });
  });

  withClientOptions(
    devices
      .command('release')
      .description('release the devices of RESOURCE that a workload holds')
      .argument('<resource>', 'the extended resource, e.g. vendor.com/gpu')
      .argument('<workload>', 'the workload named at allocation'),
  ).action(async (resource: string, workload: string, _flags: unknown, command: Command) => {
    const flags = mergedFlags<ClientFlags>(command);
    outputFormat(flags);
    const body = await clientFor(flags).request<DeviceAllocationResponse>(
      'DELETE',
      `${allocationsPath(resource)}/${encodeURIComponent(workload)}`,
    );
    const a = body.allocation;
    printResult('berth devices release', flags, {
      body,
      table: () => `released ${a.resource} ${a.deviceIds.join(',')} from ${workload}`,
      names: () => a.deviceIds.map((id) => `${a.resource}/${id}`),
    });
  });
}
