import { createHash } from 'node:crypto';
import { BerthError } from '../common/index.js';

/**
 * The key layout under the root (default /berth/v1/). One writer per node
 * prefix; every component of a key is escaped so none contains "/":
 *
 *   <root>nodes/<node>                          the node key (its mod revision fences the writer)
 *   <root>plugins/<node>/<type>/<name>/<epId>   one per plugin instance (registration socket)
 *
 * epId is the first 12 characters of base64url(sha256(instance id)), so parallel
 * instances of one plugin (a rolling upgrade) never share a key.
 */
export interface ClusterKeys {
  readonly root: string;
  readonly nodesPrefix: string;
  readonly pluginsPrefix: string;
  nodeKey(node: string): string;
  nodePluginsPrefix(node: string): string;
  pluginKey(node: string, type: string, name: string, instanceId: string): string;
  parse(key: string): ParsedKey | undefined;
}

export type ParsedKey =
  | { kind: 'node'; node: string }
  | { kind: 'plugin'; node: string; type: string; name: string; epId: string };

export function clusterKeys(root: string): ClusterKeys {
  if (root === '' || !root.startsWith('/')) {
    throw new BerthError('BERTH_INVALID_ARGUMENT', `cluster prefix must start with "/" (got "${root}")`);
  }
  const base = root.endsWith('/') ? root : `${root}/`;
  const nodesPrefix = `${base}nodes/`;
  const pluginsPrefix = `${base}plugins/`;
  return {
    root: base,
    nodesPrefix,
    pluginsPrefix,
    nodeKey: (node) => `${nodesPrefix}${escapeSegment(node)}`,
    nodePluginsPrefix: (node) => `${pluginsPrefix}${escapeSegment(node)}/`,
    pluginKey: (node, type, name, instanceId) =>
      `${pluginsPrefix}${escapeSegment(node)}/${escapeSegment(type)}/${escapeSegment(name)}/${endpointId(instanceId)}`,
    parse(key) {
      if (key.startsWith(nodesPrefix)) {
        const rest = key.slice(nodesPrefix.length);
        if (rest === '' || rest.includes('/')) return undefined;
        return { kind: 'node', node: unescapeSegment(rest) };
      }
      if (key.startsWith(pluginsPrefix)) {
        const parts = key.slice(pluginsPrefix.length).split('/');
        if (parts.length !== 4 || parts.some((p) => p === '')) return undefined;
        const [node = '', type = '', name = '', epId = ''] = parts;
        return {
          kind: 'plugin',
          node: unescapeSegment(node),
          type: unescapeSegment(type),
          name: unescapeSegment(name),
          epId,
        };
      }
      return undefined;
    },
  };
}

export function endpointId(instanceId: string): string {
  return createHash('sha256').update(instanceId).digest('base64url').slice(0, 12);
}

/** Percent-encoding keeps "/" (and "%") out of a segment and is reversible. */
function escapeSegment(segment: string): string {
  return encodeURIComponent(segment);
}

function unescapeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The etcd range end that covers every key starting with `prefix`. */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if ((end[i] ?? 0) < 0xff) {
      end[i] = (end[i] ?? 0) + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
