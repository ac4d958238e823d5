import { z } from 'zod';
import type { RouteDef } from './route.js';

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): unknown {
  try {
    return z.toJSONSchema(schema, { io, unrepresentable: 'any' });
  } catch {
    return {};
  }
}

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
    const responses: Record<string, unknown> = {};
    for (const status of r.successStatuses ?? [200]) {
      responses[String(status)] =
        r.responseSchema && status !== 204
          ? { description: 'Success', content: { 'application/json': { schema: jsonSchema(r.responseSchema, 'output') } } }
          : { description: status === 204 ? 'Success, no body' : 'Success' };
    }
    responses.default = {
      description: 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    const op: Record<string, unknown> = {
      summary: r.summary,
      'x-strata-operation': r.operation,
      parameters: params,
      security: r.operation === 'public' ? [] : [{ bearer: [] }],
      responses,
    };
    if (r.requestSchema)
      op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(r.requestSchema, 'input') } } };
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
