/** A TCP address given as HOST:PORT (IPv6 hosts in brackets: [::1]:8080). */
export interface TcpAddress {
  host: string;
  port: number;
}

/** Parses HOST:PORT; undefined when it is not one. Port 0 asks the OS for a free port. */
export function parseHostPort(text: string): TcpAddress | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (!match) return undefined;
  const host = match[1] ?? match[2] ?? '';
  const port = Number(match[3]);
  if (host === '' || port > 65535) return undefined;
  return { host, port };
}

export function formatHostPort(address: TcpAddress): string {
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}
