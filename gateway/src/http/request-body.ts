import { createGunzip } from 'node:zlib';
import { jsonDepthWithin, MAX_JSON_DEPTH, StrataError } from '@strata/common';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type { z } from 'zod';

/** Reads the whole request body, gunzipping `Content-Encoding: gzip`, refusing more than `limit` bytes. */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip')
    throw new StrataError('invalid', `Unsupported Content-Encoding: ${encoding}. Use gzip or none.`);
  const declared = Number(ctx.get('content-length') || 0);
  if (encoding === 'identity' && declared > limit) throw tooLarge(limit);
  const stream = encoding === 'gzip' ? ctx.req.pipe(createGunzip()) : ctx.req;
  try {
    // The limit applies to the decompressed size: a small gzip bomb cannot expand past it.
    return await getRawBody(stream, { limit });
  } catch (err) {
    const e = err as { type?: string; code?: string };
    if (e.type === 'entity.too.large') throw tooLarge(limit);
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR')
      throw new StrataError('invalid', 'The gzip request body is corrupt.');
    throw new StrataError('invalid', 'The request body could not be read.');
  }
}

const tooLarge = (limit: number) =>
  new StrataError('payload_too_large', `The request body is larger than the limit of ${limit} bytes.`);

/** Parses a JSON body; an empty body is `undefined`. Nesting deeper than MAX_JSON_DEPTH is refused. */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const raw = await readRawBody(ctx, limit);
  if (raw.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new StrataError('invalid', 'The request body is not valid JSON.');
  }
  if (!jsonDepthWithin(value, MAX_JSON_DEPTH))
    throw new StrataError('invalid', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  return value;
}

type AnySchema = z.ZodType;

function defOf(schema: AnySchema): {
  type: string;
  innerType?: AnySchema;
  in?: AnySchema;
  shape?: Record<string, AnySchema>;
  element?: AnySchema;
} {
  return (schema as unknown as { _zod: { def: never } })._zod.def;
}

function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const def = defOf(s);
    if (def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else break;
  }
  return s;
}

/**
 * Renames object keys to the schema's spelling when they match without regard to case, so that
 * `Schema`, `schema` and `SCHEMA` all bind (clients send camelCase and PascalCase alike). Keys of
 * free-form values (records, `unknown`) are left exactly as sent.
 */
function canonicalizeKeys(value: unknown, schema: AnySchema): unknown {
  const core = unwrap(schema);
  const def = defOf(core);
  if (def.type === 'array' && Array.isArray(value) && def.element) return value.map((v) => canonicalizeKeys(v, def.element!));
  if (def.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const shape = (core as unknown as { shape: Record<string, AnySchema> }).shape;
    const byLower = new Map(Object.keys(shape).map((k) => [k.toLowerCase(), k]));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const canonical = byLower.get(k.toLowerCase()) ?? k;
      out[canonical] = shape[canonical] ? canonicalizeKeys(v, shape[canonical]!) : v;
    }
    return out;
  }
  return value;
}

/** Validates a value against a schema after key canonicalization; problems become one 400. */
export function validateBody<S extends AnySchema>(value: unknown, schema: S): z.output<S> {
  const result = schema.safeParse(canonicalizeKeys(value, schema));
  if (result.success) return result.data as z.output<S>;
  const problems = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`);
  throw new StrataError('invalid', `Invalid request body: ${problems.join('; ')}`, {
    details: problems.map((p) => ({ message: p, tokens: [] })),
  });
}
