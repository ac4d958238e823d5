import { z } from 'zod';
import type { RouteDef } from './route.js';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table so it cannot drift from
 * what is served: paths, methods, summaries, the permission rule of each route and request schemas.
 */
export function openApiDocument(routes: RouteDef[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const op: Record<string, unknown> = {
      summary: r.summary,
      'x-strata-operation': r.operation,
      parameters: params,
      security: r.operation === 'public' ? [] : [{ bearer: [] }],
      responses: {
        '200': { description: 'Success' },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
    if (r.requestSchema) {
      let schema: unknown;
      try {
        schema = z.toJSONSchema(r.requestSchema, { io: 'input', unrepresentable: 'any' });
      } catch {
        schema = {};
      }
      op.requestBody = { required: true, content: { 'application/json': { schema } } };
    }
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Strata HTTP API', version: '1' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['message', 'stackTrace', 'errors'],
          properties: {
            message: { type: 'string' },
            stackTrace: { type: 'null' },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  message: { type: ['string', 'null'] },
                  tokens: {
                    type: 'array',
                    items: { type: 'object', properties: { start: { type: 'integer' }, end: { type: 'integer' } } },
                  },
                },
              },
            },
          },
        },
      },
    },
    paths,
  };
}
