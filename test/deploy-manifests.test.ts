/**
 * deploy/Containerfile and deploy/kubernetes/daemonset.yaml stay in step with
 * berth: the flags the manifest passes are flags `berth run` knows, its host
 * paths are the daemon's defaults for root, its probes answer 200 without a
 * token on a real daemon's TCP listener, and the image's entry point, port and
 * base agree with package.json and the manifest.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import * as contract from '../src/daemon/contract.js';
import {
  BERTH_CLI,
  runModule,
  spawnModule,
  stopChild,
  trackChild,
  waitForLine,
} from '../src/testing/harness/index.js';
import { createTempDir, waitFor } from '../src/testing/index.js';

const MAIN = BERTH_CLI;
// Compiled tests live in dist/test; under tsx in test/.
const repoRoot = new URL(import.meta.url.includes('/dist/') ? '../../' : '../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, repoRoot), 'utf8');

const pkg = JSON.parse(read('package.json')) as {
  version: string;
  bin: Record<string, string>;
  engines: { node: string };
};

interface Container {
  name: string;
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string | number } };
  readinessProbe: { httpGet: { path: string; port: string | number } };
  startupProbe?: { httpGet: { path: string; port: string | number } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { runAsUser?: number };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface DaemonSet {
  kind: string;
  spec: {
    template: {
      spec: { containers: Container[]; volumes: { name: string; hostPath?: { path: string } }[] };
    };
  };
}

const daemonSet = parse(read('deploy/kubernetes/daemonset.yaml')) as DaemonSet;
const podSpec = daemonSet.spec.template.spec;
const berth = podSpec.containers.find((c) => c.name === 'berth') as Container;

/** `--flag value` pairs and bare `--flag`s of the container's `berth run`. */
function runFlags(args: string[]): Map<string, string | true> {
  assert.equal(args[0], 'run', 'the container runs `berth run`');
  const flags = new Map<string, string | true>();
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as string;
    assert.ok(arg.startsWith('--'), `unexpected argument ${arg}`);
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      flags.set(arg, next);
      i++;
    } else flags.set(arg, true);
  }
  return flags;
}

/** The host directory mounted at `mountPath`, and whether read-only. */
function hostMount(mountPath: string): { hostPath: string; readOnly: boolean } {
  const mount = berth.volumeMounts.find((m) => m.mountPath === mountPath);
  assert.ok(mount, `nothing is mounted at ${mountPath}`);
  const volume = podSpec.volumes.find((v) => v.name === mount.name);
  assert.ok(volume?.hostPath, `volume ${mount.name} is not a hostPath`);
  return { hostPath: volume.hostPath.path, readOnly: mount.readOnly === true };
}

function probePort(port: string | number): number {
  if (typeof port === 'number') return port;
  const named = berth.ports.find((p) => p.name === port);
  assert.ok(named, `probe port ${port} is not a named container port`);
  return named.containerPort;
}

function getAnonymously(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('deploy/kubernetes/daemonset.yaml', () => {
  const flags = runFlags(berth.args);

  it('passes only flags `berth run` knows', async () => {
    const help = await runModule(MAIN, ['run', '--help']);
    assert.equal(help.code, 0, help.stderr);
    const known = new Set([...help.stdout.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((m) => m[1]));
    assert.ok(known.has('--plugins-dir') && known.has('--listen'), help.stdout);
    for (const flag of flags.keys()) assert.ok(known.has(flag), `berth run does not know ${flag}`);
  });

  it('runs in observer mode on the kubelet plugins directory, mounted read-only', () => {
    assert.equal(flags.get('--observe'), true);
    const pluginsDir = flags.get('--plugins-dir');
    assert.equal(pluginsDir, '/var/lib/kubelet/plugins_registry');
    assert.deepEqual(hostMount(pluginsDir), { hostPath: pluginsDir, readOnly: true });
  });

  it("mounts the daemon's default state and runtime directories for root from the host", () => {
    assert.equal(berth.securityContext?.runAsUser, 0, 'root, so the root defaults apply');
    assert.ok(!flags.has('--data-dir'), 'the data dir is left to the root default');
    for (const dir of [contract.SYSTEM_PATHS.dataDir, dirname(contract.SYSTEM_PATHS.apiSocketPath)]) {
      assert.deepEqual(hostMount(dir), { hostPath: dir, readOnly: false });
    }
  });

  it('probes the TCP listener it opens, on the routes berth answers without a token', async () => {
    const listen = flags.get('--listen');
    assert.equal(typeof listen, 'string');
    const address = contract.parseHostPort(listen as string);
    assert.ok(address, `--listen ${String(listen)} is not host:port`);
    const probes = [
      berth.livenessProbe,
      berth.readinessProbe,
      ...(berth.startupProbe ? [berth.startupProbe] : []),
    ];
    for (const probe of probes) assert.equal(probePort(probe.httpGet.port), address.port);
    assert.equal(berth.livenessProbe.httpGet.path, '/healthz');
    assert.equal(berth.readinessProbe.httpGet.path, '/readyz');

    // The same paths on a real daemon's TCP listener, with no token.
    await using dir = createTempDir('berth-deploy-');
    const children = new Set<import('node:child_process').ChildProcess>();
    const daemon = trackChild(
      spawnModule(MAIN, [
        'run',
        '--data-dir',
        dir.join('data'),
        '--plugins-dir',
        dir.join('plugins'),
        '--listen',
        '127.0.0.1:0',
      ]),
      children,
    );
    try {
      const line = await waitForLine(daemon, 'the start-up line', (l) => l.startsWith('berth: watching'));
      const port = Number(/http:\/\/127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
      assert.ok(port > 0, line);
      for (const probe of probes) {
        await waitFor(
          `${probe.httpGet.path} answers 200 without a token`,
          async () => (await getAnonymously(port, probe.httpGet.path)) === 200,
          { timeoutMs: 30_000 },
        );
      }
      assert.equal(await getAnonymously(port, '/v1/status'), 401, 'other routes need the token');
    } finally {
      for (const child of children) await stopChild(child);
    }
  });

  it('asks for resources and runs the image of this version', () => {
    assert.ok(berth.resources.requests?.cpu && berth.resources.requests.memory, 'cpu and memory requests');
    assert.ok(berth.resources.limits?.memory, 'a memory limit');
    assert.equal(berth.image, `berth:${pkg.version}`);
  });
});

describe('deploy/Containerfile', () => {
  // '${BASE}' in two parts: whole, the linter would take it for a template string missing its backticks.
  const BUILD_STAGE = ['FROM $', '{BASE} AS build'].join('');
  const RUNTIME_STAGE = ['FROM $', '{BASE}'].join('');
  const text = read('deploy/Containerfile');
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

  it('takes its base as a build argument, default node:<engines major>-bookworm-slim, for both stages', () => {
    const major = /(\d+)/.exec(pkg.engines.node)?.[1];
    assert.ok(instructions.includes(`ARG BASE=node:${major}-bookworm-slim`), 'ARG BASE default');
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    assert.deepEqual(froms, [BUILD_STAGE, RUNTIME_STAGE]);
  });

  it('builds with the dev dependencies and ships production dependencies only', () => {
    const build = instructions.slice(instructions.indexOf(BUILD_STAGE), instructions.indexOf(RUNTIME_STAGE));
    assert.ok(
      build.some((l) => l.includes('npm ci')),
      'npm ci in the build stage',
    );
    assert.ok(build.some((l) => l.includes('npm run build') && l.includes('npm prune --omit=dev')));
    const runtime = instructions.slice(instructions.indexOf(RUNTIME_STAGE));
    assert.ok(!runtime.some((l) => /npm (ci|install)/.test(l)), 'the runtime stage installs nothing');
  });

  it("exposes the manifest's port and enters through package.json's bin", () => {
    const port = contract.parseHostPort(runFlags(berth.args).get('--listen') as string)?.port;
    assert.ok(port, 'the manifest listens on a port');
    assert.ok(instructions.includes(`EXPOSE ${port}`), `EXPOSE ${port}`);
    const [binName, binPath] = Object.entries(pkg.bin)[0] as [string, string];
    assert.ok(instructions.includes(`ENTRYPOINT ["${binName}"]`));
    assert.ok(instructions.includes('CMD ["run"]'));
    assert.ok(
      instructions.some((l) => l.includes(`ln -s /opt/berth/${binPath} /usr/local/bin/${binName}`)),
      'the bin link points at package.json bin',
    );
  });
});
