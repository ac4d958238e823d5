import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { columnTypeToProto, HTTP_STATUS_BY_KIND, INFLOW_LIMITS, isGuid, isValidName, StrataError } from '@strata/common';
import type { AppendRequest } from '@strata/proto/ingest/v1/ingest';
import { z } from 'zod';
import { accountScope, anySchemaPatternMatches } from '../auth/token-scope.js';
import { readRawBody } from '../http/request-body.js';
import type { HttpResult, RouteContext, RouteDef } from '../http/route.js';
import { agentIdentity } from './agent-identity.js';
import { delimitedChunks } from './delimited-batches.js';
import { inflowMetrics } from './inflow-metrics.js';
import { type BuiltPart, buildJsonBatch } from './json-batch.js';
import { type OutgoingAppend, outgoingAppend } from './outgoing-append.js';
import { buildRawJsonBatch } from './raw-json-batch.js';
import {
  type Delimiter,
  delimiterOfContentType,
  delimiterOfExtension,
  delimiterOfFirstLine,
  peekFirstLine,
} from './upload-format.js';

/** Idempotency-Key: up to 200 printable ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** For the OpenAPI document only; the handler validates entry by entry (buildJsonBatch). */
const inflowBodyDoc = z.array(
  z.object({
    schema: z.string().describe("letters, digits, '.', '_', '-'"),
    timestamp: z.string().describe('ISO 8601, UTC or with an offset'),
    data: z.record(z.string(), z.unknown()).describe('field → string, number, boolean, object or array'),
  }),
);

function accountIdOf(rc: RouteContext): string {
  const id = rc.params.accountId!;
  if (!isGuid(id)) throw new StrataError('invalid', 'The account id must be a GUID.');
  return id.toLowerCase();
}

function idempotencyKeyOf(rc: RouteContext): string | undefined {
  const key = rc.koa.get('idempotency-key');
  if (!key) return undefined;
  if (!IDEMPOTENCY_KEY.test(key))
    throw new StrataError('invalid', 'Idempotency-Key must be 1–200 printable ASCII characters without spaces.');
  return key;
}

/** Stamps shared by every entry of the request. */
function stampsOf(rc: RouteContext) {
  const { inflow } = rc.deps;
  return {
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: inflow.host,
    sourceAddress: inflow.addresses.resolve(rc.koa.req.socket.remoteAddress, rc.koa.get('x-forwarded-for') || undefined),
    // An agent's access token names its device; headers cannot override it.
    agent: rc.principal?.agent?.deviceId ?? agentIdentity(rc.koa) ?? '',
  };
}

function wireParts(parts: BuiltPart[]): AppendRequest['parts'] {
  return parts.map((p) => ({
    schema: p.schema,
    columns: p.columns.map((c) => ({ name: c.name, type: columnTypeToProto(c.type) })),
    rows: p.rows,
    rowCount: p.rowCount,
  }));
}

function record(route: string, status: number, started: number) {
  const m = inflowMetrics();
  m.requests.inc({ route, status: String(status) });
  m.seconds.observe({ route }, (performance.now() - started) / 1000);
}

function parseBody(raw: Buffer): unknown {
  try {
    return raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
  } catch {
    throw new StrataError('invalid', 'The request body is not valid JSON.');
  }
}

/** Parses, checks and encodes a JSON inflow body; the request is undefined when nothing is to be stored. */
function prepareJsonAppend(
  rc: RouteContext,
  accountId: string,
  raw: Buffer,
  key: string | undefined,
): { outgoing?: OutgoingAppend; accepted: number; dropped: number } {
  const patterns = rc.principal?.scope ? (accountScope(rc.principal.scope, accountId)?.inflow.schemas ?? []) : undefined;
  const options = { allowSchema: patterns ? (schema: string) => anySchemaPatternMatches(patterns, schema) : () => true };
  // The bytes as sent when they can be stored as they are (the common case); otherwise, and for
  // every refusal, the general path (decision 0028).
  let built = buildRawJsonBatch(raw, options);
  inflowMetrics().jsonBodies.inc({ path: built ? 'bytes' : 'parsed' });
  built ??= buildJsonBatch(parseBody(raw), options);
  if (built.accepted === 0) return { accepted: 0, dropped: built.dropped };
  return {
    accepted: built.accepted,
    dropped: built.dropped,
    outgoing: outgoingAppend({
      accountId,
      parts: wireParts(built.parts),
      ...stampsOf(rc),
      idempotencyKey: key ?? '',
      contentHash: key ? createHash('sha256').update(raw).digest('hex') : '',
      keyViewRevision: 0, // set by the WorkerRouter
    }),
  };
}

/**
 * PUT/POST /inflow/{accountId}: a JSON array of entries. Answers 200 with an empty body once every
 * accepted entry is durable on a worker; entries outside a scoped token's inflow patterns are
 * dropped (counted) and still answered 200; a batch with malformed entries is refused whole.
 */
async function jsonInflow(rc: RouteContext): Promise<HttpResult> {
  const started = performance.now();
  const metrics = inflowMetrics();
  let status = 500;
  try {
    const accountId = accountIdOf(rc);
    const key = idempotencyKeyOf(rc);
    const limit = Math.min(INFLOW_LIMITS.maxBodyBytes, rc.deps.config.gateway.maxBodyBytes);
    const raw = await readRawBody(rc.koa, limit);
    // Built and encoded in a synchronous step so the parsed body and the rows die before the wait
    // for the worker: kept across the await they would outlive young-generation collections
    // (measured: ~1 µs a row of GC; outgoing-append.ts).
    const batch = prepareJsonAppend(rc, accountId, raw, key);
    if (batch.dropped > 0) metrics.entries.inc({ result: 'dropped_out_of_scope' }, batch.dropped);
    if (batch.outgoing) {
      try {
        await rc.deps.inflow.router.append(batch.outgoing);
      } catch (err) {
        metrics.entries.inc({ result: 'refused' }, batch.accepted);
        throw err;
      }
      metrics.entries.inc({ result: 'stored' }, batch.accepted);
      rc.deps.schemas.noteWritten(accountId, batch.outgoing.written);
    }
    status = 200;
    return { status: 200 };
  } catch (err) {
    status = err instanceof StrataError ? statusOf(err) : 500;
    throw err;
  } finally {
    record('json', status, started);
  }
}

function statusOf(err: StrataError): number {
  return HTTP_STATUS_BY_KIND[err.kind];
}

/**
 * POST /inflow/{accountId}/{schema}/{ext}: a delimited file into one schema, streamed; the
 * delimiter comes from the extension, the Content-Type or the first line (upload-format.ts). Needs
 * a token with unrestricted inflow access (`*`), or a session user allowed to push (inflow
 * permission, account admin, global admin). Answers 200 `{ rows }` once every row is durable.
 */
async function fileInflow(rc: RouteContext): Promise<HttpResult> {
  const ext = rc.params.ext ?? '';
  const known = delimiterOfExtension(ext);
  return delimitedInflow(rc, known, known === ',' ? 'csv' : known === '\t' ? 'tsv' : 'file');
}

async function delimitedInflow(rc: RouteContext, fromExtension: Delimiter | undefined, route: string): Promise<HttpResult> {
  const started = performance.now();
  const metrics = inflowMetrics();
  let status = 500;
  let stored = 0;
  let pending: Promise<void> | undefined;
  let streaming = false;
  try {
    const accountId = accountIdOf(rc);
    if (rc.principal?.scope) {
      const scope = accountScope(rc.principal.scope, accountId);
      if (!scope?.inflow.schemas.includes('*'))
        throw new StrataError('forbidden', 'CSV and TSV ingest needs a token with unrestricted inflow access (*).');
    }
    const schema = rc.params.schema!;
    if (!isValidName(schema))
      throw new StrataError('invalid', `Schema name must be 1–${INFLOW_LIMITS.maxNameLength} letters, digits, '.', '_' or '-'.`);
    const key = idempotencyKeyOf(rc);
    const encoding = (rc.koa.get('content-encoding') || 'identity').toLowerCase();
    if (encoding !== 'identity' && encoding !== 'gzip')
      throw new StrataError('invalid', `Unsupported Content-Encoding: ${encoding}. Use gzip or none.`);
    let input: Readable = encoding === 'gzip' ? rc.koa.req.pipe(createGunzip()) : rc.koa.req;
    let delimiter = fromExtension ?? delimiterOfContentType(rc.koa.get('content-type'));
    if (!delimiter) {
      const peeked = await peekFirstLine(input, INFLOW_LIMITS.maxValueLength * 4);
      delimiter = delimiterOfFirstLine(peeked.firstLine);
      input = peeked.stream;
    }

    // Two chunks in flight: the next is parsed while the previous one is being stored.
    streaming = true;
    let index = 0;
    for await (const chunk of delimitedChunks(input, { schema, delimiter })) {
      const outgoing = outgoingAppend({
        accountId,
        parts: wireParts([chunk.part]),
        ...stampsOf(rc),
        idempotencyKey: key ? `${key}#${index}` : '',
        contentHash: key ? chunk.contentHash : '',
        keyViewRevision: 0, // set by the WorkerRouter
      });
      index++;
      const rows = chunk.part.rowCount;
      if (pending) await pending;
      const sent = rc.deps.inflow.router.append(outgoing).then(() => {
        stored += rows;
        rc.deps.schemas.noteWritten(accountId, outgoing.written);
      });
      sent.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      pending = sent;
    }
    if (pending) await pending;
    metrics.entries.inc({ result: 'stored' }, stored);
    status = 200;
    return { status: 200, body: { rows: stored } };
  } catch (err) {
    await pending?.catch(() => undefined); // settle the chunk in flight: `stored` is then exact
    if (stored > 0) metrics.entries.inc({ result: 'stored' }, stored);
    // Discard the rest of the upload; the answer says how far it got.
    rc.koa.req.resume();
    rc.koa.set('connection', 'close');
    const e = err instanceof StrataError ? err : new StrataError('internal', 'Internal error.', { cause: err });
    status = statusOf(e);
    if (e.kind === 'internal' || !streaming) throw err;
    throw new StrataError(e.kind, `${e.message} Rows stored before the failure: ${stored}.`, {
      details: e.details,
      retryAfterSeconds: e.retryAfterSeconds,
    });
  } finally {
    record(route, status, started);
  }
}

const JSON_SUMMARY =
  "Push entries: a JSON array of { schema, timestamp, data } (keys case-insensitive; Content-Encoding: gzip accepted). 200 with an empty body once every accepted entry is durable. Entries outside a scoped token's inflow schemas are dropped (still 200). A batch with malformed entries is refused whole (400 naming each entry's index and reason). Idempotency-Key: a retried request is stored once. 507/503 with Retry-After when no worker can store it.";

const FILE_SUMMARY =
  'Push a file into one schema, streamed (logsh upload): CSV or TSV, the delimiter from the extension (csv; tsv or tab), else the Content-Type (text/csv, text/tab-separated-values), else the first line (a tab: TSV; otherwise CSV; JSON refused). First line is the header, column types from the first row of values, rows timestamped on arrival. Needs a token with unrestricted inflow access (*), or a user with inflow rights or account admin. 200 { rows } once every row is durable.';

export const inflowRoutes: RouteDef[] = [
  {
    method: 'PUT',
    path: '/inflow/:accountId',
    operation: 'inflow.push',
    summary: JSON_SUMMARY,
    requestSchema: inflowBodyDoc,
    handler: jsonInflow,
  },
  {
    method: 'POST',
    path: '/inflow/:accountId',
    operation: 'inflow.push',
    summary: JSON_SUMMARY,
    requestSchema: inflowBodyDoc,
    handler: jsonInflow,
  },
  {
    method: 'POST',
    path: '/inflow/:accountId/:schema/:ext',
    operation: 'inflow.push',
    summary: FILE_SUMMARY,
    successStatuses: [200],
    responseSchema: z.object({ rows: z.number().int() }),
    handler: fileInflow,
  },
];
