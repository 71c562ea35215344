/**
 * A port of the rules of k8s.io/apimachinery `version.ParseGeneric` and
 * `HighestSupportedVersion`, which the kubelet's CSI handler uses to pick a
 * driver's CSI version. Error texts follow upstream's.
 */
export interface GenericVersion {
  readonly components: readonly number[];
  /** Rendered like upstream's Version.String(): the numeric part only. */
  toString(): string;
}

const VERSION_RE = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/;

/** Two or more dot-separated numbers, optionally after "v", then anything. Throws on bad input. */
export function parseGenericVersion(text: string): GenericVersion {
  const match = VERSION_RE.exec(text);
  const numbers = match?.[1];
  if (numbers === undefined) throw new Error(`could not parse ${JSON.stringify(text)} as version`);
  const parts = numbers.split('.');
  if (parts.length < 2) throw new Error(`illegal version string ${JSON.stringify(text)}`);
  const components = parts.map((part, i) => {
    if (i === 0 && part.startsWith('0') && part !== '0') {
      throw new Error(
        `illegal zero-prefixed version component ${JSON.stringify(part)} in ${JSON.stringify(text)}`,
      );
    }
    const value = Number(part);
    if (!Number.isSafeInteger(value)) {
      throw new Error(
        `illegal non-numeric version component ${JSON.stringify(part)} in ${JSON.stringify(text)}: value out of range`,
      );
    }
    return value;
  });
  return { components, toString: () => components.join('.') };
}

/** -1, 0 or 1; missing trailing components count as zero ("1.4" equals "1.4.0"). */
export function compareGenericVersions(a: GenericVersion, b: GenericVersion): number {
  const length = Math.max(a.components.length, b.components.length);
  for (let i = 0; i < length; i++) {
    const x = a.components[i] ?? 0;
    const y = b.components[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The highest listed version with major 1. Versions that do not parse, or
 * claim major 2+, are skipped; a highest version of 0.x is refused (CSI 0.x
 * support ended in Kubernetes 1.17).
 */
export function highestSupportedVersion(versions: readonly string[]): GenericVersion {
  if (versions.length === 0) throw new Error('empty array for supported versions');
  let highest: GenericVersion | undefined;
  let lastError: unknown;
  for (let i = versions.length - 1; i >= 0; i--) {
    let current: GenericVersion;
    try {
      current = parseGenericVersion(versions[i] ?? '');
    } catch (err) {
      lastError = err;
      continue;
    }
    if ((current.components[0] ?? 0) > 1) continue;
    if (highest === undefined || compareGenericVersions(highest, current) < 0) highest = current;
  }
  if (highest === undefined) {
    const reason = lastError instanceof Error ? lastError.message : '<nil>';
    throw new Error(
      `could not find a highest supported version from versions ([${versions.join(' ')}]) reported: ${reason}`,
    );
  }
  if (highest.components[0] !== 1) {
    throw new Error(`highest supported version reported is ${highest.toString()}, must be v1.x`);
  }
  return highest;
}
