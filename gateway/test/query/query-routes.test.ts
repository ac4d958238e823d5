/** Time limits of the query route: the server default, a token's own limit, the maximum. */
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import type { RouteContext } from '../../src/http/route.js';
import { DEFAULT_QUERY_TIMEOUT_SECONDS, MAX_QUERY_TIMEOUT_SECONDS, queryTimeoutMs } from '../../src/query/query-routes.js';

const ACCOUNT = '00000000-0000-0000-0000-0000000000aa';

function rc(queryTimeoutSeconds?: number | null): RouteContext {
  const scope =
    queryTimeoutSeconds === undefined
      ? undefined
      : { accounts: [{ accountId: ACCOUNT, inflow: { schemas: [] }, query: { queryTimeoutSeconds, schemas: ['*'] } }] };
  return {
    params: { accountId: ACCOUNT.toUpperCase() },
    principal: {
      userId: 'u',
      tokenType: scope ? 'pat' : 'session',
      scope,
      globalPermissions: new Set(),
      accountPermissions: new Map(),
    },
  } as unknown as RouteContext;
}

describe('query route time limits', () => {
  it('uses the server default without a token limit', () => {
    assert.equal(queryTimeoutMs(rc()), DEFAULT_QUERY_TIMEOUT_SECONDS * 1000);
    assert.equal(queryTimeoutMs(rc(null)), DEFAULT_QUERY_TIMEOUT_SECONDS * 1000);
  });

  it("uses a token's queryTimeoutSeconds, up to the maximum", () => {
    assert.equal(queryTimeoutMs(rc(5)), 5_000);
    assert.equal(queryTimeoutMs(rc(120)), 120_000);
    assert.equal(queryTimeoutMs(rc(100_000)), MAX_QUERY_TIMEOUT_SECONDS * 1000);
  });
});
