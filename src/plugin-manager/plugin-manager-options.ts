/** Events held for a slow `PluginManager.subscribe` consumer before its stream ends (BERTH_SUBSCRIBER_LAGGED). */
export const DEFAULT_EVENT_QUEUE_SIZE = 1_000;
