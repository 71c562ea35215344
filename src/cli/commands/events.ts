import type { Command } from 'commander';
import type { EventView } from '../../daemon/contract.js';
import type { ApiClient, SseMessage } from '../api-client.js';
import { followEvents } from '../event-follower.js';
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
    case 'reset':
      return `${head}  events after ${(data as { lastEventId?: number }).lastEventId ?? '?'} are no longer held by the daemon; run \`berth plugins\` to resynchronise`;
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

/**
 * Prints a followed event stream, one line per event, until Ctrl-C (exit 0).
 * A dropped connection is resumed (with Last-Event-ID) and said on stderr.
 */
export async function followToStdout(
  client: ApiClient,
  path: string,
  line: (message: SseMessage) => string,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const stream = followEvents(client, path, {
      signal: stop.signal,
      onNotice: (notice) => process.stderr.write(`${notice}\n`),
    });
    for await (const message of stream) process.stdout.write(`${line(message)}\n`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export function eventsCommand(program: Command): void {
  withClientOptions(
    program
      .command('events')
      .description(
        'follow plugin events (registered, deregistered, failed, ...) until interrupted; resumes after a dropped connection',
      )
      .option('--type <type>', 'only events about plugins of this type'),
    false,
  )
    .option('--json', 'one JSON document per line (NDJSON), each with its `type`', false)
    .action(async (flags: ClientFlags & { type?: string }) => {
      const query = flags.type === undefined ? '' : `?type=${encodeURIComponent(flags.type)}`;
      await followToStdout(clientFor(flags), `/v1/events${query}`, (message) =>
        flags.json ? message.data : formatEventLine(message.event, JSON.parse(message.data) as EventData),
      );
    });
}
