/**
 * The daemon's errors speak to any HTTP client ("list registered pods with
 * GET /v1/pods"); a CLI user is told the `berth` command that lists the same.
 */
const COMMAND_FOR_ROUTE: Record<string, string> = {
  '/v1/pods': 'berth pods list',
  '/v1/plugins': 'berth plugins',
  '/v1/sockets': 'berth sockets',
  '/v1/devices': 'berth devices',
  '/v1/csi/drivers': 'berth csi drivers',
  '/v1/dra/drivers': 'berth dra drivers',
  '/v1/cluster/nodes': 'berth cluster nodes',
  '/v1/cluster/plugins': 'berth cluster plugins',
  '/v1/status': 'berth status',
};

/** "list <what> with GET <route>[ (encode a '/' ...)]" → "list them with `berth ...`". */
const LIST_HINT = /list [\w ]+? with GET (\/v1\/[\w/]+)(?: \(encode a '\/' in a name as %2F\))?/g;

export function withCliHints(message: string): string {
  return message.replace(LIST_HINT, (whole, route: string) => {
    const command = COMMAND_FOR_ROUTE[route];
    return command === undefined ? whole : `list them with \`${command}\``;
  });
}
