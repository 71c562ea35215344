import { Argument, type Command } from 'commander';
import type { ObjectResponse } from '../../daemon/contract.js';
import { type ClientFlags, printListing, withClientOptions } from './client-options.js';
import { parseNamespacedName } from './pods.js';

export function objectsCommand(program: Command): void {
  const objects = program.command('objects').description('read objects through the object manager');
  withClientOptions(
    objects
      .command('get')
      .description('print a secret or configmap that a registered pod references (as JSON)')
      .addArgument(new Argument('<resource>', 'secrets or configmaps').choices(['secrets', 'configmaps']))
      .argument('<namespace/name>', 'the object, e.g. default/db-password'),
  ).action(async (resource: string, target: string, flags: ClientFlags) => {
    const [namespace, name] = parseNamespacedName(target, 'the object');
    await printListing('berth objects get', flags, async (client) => {
      const object = await client.request<ObjectResponse>(
        'GET',
        `/v1/objects/${resource}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
      );
      // An object is a document: its "table" is its JSON, as before.
      return {
        command: 'berth objects get',
        body: object,
        table: () => JSON.stringify(object, null, 2),
        names: () => [`${resource}/${namespace}/${name}`],
      };
    });
  });
}
