/**
 * Bounds on a CSI driver's accessible topology, as Kubernetes bounds the
 * node labels the kubelet makes of it: a key is an optional DNS-subdomain
 * prefix (at most 253 bytes) and '/' and a name (at most 63, label syntax); a
 * value is empty or label syntax of at most 63. The kubelet would fail to
 * write such a node label; berth refuses the registration at once, naming the
 * segment and the bound, so a 3.9 MB topology is never stored.
 */
import { clip } from '../../registration/registrar.js';

export const CSI_TOPOLOGY_LIMITS = {
  /** Segments in accessible_topology (real drivers report a handful: zone, region, rack, node). */
  segments: 64,
  /** A key's prefix (before '/'): a DNS subdomain. */
  prefixBytes: 253,
  /** A key's name (after '/', or the whole key): a label name. */
  nameBytes: 63,
  valueBytes: 63,
} as const;

const LABEL = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** What in `segments` breaks a bound, or undefined when they are all within them. */
export function topologyProblem(segments: Readonly<Record<string, string>>): string | undefined {
  const limits = CSI_TOPOLOGY_LIMITS;
  const keys = Object.keys(segments);
  if (keys.length > limits.segments) {
    return `accessible_topology has ${keys.length} segments, more than the limit of ${limits.segments}`;
  }
  for (const key of keys) {
    const slash = key.lastIndexOf('/');
    const prefix = slash === -1 ? undefined : key.slice(0, slash);
    const name = slash === -1 ? key : key.slice(slash + 1);
    if (prefix !== undefined && (prefix.length > limits.prefixBytes || !DNS_SUBDOMAIN.test(prefix))) {
      return `accessible_topology key ${clip(key)}: the prefix must be a DNS subdomain of at most ${limits.prefixBytes} characters`;
    }
    if (name.length > limits.nameBytes || !LABEL.test(name)) {
      return `accessible_topology key ${clip(key)}: the name must be 1-${limits.nameBytes} characters of [A-Za-z0-9-_.], starting and ending with a letter or digit`;
    }
    const value = segments[key] ?? '';
    if (value !== '' && (value.length > limits.valueBytes || !LABEL.test(value))) {
      return `accessible_topology value ${clip(value)} of ${clip(key)}: a value must be at most ${limits.valueBytes} characters of [A-Za-z0-9-_.], starting and ending with a letter or digit`;
    }
  }
  return undefined;
}
