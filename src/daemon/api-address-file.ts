import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { formatHostPort, parseHostPort, type TcpAddress } from './config/listen-address.js';

/**
 * `<data-dir>/api-address`: the TCP address(es) the running daemon serves its
 * API on, one HOST:PORT a line. The CLI sends the data directory's token only
 * to an address listed here, so a token never leaves for a server the user
 * did not name a token for. Written 0600 at start, removed at stop.
 */
export function recordApiAddresses(path: string, addresses: readonly TcpAddress[]): void {
  rmSync(path, { force: true });
  writeFileSync(path, addresses.map((a) => `${formatHostPort(a)}\n`).join(''), { mode: 0o600, flag: 'wx' });
}

export function removeApiAddresses(path: string): void {
  rmSync(path, { force: true });
}

/** The addresses a daemon recorded; none when the file is missing or unreadable. */
export function readApiAddresses(path: string): TcpAddress[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  // A file of a few lines; anything long is not ours.
  return text
    .slice(0, 4096)
    .split('\n')
    .map((line) => parseHostPort(line))
    .filter((a): a is TcpAddress => a !== undefined);
}

const WILDCARDS = new Set(['0.0.0.0', '::', '']);
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * Whether `target` names a recorded address: the same host and port, or the
 * same port on loopback when the daemon listens on every address.
 */
export function isRecordedAddress(target: TcpAddress, recorded: readonly TcpAddress[]): boolean {
  const host = target.host.toLowerCase();
  return recorded.some(
    (r) =>
      r.port === target.port &&
      (r.host.toLowerCase() === host || (WILDCARDS.has(r.host) && LOOPBACK.has(host))),
  );
}
