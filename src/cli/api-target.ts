import { readFileSync } from 'node:fs';
import { BerthError } from '../common/index.js';
import {
  dataDirLayout,
  defaultApiSocket,
  defaultPaths,
  isRecordedAddress,
  parseHostPort,
  readApiAddresses,
  type TcpAddress,
} from '../daemon/contract.js';
import type { ApiTarget } from './api-client.js';

export interface ApiTargetFlags {
  api?: string;
  dataDir?: string;
  /** File holding the bearer token for a TCP API (else $BERTH_TOKEN, else <data-dir>/api-token for the local daemon's own address). */
  tokenFile?: string;
  /** PEM CA that signed the daemon's certificate: talk HTTPS. */
  tlsCa?: string;
  /** Client certificate and key for mutual TLS. */
  tlsCert?: string;
  tlsKey?: string;
}

/** Token files and certificates are small; a bigger file is a mistake. */
const CLIENT_FILE_MAX_BYTES = 64 * 1024;

function readSmallFile(path: string, flag: string): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (err) {
    throw new BerthError(
      'BERTH_USAGE',
      `${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  if (data.length > CLIENT_FILE_MAX_BYTES) {
    throw new BerthError('BERTH_USAGE', `${flag}: ${path} is larger than ${CLIENT_FILE_MAX_BYTES} bytes`);
  }
  return data;
}

/** Where a TCP target's token came from; none: nothing was sent. */
export type TokenSource = '--token-file' | '$BERTH_TOKEN' | 'the data directory';

/**
 * The token for a TCP target: --token-file, else $BERTH_TOKEN, else the data
 * directory's api-token, but only when `tcp` is an address the local daemon
 * recorded for itself there (`<data-dir>/api-address`). The local token is
 * never sent to a server the user named without a token: it would leave in
 * clear text for whatever answers there.
 */
function resolveToken(
  flags: ApiTargetFlags,
  env: NodeJS.ProcessEnv,
  tcp: TcpAddress,
  euid?: number,
): { token: string; from: TokenSource } | undefined {
  if (flags.tokenFile !== undefined) {
    const token = readSmallFile(flags.tokenFile, '--token-file').toString('utf8').trim();
    if (token === '') throw new BerthError('BERTH_USAGE', `--token-file: ${flags.tokenFile} is empty`);
    return { token, from: '--token-file' };
  }
  if (env.BERTH_TOKEN !== undefined && env.BERTH_TOKEN.trim() !== '') {
    return { token: env.BERTH_TOKEN.trim(), from: '$BERTH_TOKEN' };
  }
  const dataDir = flags.dataDir ?? defaultPaths({ env, ...(euid === undefined ? {} : { euid }) }).dataDir;
  if (!isRecordedAddress(tcp, readApiAddresses(dataDirLayout(dataDir).apiAddressPath))) return undefined;
  try {
    const local = readFileSync(dataDirLayout(dataDir).tokenFile, 'utf8').trim();
    return local === '' ? undefined : { token: local, from: 'the data directory' };
  } catch {
    return undefined;
  }
}

/**
 * Which daemon a client command talks to: `--api PATH|HOST:PORT|https://HOST:PORT`,
 * else the socket in `--data-dir`, else the default socket (the same one
 * `berth run` uses: /run/berth/berth.sock as root, else in the user's data
 * directory). TCP carries the bearer token
 * when one applies (see resolveToken). `euid` defaults to the process's.
 */
export function resolveApiTarget(
  flags: ApiTargetFlags,
  env: NodeJS.ProcessEnv = process.env,
  euid?: number,
): ApiTarget {
  if (flags.api !== undefined) {
    const https = flags.api.startsWith('https://');
    const text = flags.api.replace(/^https?:\/\//, '').replace(/\/$/, '');
    const tcp = text.includes('/') ? undefined : parseHostPort(text);
    if (tcp) {
      const target: ApiTarget = { tcp };
      const token = resolveToken(flags, env, tcp, euid);
      if (token !== undefined) {
        target.token = token.token;
        target.tokenFrom = token.from;
      }
      if (https || flags.tlsCa !== undefined || flags.tlsCert !== undefined) {
        const tls: { ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
        if (flags.tlsCa !== undefined) tls.ca = readSmallFile(flags.tlsCa, '--tls-ca');
        if (flags.tlsCert !== undefined) tls.cert = readSmallFile(flags.tlsCert, '--tls-cert');
        if (flags.tlsKey !== undefined) tls.key = readSmallFile(flags.tlsKey, '--tls-key');
        target.tls = tls;
      }
      return target;
    }
    return { socketPath: flags.api };
  }
  return { socketPath: defaultApiSocket(flags.dataDir, { env, ...(euid === undefined ? {} : { euid }) }) };
}
