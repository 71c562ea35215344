import { ExamplePlugin } from '../registration/index.js';

/**
 * Upstream's NewTestExamplePlugin: `endpoint` is both the socket the plugin
 * listens on and the endpoint GetInfo reports. Call `start()` to serve.
 */
export function newTestExamplePlugin(
  name: string,
  type: string,
  endpoint: string,
  ...versions: string[]
): ExamplePlugin {
  return new ExamplePlugin({ socketPath: endpoint, name, type, endpoint, versions });
}
