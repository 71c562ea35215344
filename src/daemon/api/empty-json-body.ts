import type { FastifyInstance } from 'fastify';

/**
 * `DELETE` with `Content-Type: application/json` and no body is what many
 * HTTP clients send, and the Kubernetes API server accepts it: so does berth.
 * Every other JSON body still goes through fastify's own parser (with its
 * prototype-poisoning protection), and an empty one elsewhere is still an error.
 */
export function acceptEmptyJsonOnDelete(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (request.method === 'DELETE' && text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
