import type { FastifyInstance } from 'fastify';
import { BerthError } from '../../../common/index.js';
import type { PluginCatalog } from '../api-types.js';
import { pluginView } from '../views.js';
import type { PluginDetailResponse, PluginListResponse, PluginSummaryView } from '../wire-types.js';

/** A query-string value, or undefined (repeated keys take the last). */
export function queryString(query: unknown, key: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[key];
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' && last !== '' ? last : undefined;
}

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
 * GET /v1/plugins[?type=T] and GET /v1/plugins/{type}/{name}. Plugin types may
 * contain slashes (example.com/berth-example), so the second route takes the
 * rest of the path: the last segment is the name, the segments before it the
 * type (URL-encoding the slash works as well).
 */
export function pluginRoutes(app: FastifyInstance, catalog: PluginCatalog): void {
  app.get(
    '/v1/plugins',
    async (request): Promise<PluginListResponse> => ({
      plugins: currentPlugins(catalog, queryString(request.query, 'type')),
    }),
  );

  app.get('/v1/plugins/*', async (request): Promise<PluginDetailResponse> => {
    const rest = (request.params as { '*': string })['*'];
    const cut = rest.lastIndexOf('/');
    const type = cut > 0 ? rest.slice(0, cut) : '';
    const name = cut > 0 ? rest.slice(cut + 1) : '';
    if (type === '' || name === '') {
      throw new BerthError(
        'BERTH_NOT_FOUND',
        `no route GET /v1/plugins/${rest}; use /v1/plugins/{type}/{name}`,
      );
    }
    const current = catalog.listPlugins(type)?.find((p) => p.name === name);
    const instances = catalog.listInstances(type, name);
    if (!current || instances.length === 0) {
      throw new BerthError(
        'BERTH_PLUGIN_NOT_FOUND',
        `plugin ${name} for type ${type} not found; list registered plugins with GET /v1/plugins`,
      );
    }
    return {
      plugin: { ...pluginView(current), instances: instances.length },
      instances: instances.map(pluginView),
    };
  });
}
