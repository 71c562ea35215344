import type { Command } from 'commander';
import { BerthError } from '../../common/index.js';
import type { EventView } from '../../daemon/contract.js';
import { type ClientFlags, clientFor, withClientOptions } from './client-options.js';
import type { FieldsOf, Lenient } from './lenient.js';

/** Any event's fields, each of which may be missing (an event type this CLI does not know yet). */
type EventData = Lenient<FieldsOf<EventView>>;

/** One line per event for people. */
export function formatEventLine(event: string, data: EventData): string {
  const at = data.at ?? '';
  const plugin = data.plugin ? `${data.plugin.type}/${data.plugin.name}` : '';
  const head = `${at}  ${event.padEnd(14)}`;
  switch (event) {
    case 'registered':
    case 'updated':
    case 'deregistered':
      return `${head}  ${plugin}  ${data.plugin && 'socketPath' in data.plugin ? (data.plugin.socketPath ?? '') : ''}`.trimEnd();
    case 'failed': {
      const retry = data.retryAt ? `, retry at ${data.retryAt}` : '';
      const who = plugin ? `${plugin} ` : '';
      return `${head}  ${data.socketPath ?? ''}  ${who}${data.error?.message ?? ''} (attempt ${data.attempts ?? '?'}${retry})`;
    }
    case 'discovered':
    case 'socket-removed':
      return `${head}  ${data.socketPath ?? ''}`;
    case 'lagged':
      return `${head}  ${data.dropped ?? '?'} events were dropped for this slow client; run \`berth plugins\` to resynchronise`;
    case 'storage-error':
      return `${head}  ${data.error?.message ?? ''}`;
    case 'devices-changed':
      return `${head}  ${data.resource ?? ''}  ${data.reason ?? ''}: ${data.healthy ?? 0} healthy, ${data.unhealthy ?? 0} unhealthy  ${(data.changed ?? []).join(',')}`.trimEnd();
    case 'driver-unusable':
      return `${head}  ${plugin}  no instance connected since ${data.since ?? '?'}`;
    default:
      return `${head}  ${JSON.stringify(data)}`;
  }
}

export function eventsCommand(program: Command): void {
  withClientOptions(
    program
      .command('events')
      .description('follow plugin events (registered, deregistered, failed, ...) until interrupted')
      .option('--type <type>', 'only events about plugins of this type'),
  ).action(async (flags: ClientFlags & { type?: string }) => {
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const query = flags.type === undefined ? '' : `?type=${encodeURIComponent(flags.type)}`;
      for await (const message of clientFor(flags).events(`/v1/events${query}`, stop.signal)) {
        // --json: one JSON document per line (NDJSON), each with its `type`.
        if (flags.json) console.log(message.data);
        else console.log(formatEventLine(message.event, JSON.parse(message.data) as EventData));
      }
      if (!stop.signal.aborted) {
        throw new BerthError('BERTH_API_ERROR', 'the daemon closed the event stream (it is shutting down?)');
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  });
}
