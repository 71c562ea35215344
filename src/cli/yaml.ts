import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

/**
 * The yaml package, loaded on first use: only `-o yaml` and `pods -f` need it
 * here, and an import at the top would put its ~260 KB into every command's
 * start, `berth run` and `berth --version` included. A require (synchronous,
 * unlike import()) keeps its callers synchronous; the bundle leaves it to
 * node, which loads the package from node_modules.
 */
export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
