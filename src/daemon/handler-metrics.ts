import { Gauge, type Registry as MetricsRegistry } from 'prom-client';
import type { CsiDriverCatalog, DeviceInventory, DraDriverService } from './api/api-types.js';

export interface HandlerMetricSources {
  devices: DeviceInventory | undefined;
  csi: CsiDriverCatalog | undefined;
  dra: DraDriverService | undefined;
}

/**
 * What the built-in handlers hold, read at scrape time: devices per resource
 * (healthy, unhealthy, allocated), CSI drivers registered, DRA instances
 * connected. A handler this daemon does not run gives no samples.
 */
export function registerHandlerMetrics(registry: MetricsRegistry, sources: HandlerMetricSources): void {
  const { devices, csi, dra } = sources;
  const perResource = (
    name: string,
    help: string,
    count: (r: ReturnType<DeviceInventory['list']>[number]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['resource'] as const,
      registers: [registry],
      collect() {
        // A resource that went away must not keep its last value.
        this.reset();
        for (const r of devices?.list() ?? []) this.set({ resource: r.resource }, count(r));
      },
    });
  perResource(
    'berth_devices_healthy',
    'Healthy devices a device plugin advertises, per extended resource.',
    (r) => r.healthy,
  );
  perResource(
    'berth_devices_unhealthy',
    'Unhealthy devices a device plugin advertises, per extended resource.',
    (r) => r.unhealthy,
  );
  perResource('berth_devices_allocated', 'Devices allocated to workloads, per extended resource.', (r) =>
    r.allocations.reduce((sum, a) => sum + a.deviceIds.length, 0),
  );
  new Gauge({
    name: 'berth_csi_drivers_registered',
    help: 'CSI drivers registered (one per driver name, as a CSINode lists them).',
    registers: [registry],
    collect() {
      this.set(csi?.drivers().length ?? 0);
    },
  });
  new Gauge({
    name: 'berth_dra_instances_connected',
    help: 'Connected instances per DRA driver (0 while none is: calls to the driver fail).',
    labelNames: ['driver'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const d of dra?.drivers() ?? []) {
        this.set({ driver: d.name }, d.instances.filter((i) => i.connected).length);
      }
    },
  });
}
