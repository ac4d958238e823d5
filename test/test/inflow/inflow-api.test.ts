import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { gzipSync } from 'node:zlib';
import { metricsRegistry } from '@strata/common';
import { startTestNode, type TestNode } from '@strata/deploy/testing';
import type { WorkerHandle } from '@strata/worker';

/**
 * The inflow routes end to end: HTTP → gateway validation, scope and stamping → worker over gRPC
 * → durable storage, read back through the worker's scan API.
 */
const ACCOUNT = '00000000-0000-0000-0000-00000000f001';
const OTHER = '00000000-0000-0000-0000-00000000f002';
const PW = 'inflow-test-password-1';

function worker(node: TestNode): WorkerHandle {
  return node.process.roles.find((r) => r.name === 'backend') as WorkerHandle;
}

async function rows(node: TestNode, schema: string, sql: (r: string) => string, accountId = ACCOUNT) {
  const scan = await worker(node).storage.openScan(accountId, schema);
  if (!scan) return [];
  try {
    return (await scan.connection.runAndReadAll(sql(scan.relation))).getRowObjectsJson();
  } finally {
    await scan.release();
  }
}

async function count(node: TestNode, schema: string): Promise<number> {
  const r = await rows(node, schema, (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`);
  return (r[0]?.n as number | undefined) ?? 0;
}

async function droppedMetric(): Promise<number> {
  const metric = await metricsRegistry().getSingleMetric('strata_gateway_inflow_entries_total')?.get();
  return metric?.values.find((v) => v.labels.result === 'dropped_out_of_scope')?.value ?? 0;
}

async function jsonBodies(path: 'bytes' | 'parsed'): Promise<number> {
  const metric = await metricsRegistry().getSingleMetric('strata_gateway_inflow_json_bodies_total')?.get();
  return metric?.values.find((v) => v.labels.path === path)?.value ?? 0;
}

const entry = (schema: string, data: Record<string, unknown> = { v: 1 }, timestamp = '2024-01-01T00:00:00Z') => ({
  schema,
  timestamp,
  data,
});

describe('inflow API', function () {
  this.timeout(120_000);
  let node: TestNode;
  const tokens: Record<string, string> = {};

  before(async () => {
    node = await startTestNode({
      accounts: { [ACCOUNT]: 'inflow', [OTHER]: 'other' },
      users: [
        {
          userId: '00000000-0000-0000-0000-0000000000e1',
          username: 'pusher',
          password: PW,
          accounts: { inflow: ['Service.Account.Inflow'] },
        },
        {
          userId: '00000000-0000-0000-0000-0000000000e2',
          username: 'admin',
          password: PW,
          accounts: { inflow: ['Service.Account.Admin'] },
        },
        {
          userId: '00000000-0000-0000-0000-0000000000e3',
          username: 'viewer',
          password: PW,
          accounts: { inflow: ['Service.Incident.Viewer'] },
        },
      ],
      config: { gateway: { trustedProxies: ['127.0.0.1'] } },
    });
    for (const u of ['pusher', 'admin', 'viewer']) tokens[u] = await node.signIn(u, PW);
    const scoped = async (name: string, schemas: string[]) => {
      const res = await node.request('POST', '/auth/pat-token', {
        token: tokens.admin,
        body: {
          expiration: null,
          accounts: [{ accountId: ACCOUNT, inflow: { schemas: schemas.map((schema) => ({ schema })) } }],
        },
      });
      assert.equal(res.status, 200, await res.clone().text());
      tokens[name] = ((await res.json()) as { token: string }).token;
    };
    await scoped('exact', ['scope.exact']);
    await scoped('prefix', ['scope.pre.*']);
    await scoped('star', ['*']);
  });
  after(async () => node?.stop());

  it('PUT with the agent casing and +00:00 offsets answers 200 with an empty body; rows carry the stamped columns', async () => {
    const before = Date.now();
    const res = await node.request('PUT', `/inflow/${ACCOUNT}`, {
      token: tokens.pusher,
      body: [
        { Schema: 'Agent.Logs', TimeStamp: '2024-05-01T10:00:00.1234567+00:00', Data: { machine: 'm1', n: 1 } },
        { Schema: 'Agent.Logs', TimeStamp: '2024-05-01T12:00:00+02:00', Data: { machine: 'm2', n: 2 } },
      ],
      headers: { 'x-forwarded-for': '198.51.100.7', 'x-strata-agent': 'collector-1' },
    });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
    const got = await rows(
      node,
      'Agent.Logs',
      (r) => `SELECT strftime("timestamp", '%Y-%m-%dT%H:%M:%S.%fZ') AS ts, machine, n, __INFLOW_HOST AS host,
                     __INFLOW_SOURCE_ADDRESS AS src, __INFLOW_AGENT AS agent, epoch_ms(__INFLOW_TIMESTAMP) AS arrived,
                     __INFLOW_ID::VARCHAR AS id FROM ${r} ORDER BY n`,
    );
    assert.equal(got.length, 2);
    assert.deepEqual(
      got.map((g) => [g.ts, g.machine, g.n, g.host, g.src, g.agent]),
      [
        ['2024-05-01T10:00:00.123456Z', 'm1', '1', hostname(), '198.51.100.7', 'collector-1'],
        ['2024-05-01T10:00:00.000000Z', 'm2', '2', hostname(), '198.51.100.7', 'collector-1'],
      ],
    );
    assert.notEqual(got[0]!.id, got[1]!.id);
    const arrived = Number(got[0]!.arrived);
    assert.ok(arrived >= before && arrived <= Date.now());
  });

  it('POST with camelCase keys and a gzip body works the same; a non-agent upload has no agent', async () => {
    const body = gzipSync(JSON.stringify([entry('Gz.Logs', { msg: 'hello' }, '2024-01-01T00:00:00.000Z')]));
    const res = await fetch(`${node.baseUrl}/inflow/${ACCOUNT}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.pusher}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    assert.equal(res.status, 200);
    const got = await rows(
      node,
      'Gz.Logs',
      (r) => `SELECT msg, __INFLOW_AGENT AS agent, __INFLOW_SOURCE_ADDRESS AS src FROM ${r}`,
    );
    assert.deepEqual(got, [{ msg: 'hello', agent: null, src: '127.0.0.1' }]);
  });

  it('infers types on first write and widens later writes without dropping values', async () => {
    const push = (data: Record<string, unknown>) =>
      node.request('POST', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body: [entry('Types', data)] });
    assert.equal(
      (await push({ i: 1, f: 1.5, b: true, d: '2024-02-03T04:05:06Z', o: { k: [1, 2] }, s: 'text', w: 7 })).status,
      200,
    );
    const schema = () =>
      worker(node)
        .storage.listSchemas(ACCOUNT)
        .find((s) => s.schema === 'Types')!;
    const typeOf = (name: string) => schema().columns.find((c) => c.name === name)!.type;
    assert.deepEqual(['i', 'f', 'b', 'd', 'o', 's', 'w'].map(typeOf), [
      'Int64',
      'Float64',
      'Boolean',
      'DateTime',
      'Dynamic',
      'String',
      'Int64',
    ]);
    assert.equal((await push({ w: 7.5, extra: 'new' })).status, 200);
    assert.equal(typeOf('w'), 'Float64');
    assert.equal((await push({ w: 'seven' })).status, 200);
    assert.equal(typeOf('w'), 'String');
    assert.equal(typeOf('extra'), 'String');
    const got = await rows(node, 'Types', (r) => `SELECT w, o FROM ${r} ORDER BY __INFLOW_TIMESTAMP`);
    assert.deepEqual(
      got.map((g) => g.w),
      ['7', '7.5', 'seven'],
    );
    assert.equal(got[0]!.o, '{"k":[1,2]}');
  });

  it('stores bodies taken as sent (the fast path) exactly as parsed ones: unicode, escapes, numbers, large strings, widening', async () => {
    const large = `${'ü'.repeat(100_000)}|${'x'.repeat(200_000)}`;
    const data = [
      { seq: 1, s: 'héllo ✓ 日本語 😀', q: '"quoted" back\\slash\nline\ttab \u0000', f: 0.1, i: -42, b: true, n: null },
      { seq: 2, s: '', f: 1.5e-7, i: 9007199254740991, b: false, big: large },
      { seq: 3, f: 12345.678, extra: 'only here' },
    ];
    const send = async (schema: string, body: string, path: 'bytes' | 'parsed') => {
      const before = await jsonBodies(path);
      const res = await fetch(`${node.baseUrl}/inflow/${ACCOUNT}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.pusher}`, 'content-type': 'application/json' },
        body: body.replaceAll('SCHEMA', schema),
      });
      assert.equal(res.status, 200, await res.text());
      assert.equal(await jsonBodies(path), before + 1, `the body went the ${path} way`);
    };
    const entries = data.map((d) => ({ schema: 'SCHEMA', timestamp: '2024-03-01T00:00:00.123456Z', data: d }));
    // Pretty-printed with CRLF line breaks: taken as sent.
    await send('Path.Bytes', JSON.stringify(entries, null, 2).replace(/\n/g, '\r\n'), 'bytes');
    // An object under an ignored key sends the same entries the general way.
    await send('Path.Parsed', JSON.stringify(entries.map((e) => ({ ...e, meta: { ignored: true } }))), 'parsed');
    // A later batch widens i from Int64 to Float64 on both.
    const widen = JSON.stringify([{ schema: 'SCHEMA', timestamp: '2024-03-01T00:00:01Z', data: { seq: 4, i: 2.25 } }]);
    await send('Path.Bytes', widen, 'bytes');
    await send('Path.Parsed', widen.replace('"data"', '"meta":[1],"data"'), 'parsed');

    const read = (schema: string) =>
      rows(node, schema, (r) => `SELECT epoch_us("timestamp") AS ts, seq, s, q, f, i, b, big, extra FROM ${r} ORDER BY seq`);
    const fast = await read('Path.Bytes');
    assert.deepEqual(fast, await read('Path.Parsed'));
    assert.equal(fast.length, 4);
    assert.equal(fast[0]!.s, 'héllo ✓ 日本語 😀');
    assert.equal(fast[0]!.q, '"quoted" back\\slash\nline\ttab \u0000');
    assert.equal(fast[1]!.big, large);
    assert.deepEqual(
      fast.map((r) => r.i),
      [-42, 9007199254740991, null, 2.25],
    );
    const columns = (schema: string) =>
      worker(node)
        .storage.listSchemas(ACCOUNT)
        .find((s) => s.schema === schema)!
        .columns.map((c) => [c.name, c.type]);
    assert.deepEqual(columns('Path.Bytes'), columns('Path.Parsed'));
  });

  it('refuses a batch with malformed entries whole with a 400 naming each index and reason', async () => {
    const res = await node.request('POST', `/inflow/${ACCOUNT}`, {
      token: tokens.pusher,
      body: [
        entry('Malformed.Ok'),
        entry('bad schema!'),
        entry('Malformed.Ok', { v: 1 }, 'not a time'),
        entry('Malformed.Ok', { 'a b': 1 }),
      ],
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { message: string; stackTrace: null; errors: { message: string }[] };
    assert.match(body.message, /^The batch has 3 malformed entries; nothing was stored/);
    assert.equal(body.stackTrace, null);
    assert.deepEqual(
      body.errors.map((e) => e.message.split(':')[0]),
      ['entry 1', 'entry 2', 'entry 3'],
    );
    assert.equal(await count(node, 'Malformed.Ok'), 0);
    assert.equal(
      worker(node)
        .storage.listSchemas(ACCOUNT)
        .some((s) => s.schema === 'Malformed.Ok'),
      false,
    );
    assert.equal(
      (await node.request('POST', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body: { not: 'an array' } })).status,
      400,
    );
    assert.equal((await node.request('POST', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body: '[{' })).status, 400);
  });

  it('drops entries outside a token scope (exact, prefix, *) with 200 and counts them', async () => {
    const push = (token: string) =>
      node.request('PUT', `/inflow/${ACCOUNT}`, {
        token,
        body: [entry('scope.exact'), entry('scope.exact.more'), entry('scope.pre.a'), entry('scope.pre.b'), entry('scope.other')],
      });
    const dropped0 = await droppedMetric();
    assert.equal((await push(tokens.exact!)).status, 200);
    assert.equal((await droppedMetric()) - dropped0, 4);
    assert.deepEqual(
      [await count(node, 'scope.exact'), await count(node, 'scope.pre.a'), await count(node, 'scope.other')],
      [1, 0, 0],
    );
    assert.equal((await push(tokens.prefix!)).status, 200);
    assert.equal((await droppedMetric()) - dropped0, 4 + 3);
    assert.deepEqual(
      [await count(node, 'scope.pre.a'), await count(node, 'scope.pre.b'), await count(node, 'scope.other')],
      [1, 1, 0],
    );
    assert.equal((await push(tokens.star!)).status, 200);
    assert.equal((await droppedMetric()) - dropped0, 7);
    assert.deepEqual([await count(node, 'scope.exact.more'), await count(node, 'scope.other')], [1, 1]);
    // Everything dropped: still 200, nothing stored.
    const res = await node.request('PUT', `/inflow/${ACCOUNT}`, { token: tokens.exact, body: [entry('scope.none')] });
    assert.equal(res.status, 200);
    assert.equal(await count(node, 'scope.none'), 0);
  });

  it('lets inflow users, account admins and scoped tokens push, and no one else', async () => {
    const body = [entry('Perm.Logs')];
    assert.equal((await node.request('PUT', `/inflow/${ACCOUNT}`, { token: tokens.admin, body })).status, 200);
    assert.equal((await node.request('PUT', `/inflow/${ACCOUNT}`, { token: tokens.viewer, body })).status, 403);
    assert.equal((await node.request('PUT', `/inflow/${OTHER}`, { token: tokens.pusher, body })).status, 403);
    assert.equal((await node.request('PUT', `/inflow/${OTHER}`, { token: tokens.star, body })).status, 403);
    assert.equal((await node.request('PUT', `/inflow/${ACCOUNT}`, { body })).status, 401);
  });

  it('stores a request with an Idempotency-Key once and refuses the key with another body', async () => {
    const send = (body: unknown, key: string) =>
      node.request('PUT', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body, headers: { 'idempotency-key': key } });
    const body = [entry('Idem.Logs', { n: 1 }), entry('Idem.Logs', { n: 2 })];
    assert.equal((await send(body, 'req-1')).status, 200);
    assert.equal((await send(body, 'req-1')).status, 200);
    assert.equal(await count(node, 'Idem.Logs'), 2);
    const conflict = await send([entry('Idem.Logs', { n: 3 })], 'req-1');
    assert.equal(conflict.status, 409);
    assert.match(((await conflict.json()) as { message: string }).message, /Idempotency-Key req-1 was already used/);
    assert.equal((await send(body, 'bad key with spaces')).status, 400);
  });

  it('CSV: types from the first row, rows timestamped on arrival, answered with the row count', async () => {
    const before = Date.now();
    const csv = 'host,count,ratio,ok\nweb-1,3,0.5,true\nweb-2,4,1.25,false\n';
    const res = await node.request('POST', `/inflow/${ACCOUNT}/Csv.Upload/csv`, {
      token: tokens.pusher,
      body: csv,
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { rows: 2 });
    const schema = worker(node)
      .storage.listSchemas(ACCOUNT)
      .find((s) => s.schema === 'Csv.Upload')!;
    assert.deepEqual(schema.columns.slice(6), [
      { name: 'host', type: 'String' },
      { name: 'count', type: 'Int64' },
      { name: 'ratio', type: 'Float64' },
      { name: 'ok', type: 'Boolean' },
    ]);
    const got = await rows(node, 'Csv.Upload', (r) => `SELECT host, epoch_ms("timestamp") AS t FROM ${r} ORDER BY host`);
    assert.equal(got.length, 2);
    assert.ok(Number(got[0]!.t) >= before && Number(got[0]!.t) <= Date.now());
  });

  it('TSV from a token with unrestricted inflow; schema-scoped tokens are refused', async () => {
    const tsv = 'a\tb\n1\tx\n2\ty\n';
    const ok = await node.request('POST', `/inflow/${ACCOUNT}/Tsv.Upload/tsv`, { token: tokens.star, body: tsv });
    assert.equal(ok.status, 200);
    assert.equal(await count(node, 'Tsv.Upload'), 2);
    for (const t of ['exact', 'prefix']) {
      const res = await node.request('POST', `/inflow/${ACCOUNT}/scope.exact/csv`, { token: tokens[t], body: 'a\n1\n' });
      assert.equal(res.status, 403, t);
      assert.equal(
        ((await res.json()) as { message: string }).message,
        'CSV and TSV ingest needs a token with unrestricted inflow access (*).',
      );
    }
    assert.equal(
      (await node.request('POST', `/inflow/${ACCOUNT}/Tsv.Upload/tsv`, { token: tokens.viewer, body: tsv })).status,
      403,
    );
    assert.equal(
      (await node.request('POST', `/inflow/${ACCOUNT}/Tsv.Upload/tsv`, { token: tokens.admin, body: tsv })).status,
      200,
    );
  });

  it('CSV: a malformed line is refused with its line number and what was stored before it', async () => {
    const res = await node.request('POST', `/inflow/${ACCOUNT}/Csv.Bad/csv`, { token: tokens.pusher, body: 'a,b\n1,2\n3\n' });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { message: string }).message, /^Line 3: .* Rows stored before the failure: 0\.$/);
    assert.equal(await count(node, 'Csv.Bad'), 0);
  });

  it('a large CSV streams through in chunks', async () => {
    const lines = ['seq,payload'];
    for (let i = 0; i < 120_000; i++) lines.push(`${i},row-${i}-${'x'.repeat(40)}`);
    const res = await fetch(`${node.baseUrl}/inflow/${ACCOUNT}/Csv.Big/csv`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.pusher}`, 'content-encoding': 'gzip' },
      body: gzipSync(lines.join('\n')),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { rows: 120_000 });
    const got = await rows(node, 'Csv.Big', (r) => `SELECT count(DISTINCT seq)::INTEGER AS d, max(seq)::INTEGER AS mx FROM ${r}`);
    assert.deepEqual(got, [{ d: 120_000, mx: 119_999 }]);
  });

  it('refuses oversized requests with 413', async () => {
    const many = Array.from({ length: 100_001 }, () => ({ schema: 'L', timestamp: '2024-01-01T00:00:00Z', data: {} }));
    assert.equal((await node.request('POST', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body: many })).status, 413);
    const huge = `[${' '.repeat(33 * 1024 * 1024)}]`;
    assert.equal((await node.request('POST', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body: huge })).status, 413);
  });

  describe('hostile bodies answer 4xx, never 5xx', () => {
    const nested = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
    const inflow = (data: string) =>
      node.request('PUT', `/inflow/${ACCOUNT}`, {
        token: tokens.pusher,
        body: `[{"schema":"Hostile.Deep","timestamp":"2024-01-01T00:00:00Z","data":${data}}]`,
      });
    const message = async (res: Response) => ((await res.json()) as { message: string }).message;

    it('data nesting up to the limit is stored; deeper (10,000 and 100,000 levels, objects or arrays) is a 400 naming the limit', async () => {
      assert.equal((await inflow(`{"ok":${nested(64)}}`)).status, 200);
      for (const data of [
        `{"x":${nested(65)}}`,
        `{"x":${nested(10_000)}}`,
        `{"x":${nested(100_000)}}`,
        `{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      ]) {
        const res = await inflow(data);
        assert.equal(res.status, 400);
        assert.match(await message(res), /entry 0: the value of field 'x' nests deeper than 64 levels/);
      }
    });

    it('huge strings, wrong types and broken JSON are 4xx', async () => {
      const cases: [string, number][] = [
        [`{"s":"${'x'.repeat(1_048_577)}"}`, 400],
        ['"not an object"', 400],
        ['[1,2]', 400],
        ['{"n":1e999}', 200], // JSON.parse reads it as Infinity: a Float64
        ['{"a":1', 400],
      ];
      for (const [data, status] of cases) {
        const res = await inflow(data);
        assert.equal(res.status, status, `${data.slice(0, 40)}: ${await res.text()}`);
      }
      for (const body of [
        '[{"schema":1,"timestamp":2,"data":3}]',
        '[null]',
        '{}',
        '"x"',
        `[${'['.repeat(50_000)}${']'.repeat(50_000)}]`,
        '\u0000',
      ]) {
        const res = await node.request('PUT', `/inflow/${ACCOUNT}`, { token: tokens.pusher, body });
        assert.ok(res.status >= 400 && res.status < 500, `${body.slice(0, 40)} answered ${res.status}`);
      }
    });

    it('other JSON bodies (sign-in, tokens, query, settings, alerts, incidents, comments) nested 10,000 levels are a 400 naming the limit', async () => {
      const deep = nested(10_000);
      for (const [method, url, token] of [
        ['POST', '/auth/token', undefined],
        ['POST', `/search/${ACCOUNT}/kusto`, tokens.admin],
        ['POST', `/search/${ACCOUNT}/kusto/parse`, tokens.admin],
        ['PUT', `/accounts/${ACCOUNT}/settings/Service.Storage.Compaction.MaxFileSize`, tokens.admin],
        ['POST', '/auth/pat-token', tokens.admin],
        ['PUT', `/accounts/${ACCOUNT}/alert-runtime-states/00000000-0000-0000-0000-0000000000aa`, tokens.admin],
        ['PUT', `/accounts/${ACCOUNT}/incidents/00000000-0000-0000-0000-0000000000ab`, tokens.admin],
        ['POST', `/accounts/${ACCOUNT}/incidents/00000000-0000-0000-0000-0000000000ab/comments`, tokens.admin],
      ] as const) {
        const res = await node.request(method, url, { token, body: `{"query":${deep}}` });
        assert.equal(res.status, 400, `${method} ${url}`);
        assert.equal(await message(res), 'The request body nests deeper than 64 levels.');
      }
    });
  });
});

describe('inflow without a writable worker', function () {
  this.timeout(60_000);

  it('answers 507 with Retry-After when every worker is short of space, and nothing is written', async () => {
    const node = await startTestNode({
      users: [
        {
          userId: '00000000-0000-0000-0000-0000000000e9',
          username: 'p',
          password: PW,
          accounts: { default: ['Service.Account.Inflow'] },
        },
      ],
      config: { backend: { minimumFreeSpaceBytes: Number.MAX_SAFE_INTEGER } },
    });
    try {
      const token = await node.signIn('p', PW);
      const res = await node.request('PUT', '/inflow/00000000-0000-0000-0000-000000000000', { token, body: [entry('Full')] });
      assert.equal(res.status, 507);
      assert.equal(res.headers.get('retry-after'), '30');
      assert.match(((await res.json()) as { message: string }).message, /No worker can accept writes/);
      assert.deepEqual(worker(node).storage.listSchemas('00000000-0000-0000-0000-000000000000'), []);
      const csv = await node.request('POST', '/inflow/00000000-0000-0000-0000-000000000000/Full/csv', { token, body: 'a\n1\n' });
      assert.equal(csv.status, 507);
    } finally {
      await node.stop();
    }
  });

  it('answers 503 with Retry-After when no worker is registered', async () => {
    const node = await startTestNode({
      roles: { backend: false },
      users: [
        {
          userId: '00000000-0000-0000-0000-0000000000ea',
          username: 'p',
          password: PW,
          accounts: { default: ['Service.Account.Inflow'] },
        },
      ],
    });
    try {
      const token = await node.signIn('p', PW);
      const res = await node.request('PUT', '/inflow/00000000-0000-0000-0000-000000000000', { token, body: [entry('None')] });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
    } finally {
      await node.stop();
    }
  });
});
