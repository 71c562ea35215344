import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { errorMessage } from '../../common/index.js';
import type { PodListResponse, PodResponse, PodSummary } from '../../daemon/contract.js';
import { usageError } from '../cli-error.js';
import { formatTable } from '../format-table.js';
import { outputFormat } from '../output.js';
import { yaml } from '../yaml.js';
import {
  type ClientFlags,
  clientFor,
  printListing,
  printResult,
  withClientOptions,
} from './client-options.js';

/** NS/NAME → [namespace, name]; anything else is a usage error. */
export function parseNamespacedName(text: string, what: string): [string, string] {
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(text);
  if (!match) throw usageError(`${what} must be NAMESPACE/NAME, got ${JSON.stringify(text)}`);
  return [match[1] as string, match[2] as string];
}

/** Reads a Pod from a YAML or JSON file ("-" for stdin); namespace defaults to "default" as in Kubernetes. */
export function readPodFile(path: string): { namespace: string; name: string; pod: Record<string, unknown> } {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : errorMessage(err);
    throw usageError(`cannot read ${path} (${why}); pass the pod manifest with -f FILE`);
  }
  let pod: unknown;
  try {
    pod = yaml().parse(text);
  } catch (err) {
    throw usageError(`${path} is not valid YAML or JSON: ${errorMessage(err).split('\n')[0]}`);
  }
  if (typeof pod !== 'object' || pod === null || Array.isArray(pod)) {
    throw usageError(`${path} must hold one Pod object (kind: Pod, metadata, spec)`);
  }
  const metadata = (pod as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) throw usageError(`${path}: metadata is missing`);
  const { name, namespace } = metadata as { name?: unknown; namespace?: unknown };
  if (typeof name !== 'string' || name === '') throw usageError(`${path}: metadata.name is missing`);
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === '')) {
    throw usageError(`${path}: metadata.namespace must be a non-empty string`);
  }
  const ns = (namespace as string | undefined) ?? 'default';
  return { namespace: ns, name, pod: { ...pod, metadata: { ...metadata, namespace: ns } } };
}

export function formatPods(pods: readonly PodSummary[], maxWidth?: number): string {
  if (pods.length === 0) return 'no pods registered';
  return formatTable(
    ['NAMESPACE', 'NAME', 'UID', 'SECRETS', 'CONFIGMAPS', 'CSI VOLUMES'],
    pods.map((p) => [
      p.namespace,
      p.name,
      p.uid,
      p.secrets.join(',') || '-',
      p.configMaps.join(',') || '-',
      (p.podVolumes ?? []).map((v) => v.name).join(',') || '-',
    ]),
    maxWidth,
  );
}

function describe(pod: PodSummary): string {
  const list = (names: string[]) => (names.length ? names.join(', ') : 'none');
  const volumes = (pod.podVolumes ?? []).map((v) => `${v.name} at ${v.targetPath}`);
  return `pod ${pod.namespace}/${pod.name} (uid ${pod.uid}; secrets: ${list(pod.secrets)}; configmaps: ${list(pod.configMaps)}; csi volumes: ${list(volumes)})`;
}

const path = (namespace: string, name: string) =>
  `/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

export function podsCommand(program: Command): void {
  const pods = program
    .command('pods')
    .description('register workloads whose secrets and configmaps berth caches');

  withClientOptions(
    pods
      .command('apply')
      .description('register (or update) a pod from a Kubernetes Pod manifest')
      .requiredOption('-f, --file <file>', 'the Pod manifest, YAML or JSON ("-" reads stdin)'),
  ).action(async (flags: ClientFlags & { file: string }) => {
    const { namespace, name, pod } = readPodFile(flags.file);
    outputFormat(flags);
    const body = await clientFor(flags).request<PodResponse>('PUT', path(namespace, name), pod);
    printResult('berth pods apply', flags, {
      body,
      table: () => `registered ${describe(body.pod)}`,
      names: () => [`${body.pod.namespace}/${body.pod.name}`],
    });
  });

  withClientOptions(
    pods
      .command('delete')
      .description('unregister a pod, releasing its references and unpublishing its CSI inline volumes')
      .argument('<namespace/name>'),
  ).action(async (target: string, flags: ClientFlags) => {
    const [namespace, name] = parseNamespacedName(target, 'the pod');
    outputFormat(flags);
    const body = await clientFor(flags).request<PodResponse>('DELETE', path(namespace, name));
    printResult('berth pods delete', flags, {
      body,
      table: () => `unregistered ${describe(body.pod)}`,
      names: () => [`${body.pod.namespace}/${body.pod.name}`],
    });
  });

  withClientOptions(pods.command('list').description('list registered pods and what they reference')).action(
    async (flags: ClientFlags) => {
      await printListing('berth pods list', flags, async (client) => {
        const body = await client.request<PodListResponse>('GET', '/v1/pods');
        return {
          command: 'berth pods list',
          body,
          table: (width) => formatPods(body.pods, width),
          names: () => body.pods.map((p) => `${p.namespace}/${p.name}`),
        };
      });
    },
  );
}
