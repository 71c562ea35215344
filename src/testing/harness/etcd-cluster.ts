import { accessSync, constants, mkdirSync } from 'node:fs';
import { createTempDir } from '../temp-dir.js';
import {
  freePorts,
  type LaunchSettings,
  launch,
  type MemberSpec,
  PortConflictError,
  type RunningEtcd,
} from './etcd-server.js';

/**
 * A real three-member (or n-member) etcd cluster on loopback for tests: each
 * member its own ports and data dir, killable (SIGKILL, a crash) and
 * restartable on the same ports and data, so follower, leader and quorum loss
 * can be staged.
 */
export interface EtcdClusterOptions {
  members?: number;
  watchProgressNotifyIntervalMs?: number;
  startTimeoutMs?: number;
  binary?: string;
}

export interface EtcdMember {
  readonly name: string;
  readonly endpoint: string;
  readonly running: boolean;
  /** SIGKILL (crash) by default. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and data; waits until it answers /health (needs a quorum). */
  start(): Promise<void>;
}

export interface EtcdCluster extends AsyncDisposable {
  readonly members: readonly EtcdMember[];
  readonly endpoints: string[];
  /** The member that is leader now (asks a running member). */
  leader(): Promise<EtcdMember>;
  stop(): Promise<void>;
}

export async function startEtcdCluster(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const count = options.members ?? 3;
  const binary = options.binary ?? '/usr/bin/etcd';
  accessSync(binary, constants.X_OK);
  const temp = createTempDir('berth-etcdc-');
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const ports = await freePorts(count * 2);
    const specs: MemberSpec[] = [];
    const names = Array.from({ length: count }, (_, i) => `m${i + 1}`);
    const initialCluster = names.map((name, i) => `${name}=http://127.0.0.1:${ports[i * 2 + 1]}`).join(',');
    for (let i = 0; i < count; i++) {
      specs.push({
        name: names[i] ?? `m${i + 1}`,
        clientPort: ports[i * 2] ?? 0,
        peerPort: ports[i * 2 + 1] ?? 0,
        initialCluster,
      });
    }
    const settingsOf = (spec: MemberSpec): LaunchSettings => {
      const dataDir = temp.join(`attempt${attempt}`, spec.name);
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      return {
        binary,
        dataDir,
        watchProgressNotifyIntervalMs: options.watchProgressNotifyIntervalMs,
        startTimeoutMs: options.startTimeoutMs ?? 60_000,
      };
    };
    const results = await Promise.allSettled(specs.map((spec) => launch(settingsOf(spec), spec)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed === undefined) {
      const running = results.map((r) => (r as PromiseFulfilledResult<RunningEtcd>).value);
      return clusterHandle(
        specs.map((spec, i) => ({ spec, settings: settingsOf(spec), process: running[i] })),
        () => temp.remove(),
      );
    }
    await Promise.all(results.map((r) => (r.status === 'fulfilled' ? r.value.kill('SIGKILL') : undefined)));
    lastError = failed.reason;
    if (!(lastError instanceof PortConflictError)) break;
  }
  temp.remove();
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

interface MemberSlot {
  spec: MemberSpec;
  settings: LaunchSettings;
  process: RunningEtcd | undefined;
}

function clusterHandle(slots: MemberSlot[], cleanup: () => void): EtcdCluster {
  const members: EtcdMember[] = slots.map((slot) => ({
    name: slot.spec.name,
    endpoint: `http://127.0.0.1:${slot.spec.clientPort}`,
    get running() {
      return slot.process !== undefined;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      const running = slot.process;
      slot.process = undefined;
      await running?.kill(signal);
    },
    async start() {
      if (slot.process !== undefined) return;
      slot.process = await launch(slot.settings, slot.spec);
    },
  }));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(members.map((m) => m.kill('SIGKILL')));
      cleanup();
    })();
    return stopping;
  };
  return {
    members,
    endpoints: members.map((m) => m.endpoint),
    async leader() {
      for (const member of members) {
        if (!member.running) continue;
        try {
          const res = await fetch(`${member.endpoint}/v3/maintenance/status`, {
            method: 'POST',
            body: '{}',
            signal: AbortSignal.timeout(2_000),
          });
          const body = (await res.json()) as { header?: { member_id?: string }; leader?: string };
          if (body.leader === undefined || body.leader === '0') continue;
          for (const candidate of members) {
            if (!candidate.running) continue;
            const r = await fetch(`${candidate.endpoint}/v3/maintenance/status`, {
              method: 'POST',
              body: '{}',
              signal: AbortSignal.timeout(2_000),
            });
            const b = (await r.json()) as { header?: { member_id?: string } };
            if (b.header?.member_id === body.leader) return candidate;
          }
        } catch {
          // Try the next member.
        }
      }
      throw new Error('no running member knows a leader');
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
