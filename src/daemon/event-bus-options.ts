/**
 * Recent events an event bus holds for clients that reconnect with
 * Last-Event-ID (config `api.eventRingSize`): at a few hundred bytes each,
 * 1024 cost well under a megabyte and cover a reconnect after a burst such
 * as a restarted node's plugins registering again.
 */
export const DEFAULT_EVENT_RING_SIZE = 1024;
