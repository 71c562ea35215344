import { BerthError } from './errors.js';

/**
 * The heavy clients berth loads only when a config asks for them. They are
 * optional peer dependencies: `npm install berth` leaves them out (54 MB for
 * the Kubernetes client), so a config that names their source must say which
 * package to add. The ranges match package.json's peerDependencies (a test
 * keeps them in step).
 */
export const OPTIONAL_PACKAGES = {
  etcd3: '^1.1.2',
  '@kubernetes/client-node': '^1.4.0',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/**
 * Runs `load` (a dynamic import of a module that imports `pkg`) and turns
 * "package not found" for `pkg` into BERTH_DEPENDENCY_MISSING naming the
 * package, what needed it, and the install command. Any other failure is
 * rethrown unchanged (a broken install is not a missing one).
 */
export async function loadOptionalPackage<T>(
  pkg: OptionalPackage,
  neededFor: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (!isMissingPackage(err, pkg)) throw err;
    throw new BerthError(
      'BERTH_DEPENDENCY_MISSING',
      `${neededFor} needs the optional package ${pkg}, which is not installed; ` +
        `install it beside berth: npm install '${pkg}@${OPTIONAL_PACKAGES[pkg]}'`,
      { cause: err, details: { package: pkg } },
    );
  }
}

/** Node's ESM loader reports a missing bare specifier as ERR_MODULE_NOT_FOUND "Cannot find package '<name>'". */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return (
    e !== null &&
    typeof e === 'object' &&
    e.code === 'ERR_MODULE_NOT_FOUND' &&
    typeof e.message === 'string' &&
    e.message.includes(`'${pkg}'`)
  );
}
