/**
 * The object TTL the Cache strategy uses, read from the Node object's
 * `node.alpha.kubernetes.io/ttl` annotation (set by the kube-controller-manager's
 * TTL controller by cluster size). Rules as upstream GetObjectTTLFromNodeFunc:
 * getNode failing, no node or no annotations → not ok (use the default);
 * a base-10 integer → that many seconds ("0" is valid: always refetch;
 * negative integers are accepted and make data always stale); anything else → not ok.
 */
export const OBJECT_TTL_ANNOTATION = 'node.alpha.kubernetes.io/ttl';

/** `{ ttlMs }` when the TTL is known (Go's ok=true), undefined to use the store's default. */
export type TtlAnswer = { ttlMs: number } | undefined;

export type GetTtl = () => TtlAnswer | Promise<TtlAnswer>;

/** The part of a Kubernetes Node the annotation lives on. */
export interface NodeLike {
  metadata?: { annotations?: Record<string, string> | null } | null;
}

export function getObjectTtlFromNode(
  getNode: () => Promise<NodeLike | undefined | null> | NodeLike | undefined | null,
): () => Promise<TtlAnswer> {
  return async () => {
    let node: NodeLike | undefined | null;
    try {
      node = await getNode();
    } catch {
      return undefined;
    }
    const value = node?.metadata?.annotations?.[OBJECT_TTL_ANNOTATION];
    if (typeof value !== 'string') return undefined;
    const seconds = parseGoInt(value);
    return seconds === undefined ? undefined : { ttlMs: seconds * 1000 };
  };
}

/** strconv.Atoi: optional sign, decimal digits, within int64; anything else fails. */
function parseGoInt(value: string): number | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const parsed = BigInt(value);
  if (parsed > 9223372036854775807n || parsed < -9223372036854775808n) return undefined;
  return Number(parsed);
}
