// The bundles `npm run build` writes into dist/bundle/ (see build.mjs for why
// bundles at all):
//
// - program.js (ESM, with its lazily loaded parts as chunks beside it) is the
//   CLI.
// - run-entry.cjs (CommonJS, one file) is the part of the CLI a plain `berth
//   run` needs (no commander, no other command: cli/run-args.ts) with the
//   code-cache loader, which main.cjs require()s: loading it and the loader
//   as ES modules (seven chunks, then the loader's own import()) took about
//   12 ms, most of it the ES module loader's own steps.
// - daemon-<hash>.cjs (CommonJS, one file) is the daemon, which `berth run`
//   loads through src/cli/daemon-module.ts with a V8 code cache: node 20 can
//   cache compiled code only for a vm.Script, and a vm.Script holds CommonJS,
//   not ESM. daemon-bundle.json names it for the loader. The CLI bundle
//   leaves the daemon out (it is loaded from this one).
//
// Native and optional packages stay outside both (better-sqlite3,
// node-unix-socket; the Kubernetes client and etcd3 are optional peers,
// reached only through berth's modules that wrap them, which the daemon
// bundle imports from dist/src when configured). The daemon bundle carries
// better-sqlite3's JavaScript, not its addon (storage/open-database.ts gives
// the addon's path): loaded from node_modules, its files were compiled at
// every start, about 5 ms of it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const EXTERNAL_PACKAGES = ['better-sqlite3', 'node-unix-socket', '@kubernetes/client-node', 'etcd3'];
const DAEMON_EXTERNAL_PACKAGES = EXTERNAL_PACKAGES.filter((name) => name !== 'better-sqlite3');
/** berth's modules that import an optional peer: outside the daemon bundle, loaded by import(). */
const OPTIONAL_PEER_MODULES = ['src/objects/etcd.js', 'src/objects/kubernetes.js', 'src/cluster/etcd.js'];
export const DAEMON_MANIFEST = 'daemon-bundle.json';

/** Builds both bundles into `bundle`; returns the files written. */
export async function buildBundles(dist, bundle) {
  const esbuild = await import('esbuild');
  const cli = await esbuild.build({
    metafile: true,
    entryPoints: [join(dist, 'src/cli/program.js')],
    outdir: bundle,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL_PACKAGES,
    plugins: [leaveDaemonOut(dist, bundle)],
    // Bundled CommonJS code gets a real `require` for node's built-ins.
    banner: {
      js: "import { createRequire as __berthCreateRequire } from 'node:module'; const require = __berthCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  const daemonSource = join(dist, 'src/daemon/daemon.js');
  if (Object.values(cli.metafile.outputs).some((out) => daemonSource in out.inputs)) {
    throw new Error('the CLI bundle contains the daemon; it must reach it only through cli/daemon-module.ts');
  }

  // What the two CommonJS bundles (the run entry and the daemon) share.
  const commonJs = {
    metafile: true,
    outdir: bundle,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: EXTERNAL_PACKAGES,
    logLevel: 'warning',
  };
  const runEntry = await esbuild.build({
    ...commonJs,
    entryPoints: [join(dist, 'src/cli/run-entry.js')],
    entryNames: '[name]',
    plugins: [leaveDaemonOut(dist, bundle)],
    // A CommonJS file has no import.meta: its own URL, as the ES module's would be (after
    // "use strict", which only counts as the file's first statement).
    define: { 'import.meta.url': '__berthRunEntryUrl' },
    banner: {
      js: `"use strict";\nconst __berthRunEntryUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
  });
  if (Object.values(runEntry.metafile.outputs).some((out) => daemonSource in out.inputs)) {
    throw new Error(
      'the run-entry bundle contains the daemon; it must reach it only through cli/daemon-module.ts',
    );
  }

  const dynamicImports = new Set();
  const daemon = await esbuild.build({
    ...commonJs,
    entryPoints: [join(dist, 'src/daemon/index.js')],
    entryNames: 'daemon-[hash]',
    external: DAEMON_EXTERNAL_PACKAGES,
    // The loader passes the bundle's own URL under this name (a CommonJS file has no import.meta).
    define: { 'import.meta.url': '__berthImportMetaUrl' },
    plugins: [deferredRequires(DAEMON_DEFERRED), optionalPeersOutside(dist, bundle, dynamicImports)],
  });
  const outputs = Object.keys(daemon.metafile.outputs).map((out) => resolve(out));
  const daemonFile = outputs.find((out) => out.endsWith('.cjs'));
  if (daemonFile === undefined) throw new Error('esbuild wrote no daemon bundle');
  // The loader's own definition of the wrapper, as tsc just compiled it.
  const wrapperOf = await import(pathToFileURL(join(dist, 'src/cli/code-cache-options.js')).href);
  rewriteDaemonBundle(daemonFile, dynamicImports, wrapperOf.scriptWrapper(wrapperOf.DAEMON_BUNDLE_PARAMS));
  writeFileSync(join(bundle, DAEMON_MANIFEST), `${JSON.stringify({ file: relative(bundle, daemonFile) })}\n`);
  return [
    ...Object.keys(cli.metafile.outputs).map((out) => resolve(out)),
    ...Object.keys(runEntry.metafile.outputs).map((out) => resolve(out)),
    ...outputs,
    resolve(join(bundle, DAEMON_MANIFEST)),
  ];
}

/**
 * Imports the daemon's start evaluates but never calls: each is replaced by a
 * stand-in that loads the real module on first use. About 3 ms of every
 * `berth run` measured end to end (issue 20; each module alone, in a fresh
 * node, loads slower than inside the start): fastify requires node:http2
 * (5 ms alone) and node:https (with node:tls, 2.6 ms) for servers berth never asks it for;
 * prom-client's Pushgateway, which berth never uses, requires https and
 * zlib; fastify's plugin version checks pull in semver (1.6 ms); and yaml
 * (2.2 ms) is needed only when a config or object file is read.
 *
 * `importer` ends the path of the module whose import is deferred (other
 * importers get the real module); `exports` says what the importer uses:
 * 'proxy' (a CommonJS module reading properties at call time), or the names
 * of functions (an ES module's named imports, or a CommonJS destructuring at
 * load time). The build fails when a rule matches nothing, so an upgrade that
 * moves an import cannot silently bring the cost back.
 */
const DAEMON_DEFERRED = [
  { importer: 'node_modules/fastify/lib/server.js', specifier: 'node:http2', exports: 'proxy' },
  { importer: 'node_modules/fastify/lib/server.js', specifier: 'node:https', exports: 'proxy' },
  { importer: 'node_modules/fastify/lib/plugin-utils.js', specifier: 'semver', exports: 'proxy' },
  { importer: 'node_modules/prom-client/lib/pushgateway.js', specifier: 'https', exports: 'proxy' },
  { importer: 'node_modules/prom-client/lib/pushgateway.js', specifier: 'zlib', exports: ['gzipSync'] },
  { importer: 'dist/src/daemon/config/config.js', specifier: 'yaml', exports: ['parse'] },
  { importer: 'dist/src/objects/sources/object-file.js', specifier: 'yaml', exports: ['parse'] },
];

function deferredRequires(rules) {
  const used = new Set();
  return {
    name: 'deferred-requires',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.namespace !== 'file') return undefined;
        const rule = rules.find((r) => r.specifier === args.path && args.importer.endsWith(r.importer));
        if (rule === undefined) return undefined;
        used.add(rule);
        return {
          path: `${rule.specifier} for ${rule.importer}`,
          namespace: 'berth-deferred',
          pluginData: { rule, resolveDir: args.resolveDir },
        };
      });
      build.onLoad({ filter: /.*/, namespace: 'berth-deferred' }, ({ pluginData }) => {
        const { rule, resolveDir } = pluginData;
        const load = `let loaded; const load = () => (loaded ??= require(${JSON.stringify(rule.specifier)}));`;
        const contents =
          rule.exports === 'proxy'
            ? `${load}\nmodule.exports = new Proxy({}, { get: (_, key) => load()[key], has: (_, key) => key in load() });\n`
            : `${load}\n${rule.exports.map((name) => `export function ${name}(...args) { return load().${name}(...args); }`).join('\n')}\n`;
        // resolveDir: the stand-in's own require() resolves from the importer's folder.
        return { contents, resolveDir, loader: 'js' };
      });
      build.onEnd((result) => {
        if (result.errors.length > 0) return;
        const unused = rules.filter((r) => !used.has(r));
        if (unused.length > 0) {
          throw new Error(
            `deferred imports that no longer exist: ${unused.map((r) => `${r.importer} -> ${r.specifier}`).join(', ')}; update DAEMON_DEFERRED in scripts/bundle.mjs`,
          );
        }
      });
    },
  };
}

/** cli/daemon-module.ts's fallback import of the daemon stays an import of dist/src (never taken from the bundle). */
function leaveDaemonOut(dist, bundle) {
  const daemonIndex = join(dist, 'src/daemon/index.js');
  return {
    name: 'leave-daemon-out',
    setup(build) {
      build.onResolve({ filter: /daemon\/index\.js$/ }, (args) => {
        if (resolve(args.resolveDir, args.path) !== daemonIndex) return undefined;
        if (!args.importer.endsWith(join('src/cli/daemon-module.js'))) {
          throw new Error(`${args.importer} imports the daemon; load it through cli/daemon-module.ts`);
        }
        return { path: relative(bundle, daemonIndex), external: true };
      });
    },
  };
}

/**
 * Optional peers' wrappers are imported from dist/src; every dynamic import
 * of something outside the bundle is recorded, for rewriteDaemonBundle. A
 * static import of an optional peer from inside the bundle is an error: it
 * would be a require(), which cannot load an ES module on node 20.
 */
function optionalPeersOutside(dist, bundle, dynamicImports) {
  const wrappers = new Set(OPTIONAL_PEER_MODULES.map((m) => join(dist, m)));
  return {
    name: 'optional-peers-outside',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const isBare = !args.path.startsWith('.') && !args.path.startsWith('/');
        // A built-in loaded on first use (`await import('node:https')`) is rewritten like a peer.
        if (isBare && args.path.startsWith('node:') && args.kind === 'dynamic-import') {
          dynamicImports.add(args.path);
          return undefined;
        }
        if (isBare && (args.path.startsWith('node:') || !DAEMON_EXTERNAL_PACKAGES.includes(args.path)))
          return undefined;
        if (isBare) {
          if (args.kind === 'dynamic-import') dynamicImports.add(args.path);
          else if (args.path === '@kubernetes/client-node' || args.path === 'etcd3') {
            throw new Error(`${args.importer} imports ${args.path} statically; the daemon bundle must not`);
          }
          return undefined; // external (the list above)
        }
        const target = resolve(args.resolveDir, args.path);
        if (!wrappers.has(target)) return undefined;
        if (args.kind !== 'dynamic-import') throw new Error(`${args.importer} imports ${target} statically`);
        const path = relative(bundle, target);
        dynamicImports.add(path);
        return { path, external: true };
      });
    },
  };
}

/**
 * A vm.Script made from a code cache loses its dynamic-import callback on
 * node 20, so each `import("x")` of something outside the bundle becomes
 * `__berthImport("x")`, which the loader passes in. Non-ASCII characters (in
 * comments: esbuild escapes them elsewhere) become \u escapes, so the loader
 * can read the file as a one-byte string. The file is written wrapped in the
 * loader's function (`head` ... `tail`), which it then compiles as it is.
 */
function rewriteDaemonBundle(file, dynamicImports, { head, tail }) {
  let text = readFileSync(file, 'utf8');
  for (const specifier of dynamicImports) {
    const call = `import(${JSON.stringify(specifier)})`;
    if (!text.includes(call)) throw new Error(`the daemon bundle has no ${call} to rewrite`);
    text = text.replaceAll(call, `__berthImport(${JSON.stringify(specifier)})`);
  }
  if (/\bimport\(\s*["'`]/.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, ''))) {
    throw new Error('the daemon bundle still has a dynamic import()');
  }
  text = text.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // Already wrapped as the loader would wrap it (code-cache-options.ts says why).
  writeFileSync(file, `${head}${text}${tail}`);
}
