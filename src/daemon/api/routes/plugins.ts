import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { PluginCatalog } from '../api-types.js';
import { queryString } from '../query-string.js';
import { pluginView } from '../views.js';
import type { PluginDetailResponse, PluginListResponse, PluginSummaryView } from '../wire-types.js';

function currentPlugins(catalog: PluginCatalog, type: string | undefined): PluginSummaryView[] {
  const types = type === undefined ? catalog.types() : [type];
  const out: PluginSummaryView[] = [];
  for (const t of [...types].sort()) {
    for (const info of catalog.listPlugins(t) ?? []) {
      out.push({ ...pluginView(info), instances: catalog.listInstances(t, info.name).length });
    }
  }
  return out.sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name));
}

/**
 * The (type, name) pairs a plugin path may mean, most likely first. The path
 * is split on its raw (still encoded) slashes, so a '/' sent as %2F stays
 * inside its segment: `DevicePlugin/example.com%2Fdev` is type DevicePlugin,
 * name example.com/dev. Types may contain slashes too
 * (example.com/berth-example), so every cut is a candidate, the last first;
 * undefined when a segment is not valid percent-encoding.
 */
export function pluginPathCandidates(rawRest: string): { type: string; name: string }[] | undefined {
  const segments = rawRest.split('/');
  const out: { type: string; name: string }[] = [];
  try {
    for (let cut = segments.length - 1; cut >= 1; cut -= 1) {
      const type = decodeURIComponent(segments.slice(0, cut).join('/'));
      const name = decodeURIComponent(segments.slice(cut).join('/'));
      if (type !== '' && name !== '') out.push({ type, name });
    }
  } catch {
    return undefined;
  }
  return out;
}

/**
 * GET /v1/plugins[?type=T] and GET /v1/plugins/{type}/{name}. Plugin names
 * and types may contain slashes (example.com/dev, example.com/berth-example):
 * percent-encode them (%2F) to be exact; unencoded, every split is tried.
 */
export function pluginRoutes(app: FastifyInstance, catalog: PluginCatalog): void {
  app.get(
    '/v1/plugins',
    async (request): Promise<PluginListResponse> => ({
      plugins: currentPlugins(catalog, queryString(request.query, 'type')),
    }),
  );

  app.get('/v1/plugins/*', async (request): Promise<PluginDetailResponse> => {
    const rawPath = (request.raw.url ?? request.url).split('?')[0] ?? '';
    const rawRest = rawPath.slice(rawPath.indexOf('/v1/plugins/') + '/v1/plugins/'.length);
    const candidates = pluginPathCandidates(rawRest);
    if (candidates === undefined) {
      throw new BerthError(
        'BERTH_BAD_REQUEST',
        `the path /v1/plugins/${rawRest} is not valid percent-encoding`,
      );
    }
    if (candidates.length === 0) {
      throw new BerthError(
        'BERTH_NOT_FOUND',
        `no route GET /v1/plugins/${rawRest}; use /v1/plugins/{type}/{name} (encode a '/' in a name as %2F)`,
      );
    }
    for (const { type, name } of candidates) {
      const current = catalog.listPlugins(type)?.find((p) => p.name === name);
      const instances = catalog.listInstances(type, name);
      if (!current || instances.length === 0) continue;
      return {
        plugin: { ...pluginView(current), instances: instances.length },
        instances: instances.map(pluginView),
      };
    }
    const first = candidates[0] as { type: string; name: string };
    throw new BerthError(
      'BERTH_PLUGIN_NOT_FOUND',
      `plugin ${first.name} for type ${first.type} not found; list registered plugins with GET /v1/plugins (encode a '/' in a name as %2F)`,
    );
  });
}
