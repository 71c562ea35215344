import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { codeCacheFiles, type DAEMON_BUNDLE_PARAMS } from './code-cache-options.js';

export type DaemonModule = typeof import('../daemon/index.js');

export interface LoadedDaemonModule {
  module: DaemonModule;
  /** How the module was loaded, for a debug line: the bundle with or without its code cache, or dist/src. */
  describe(): Record<string, unknown>;
  /**
   * Writes the bundle's code cache when this start had to compile it (call
   * once the daemon is ready, so the functions its start compiled are in the
   * cache). What it did, for a debug line; never throws.
   */
  saveCodeCache(): Record<string, unknown> | undefined;
}

/**
 * Written by scripts/build.mjs beside the CLI bundle: the name of the
 * daemon's CommonJS bundle (with its content hash). Absent when running from
 * dist/src or the sources, where the daemon's modules load one by one.
 */
const MANIFEST = 'daemon-bundle.json';

/**
 * The daemon's module (gRPC, fastify, SQLite, zod): from its CommonJS bundle
 * with a V8 code cache when the CLI runs from the bundle (code-cache.ts),
 * else imported from dist/src. `berth run` and `berth config show` load it
 * here, and only they.
 */
export async function loadDaemonModule(): Promise<LoadedDaemonModule> {
  const bundle = bundleFile();
  if (bundle === undefined) {
    const module = await import('../daemon/index.js');
    return { module, describe: () => ({ daemonModule: 'dist/src' }), saveCodeCache: () => undefined };
  }
  const bundleUrl = pathToFileURL(bundle).href;
  // Imported here, not at the top: the CLI's other commands need neither it nor node:crypto, vm, v8.
  const { runCachedScript } = await import('./code-cache.js');
  const loaded = runCachedScript<DaemonModule>({
    file: bundle,
    cacheFiles: codeCacheFiles(bundle),
    // In DAEMON_BUNDLE_PARAMS's order: the build wrapped the bundle in a function of these names.
    params: {
      // What the bundle's `import.meta.url` and dynamic `import()` of modules left outside
      // it (optional packages) became: the build rewrites them to these two names, because
      // a vm.Script built from a code cache on node 20 loses its dynamic-import callback.
      __berthImportMetaUrl: bundleUrl,
      __berthImport: (specifier: string) =>
        import(specifier.startsWith('.') ? new URL(specifier, bundleUrl).href : specifier),
    } satisfies Record<(typeof DAEMON_BUNDLE_PARAMS)[number], unknown>,
  });
  return {
    module: loaded.exports,
    describe: () => ({
      daemonModule: bundle,
      codeCache: loaded.cacheUsed ?? 'none',
      ...(loaded.cacheProblems.length === 0 ? {} : { codeCacheProblems: loaded.cacheProblems }),
    }),
    saveCodeCache: () => {
      if (loaded.cacheUsed !== undefined) return undefined;
      const { written, problems } = loaded.saveCache();
      return { codeCacheWritten: written ?? 'nowhere', ...(problems.length === 0 ? {} : { problems }) };
    },
  };
}

/** The daemon bundle named by the manifest beside this module, if there is one. */
function bundleFile(): string | undefined {
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(new URL(MANIFEST, import.meta.url), 'utf8'));
  } catch {
    return undefined; // not running from the bundle
  }
  const file = (manifest as { file?: unknown } | null)?.file;
  if (typeof file !== 'string' || file.includes('/')) return undefined;
  return fileURLToPath(new URL(file, import.meta.url));
}
