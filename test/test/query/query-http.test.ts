/**
 * The query endpoints over HTTP on a whole node: what the clients send (logsh, Grafana) and what
 * they read back, query errors with positions, parse, schemas, and who may query what (token
 * query scopes, the request-time timeout from a token).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestNode, type TestNode } from '@strata/deploy/testing';
import type { WorkerHandle } from '@strata/worker';

const OWN = '00000000-0000-0000-0000-00000000c0c0';
const OTHER = '00000000-0000-0000-0000-00000000d0d0';
const PW = 'query-password-1';
const T0 = Date.UTC(2024, 5, 1);

function part(schema: string, n: number) {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ '@ts': (T0 + i * 60_000) * 1000, '@id': randomUUID(), host: `h${i % 2}`, value: i }),
  );
  return {
    schema,
    columns: [
      { name: 'host', type: 'String' as const },
      { name: 'value', type: 'Int64' as const },
    ],
    rows: Buffer.from(lines.join('\n')),
    rowCount: n,
  };
}

describe('query endpoints over HTTP', function () {
  this.timeout(120_000);
  let node: TestNode;
  let token: string;

  before(async () => {
    node = await startTestNode({
      accounts: { [OWN]: 'own', [OTHER]: 'other' },
      users: [
        {
          userId: '00000000-0000-0000-0000-0000000000a1',
          username: 'querier',
          password: PW,
          accounts: { own: ['Service.Account.Query'] },
        },
        {
          userId: '00000000-0000-0000-0000-0000000000a2',
          username: 'inflower',
          password: PW,
          accounts: { own: ['Service.Account.Inflow'] },
        },
      ],
    });
    const worker = node.process.roles.find((r) => r.name === 'backend') as unknown as WorkerHandle;
    await worker.storage.append({
      accountId: OWN,
      parts: [part('app.requests', 20), part('secret.audit', 3)],
      inflowTimestampUs: Date.now() * 1000,
      inflowHost: 'test',
      sourceAddress: '127.0.0.1',
      agent: null,
    });
    token = await node.signIn('querier', PW);
  });
  after(async () => node?.stop());

  const post = (path: string, body: unknown, t = token) => node.request('POST', path, { token: t, body });

  it('runs a query the way logsh and Grafana send it', async () => {
    const res = await post(`/search/${OWN}/kusto`, {
      query: 'app.requests | summarize n = count(), total = sum(value) by host | order by host asc',
      variables: [],
      querySource: 'raw',
      properties: { options: { servertimeout: '00:00:30)' } },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(body.header, ['host', 'n', 'total']);
    assert.deepEqual(body.columns, [
      { name: 'host', type: 'String' },
      { name: 'n', type: 'Int64' },
      { name: 'total', type: 'Int64' },
    ]);
    assert.deepEqual(body.results, [
      { host: 'h0', n: 10, total: 90 },
      { host: 'h1', n: 10, total: 100 },
    ]);
    assert.equal(body.truncated, false);
  });

  it('PascalCase request keys work too, and render comes back', async () => {
    const res = await post(`/search/${OWN}/kusto`, {
      Query: 'app.requests | summarize count() by bin(timestamp, 10m) | render timechart',
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { render: unknown; results: { timestamp: string }[] };
    assert.deepEqual(body.render, { chartType: 'timechart' });
    assert.equal(body.results[0]?.timestamp.length, '2024-06-01T00:00:00.0000000Z'.length);
  });

  it('answers a query error with 400 and token positions into the query', async () => {
    const query = 'app.requests | fork (take 1)';
    const res = await post(`/search/${OWN}/kusto`, { query });
    assert.equal(res.status, 400);
    const body = (await res.json()) as {
      message: string;
      stackTrace: null;
      errors: { message: string; tokens: { start: number; end: number }[] }[];
    };
    assert.match(body.message, /^The operator 'fork' is not supported: it answers with several tables/);
    assert.equal(body.stackTrace, null);
    const t = body.errors[0]?.tokens[0];
    assert.equal(query.slice(t?.start, t?.end), 'fork');
  });

  it('fills declare query_parameters from the request variables, and refuses a value of another type', async () => {
    const query =
      'declare query_parameters(h:string = "h1", minValue:long = 0); app.requests | where host == h and value >= minValue | summarize n = count(), total = sum(value)';
    const given = await post(`/search/${OWN}/kusto`, {
      query,
      variables: [
        { id: 'h', type: 'string', value: 'h0' },
        { id: 'minValue', value: 10 },
      ],
    });
    assert.equal(given.status, 200);
    // h0 holds the even values 0, 2, …, 18: those ≥ 10 are 10, 12, 14, 16, 18.
    assert.deepEqual(((await given.json()) as { results: unknown[] }).results, [{ n: 5, total: 70 }]);
    const defaults = await post(`/search/${OWN}/kusto`, { query, variables: [] });
    assert.deepEqual(((await defaults.json()) as { results: unknown[] }).results, [{ n: 10, total: 100 }]);
    const bad = await post(`/search/${OWN}/kusto`, { query, variables: [{ id: 'minValue', value: 'ten' }] });
    assert.equal(bad.status, 400);
    assert.match(
      ((await bad.json()) as { message: string }).message,
      /The value of the query parameter 'minValue' is not a long/,
    );
  });

  it('answers Kusto decimals from stored rows: Decimal columns with text values, exact sums (decision 0031)', async () => {
    const res = await post(`/search/${OWN}/kusto`, {
      query:
        'declare query_parameters(k:decimal); app.requests | extend d = todecimal(value) / decimal(3) + k | summarize s = sum(d), mx = max(d), n = dcount(d) by host | order by host asc',
      variables: [{ id: 'k', value: '0.50' }],
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { columns: unknown; results: unknown[] };
    assert.deepEqual(body.columns, [
      { name: 'host', type: 'String' },
      { name: 's', type: 'Decimal' },
      { name: 'mx', type: 'Decimal' },
      { name: 'n', type: 'Int64' },
    ]);
    // value / 3 has scale max(0 + 1 + 1, 6) = 6, truncated; + 0.50 keeps scale 6.
    const sixth = (v: number) => (BigInt(v) * 1_000_000n) / 3n + 500_000n;
    const text = (q: bigint) => `${q / 1_000_000n}.${String(q % 1_000_000n).padStart(6, '0')}`;
    const hostValues = (h: number) => Array.from({ length: 10 }, (_, i) => 2 * i + h);
    assert.deepEqual(
      body.results,
      [0, 1].map((h) => ({
        host: `h${h}`,
        s: text(hostValues(h).reduce((a, v) => a + sixth(v), 0n)),
        mx: text(sixth(18 + h)),
        n: 10,
      })),
    );
  });

  it('answers datetimes with 100 ns ticks as 7-digit DateTime text (decision 0036)', async () => {
    const res = await post(`/search/${OWN}/kusto`, {
      query:
        'declare query_parameters(t:datetime); app.requests | where timestamp < t | summarize n = count() by e = endofday(timestamp), host | order by host asc',
      variables: [{ id: 't', value: '2024-06-01T00:05:00.0000001Z' }],
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { columns: unknown; results: unknown[] };
    assert.deepEqual(body.columns, [
      { name: 'e', type: 'DateTime' },
      { name: 'host', type: 'String' },
      { name: 'n', type: 'Int64' },
    ]);
    // Rows at 00:00 … 00:05 (one tick past 00:05 includes it), alternating hosts.
    assert.deepEqual(body.results, [
      { e: '2024-06-01T23:59:59.9999999Z', host: 'h0', n: 3 },
      { e: '2024-06-01T23:59:59.9999999Z', host: 'h1', n: 3 },
    ]);
  });

  it('parses with columns and completions', async () => {
    const res = await post(`/search/${OWN}/kusto/parse`, { query: 'app.requests | where ', cursorPosition: 21, variables: [] });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { parseSuccess: boolean; suggestions: { autoCompletions: { value: string }[] } };
    assert.equal(body.parseSuccess, false);
    assert.ok(body.suggestions.autoCompletions.some((c) => c.value === 'host'));
    const ok = (await (await post(`/search/${OWN}/kusto/parse`, { query: 'app.requests | count' })).json()) as {
      parseSuccess: boolean;
      header: string[];
    };
    assert.deepEqual([ok.parseSuccess, ok.header], [true, ['Count']]);
  });

  it('lists schemas, also through the built-in tables', async () => {
    const res = await node.request('GET', `/search/${OWN}/schemas`, { token });
    const schemas = (await res.json()) as { name: string; columns: { name: string; type: string }[] }[];
    assert.deepEqual(
      schemas.map((s) => s.name),
      ['app.requests', 'secret.audit'],
    );
    assert.ok(schemas[0]?.columns.some((c) => c.name === 'value' && c.type === 'Int64'));
    const fields = (await (
      await post(`/search/${OWN}/kusto`, {
        query: '$metadata.schema.tables.fields | where TableName == "app.requests" | project ColumnName',
      })
    ).json()) as {
      results: { ColumnName: string }[];
    };
    assert.ok(fields.results.some((r) => r.ColumnName === 'host'));
  });

  it('only account members with a query right may query; other accounts are refused', async () => {
    assert.equal((await post(`/search/${OTHER}/kusto`, { query: 'app.requests | count' })).status, 403);
    const inflower = await node.signIn('inflower', PW);
    assert.equal((await post(`/search/${OWN}/kusto`, { query: 'app.requests | count' }, inflower)).status, 403);
    assert.equal((await node.request('POST', `/search/${OWN}/kusto`, { body: { query: 'x' } })).status, 401);
  });

  it("a token's query scope limits the schemas it sees", async () => {
    const create = await post('/auth/pat-token', {
      expiration: null,
      accounts: [
        {
          accountId: OWN,
          inflow: { schemas: [] },
          query: { default: { queryTimeoutSeconds: 5 }, schemas: [{ schema: 'app.*' }] },
        },
      ],
    });
    assert.equal(create.status, 200, await create.clone().text());
    const pat = ((await create.json()) as { token: string }).token;
    const ok = await post(`/search/${OWN}/kusto`, { query: 'app.requests | count' }, pat);
    assert.deepEqual(((await ok.json()) as { results: unknown }).results, [{ Count: 20 }]);
    const hidden = await post(`/search/${OWN}/kusto`, { query: 'secret.audit | count' }, pat);
    assert.equal(hidden.status, 400);
    assert.match(((await hidden.json()) as { message: string }).message, /does not refer to any known table/);
    const tables = (await (await post(`/search/${OWN}/kusto`, { query: 'schema.tables' }, pat)).json()) as {
      results: { TableName: string }[];
    };
    assert.deepEqual(
      tables.results.map((r) => r.TableName),
      ['app.requests'],
    );
    const schemas = (await (await node.request('GET', `/search/${OWN}/schemas`, { token: pat })).json()) as { name: string }[];
    assert.deepEqual(
      schemas.map((s) => s.name),
      ['app.requests'],
    );
  });
});
