import type { ApiClient } from './api-client.js';
import { errorLine } from './cli-error.js';
import { followEvents } from './event-follower.js';
import { type Listing, type OutputFormat, renderListing } from './output.js';

/** Events that come in a burst (a plugin registering: discovered, registered) make one redraw. */
export const WATCH_DEBOUNCE_MS = 100;

/** ANSI: cursor home, clear screen. A terminal shows the latest render in place. */
const CLEAR = '\u001b[H\u001b[2J';

export interface WatchOptions {
  client: ApiClient;
  /** The event route whose events may change the listing (with its `?type=`). */
  eventsPath: string;
  fetch: () => Promise<Listing>;
  format: OutputFormat;
  out?: { write(text: string): unknown; isTTY?: boolean };
  notice?: (line: string) => void;
  signal: AbortSignal;
}

/**
 * `--watch`: lists once the event stream is open, then lists again after
 * each burst of events (a `reset` or `lagged` included), until `signal`
 * aborts. On a terminal each render replaces the last; elsewhere renders
 * follow one another, separated by a blank line.
 */
export async function watchListing(options: WatchOptions): Promise<void> {
  const out = options.out ?? process.stdout;
  const notice = options.notice ?? ((line: string) => process.stderr.write(`${line}\n`));
  let timer: NodeJS.Timeout | undefined;
  let drawing: Promise<void> = Promise.resolve();
  let first = true;
  const draw = async () => {
    if (options.signal.aborted) return;
    const text = renderListing(await options.fetch(), options.format);
    if (options.signal.aborted) return;
    out.write(out.isTTY ? `${CLEAR}${text}\n` : `${first ? '' : '\n'}${text}\n`);
    first = false;
  };
  const schedule = (delay: number) => {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      drawing = drawing.then(draw).catch((err: unknown) => notice(errorLine(err)));
    }, delay);
  };
  try {
    const stream = followEvents(options.client, options.eventsPath, {
      signal: options.signal,
      // (Re)connected: list now, so nothing that happened before the stream opened is missed.
      onOpen: () => schedule(0),
      onNotice: notice,
    });
    for await (const _event of stream) schedule(WATCH_DEBOUNCE_MS);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    await drawing;
  }
}
