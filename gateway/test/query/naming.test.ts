/**
 * Result column names and types checked against Microsoft's own KQL analyzer: for standard KQL,
 * the engine must name and type result columns exactly as Kusto.Language does.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'mocha';
import { bindQuery } from '../../src/query/engine.js';
import { NeedsAnswer, type PhaseAnswer } from '../../src/query/semantic/phases.js';
import { kustoLanguage, warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';

const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'T',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'host', type: 'string' },
        { name: 'x', type: 'long' },
        { name: 'y', type: 'real' },
        { name: 's', type: 'string' },
        { name: 'd', type: 'dynamic' },
        { name: 'b', type: 'bool' },
        { name: 'ts', type: 'timespan' },
      ],
    },
  ],
};

/** Kusto's type names folded the way the engine reports them (int → long). */
const KUSTO_TYPE: Record<string, string> = {
  int: 'long',
  long: 'long',
  real: 'real',
  string: 'string',
  bool: 'bool',
  datetime: 'datetime',
  timespan: 'timespan',
  dynamic: 'dynamic',
  guid: 'guid',
};

function kustoColumns(query: string): string[] {
  const K = kustoLanguage() as unknown as {
    KustoCode: {
      ParseAndAnalyze(
        q: string,
        g: unknown,
      ): { ResultType: { Columns: { Count: number; getItem(i: number): { Name: string; Type: { Name: string } } } } };
    };
    GlobalState: { Default: { WithDatabase(db: unknown): unknown } };
    Symbols: {
      DatabaseSymbol: { $ctor1: new (n: string, m: unknown[]) => unknown };
      TableSymbol: { $ctor7: new (n: string, s: string, d: null) => unknown };
    };
  };
  const t = CATALOG.tables[0] as SchemaCatalog['tables'][0];
  const table = new K.Symbols.TableSymbol.$ctor7(t.name, `(${t.columns.map((c) => `${c.name}:${c.type}`).join(', ')})`, null);
  const globals = K.GlobalState.Default.WithDatabase(new K.Symbols.DatabaseSymbol.$ctor1('db', [table]));
  const cols = K.KustoCode.ParseAndAnalyze(query, globals).ResultType.Columns;
  const out: string[] = [];
  for (let i = 0; i < cols.Count; i++) {
    const c = cols.getItem(i);
    out.push(`${c.Name}:${KUSTO_TYPE[c.Type.Name] ?? c.Type.Name}`);
  }
  return out;
}

/**
 * The engine's columns; a query planned in phases (partition's values) gets a one-row answer of
 * nulls per phase, which is enough to bind it.
 */
function engineColumns(query: string): string[] {
  const answers: PhaseAnswer[] = [];
  for (let i = 0; i < 8; i++) {
    try {
      return bindQuery(query, CATALOG, {}, answers).bound.columns.map((c) => `${c.name}:${c.type}`);
    } catch (err) {
      if (!(err instanceof NeedsAnswer)) throw err;
      answers.push({ values: [[null], [null]], rowCount: 1, truncated: false });
    }
  }
  throw new Error('too many phases');
}

const QUERIES = [
  'T | summarize count(), avg(x), sum(y), dcount(s), percentile(x, 95), percentiles(y, 50, 99.9), countif(x > 1), sumif(x, b), make_list(s), make_set(s), take_any(x), stdev(y), variance(x), min(timestamp), max(ts)',
  'T | summarize arg_max(timestamp, s, x) by host',
  'T | summarize a = arg_max(timestamp, s) by host',
  'T | summarize arg_min(x, *) by host',
  'T | summarize avg(x + 1), sum(toint(y)), count() by bin(timestamp, 1h), tolower(host)',
  'T | project x + 1, tolower(s), d.a.b, d["c"], d[0], bin(x, 5), floor(y, 1), toint(y), 5, "a", x * 2, strlen(s)',
  'T | project strlen(s), tolower(s), toupper(s), tolong(y), todouble(x), tostring(x), tobool(s), todatetime(s), ago(ts), now(), iff(b, 1, 2), case(b, 1, 2), coalesce(x, 1), isnull(x), isempty(s), substring(s, 1), strcat(s, s), extract("a", 0, s), parse_json(s), startofday(timestamp), startofweek(timestamp), startofmonth(timestamp), datetime_part("year", timestamp), format_datetime(timestamp, "yy"), round(y), abs(x), sqrt(y), not(b), -x, ts',
  'T | extend tolower(s)',
  'T | extend z = x / 2, w = y / 2, r = x % 3, q = 7 / 2.0, t = timestamp - timestamp, u = ts * 2, v = ts / ts, dd = timestamp + 1h, st = 1h / 2',
  'T | count',
  'print 1, x = 2, 3',
  'T | summarize by host, s',
  'T | top 3 by x',
  'T | summarize count() by bin(x, 10), bin(y, 0.5)',
  'T | distinct host, s',
  'range v from 1 to 10 step 2',
  'T | parse kind=regex s with "a=" A " b=" B:long',
  'T | project-rename h = host | project-away x',
  'T | union (T | extend z = 1)',
  'T | summarize count() by s | order by count_ | take 1',
  'T | summarize max(x), max(x) by host',
  'T | project x = 1, x1 = 2, x2 = 3 | extend toint(x)',
  'T | summarize count() by bin(timestamp, 1h), bin(timestamp, 1d)',
  'T | project d["a-b"], d.a.b[1]',
  'T | summarize count_ = 1, count()',
  'T | summarize countif(b), make_list(timestamp), take_any(s), percentile(ts, 50), percentile(timestamp, 50)',
  'T | extend x = "a"',
  'T | project-away x | extend x = 1',
  'T | extend x = tostring(x + 1), z = x',
  'T | project y = x, x = y',
  'T | extend x1 = x, x',
  'let f = (a:long, b:long = 2) { a * b }; T | extend f(x), z = f(x, 3)',
  'let g = (R:(x:long), k:long) { R | where x > k | project x, y }; g(T, 1)',
  'let g = (R:(x:long), k:long = 2) { R | where x > k | project s, x }; T | invoke g()',
  'let m = materialize(T | project x, s); m | union m',
  'T | project x, s | as A | union A',
  'set querytrace; T | project x',
  'declare query_parameters(n:long = 2); T | extend n',
  'let upto = (n:long) { range v from 1 to n step 1 }; upto(3)',
  'T | join kind=leftouter (T | project x, s, z = 1) on x',
  'T | mv-expand d',
  'union withsource=Src T, (T | project x)',
  'T | parse s with "a=" a:long * "q=" q',
  'T | parse kind=relaxed s with "a=" a:real "," rest',
  'T | parse-where s with "k=" k',
  'T | serialize rn = row_number(), p = prev(s) | extend c = row_cumsum(x)',
  'T | summarize make_bag(d), make_bag_if(d, b), avgif(y, b) by host',
  'T | project-keep *s, x',
  'T | project-reorder s*, ts asc, d',
  'T | getschema',
  'T | count as n',
  'T | mv-expand d.a, n = d.b to typeof(long), d["c"]',
  'T | mv-expand with_itemindex=ix x = d to typeof(real) limit 3',
  'T | join kind=rightanti (T | project x) on x',
  'T | join kind=leftsemi (T | project x) on x',
  'T | join (T | summarize c = count() by host) on host',
  'T | join kind=fullouter (T | project s, x1 = x) on $left.host == $right.s',
  'T | lookup (T | project s, w = y, x) on s',
  'T | lookup kind=inner (T | project k = s, y) on $left.s == $right.k',
  'print toscalar(T | count)',
  'T | extend toscalar(T | count)',
  'T | extend m = toscalar(T | summarize max(timestamp))',
  'T | top-hitters 3 of host',
  'T | top-hitters 3 of host by x',
  'T | top-nested 2 of host by sum(x), top-nested of bin(timestamp, 1h) by count()',
  'T | top-nested 2 of host with others="o" by c = count()',
  'T | top-nested 2 of n = host by max(y), top-nested 3 of s by c = count() asc',
  'T | project host, x | evaluate narrow()',
  'T | search "x"',
  'search "x"',
  'T | search host:"x*" and not(s:"y")',
  'T | partition by host (take 1)',
  'T | mv-apply d on (take 1)',
  'T | mv-apply e = d on (summarize sum(toint(e)))',
  'T | mv-apply e = d to typeof(long) on (top 2 by e)',
  'T | mv-apply with_itemindex=i e = d on (where i > 0)',
  'T | mv-apply e = d, f = d on (summarize make_list(e))',
  'T | mv-apply d on (extend q = 1)',
  'T | mv-apply e = d on (project e, ee = e)',
  'T | mv-apply e = d on (project x)',
  'T | mv-apply e = d on (summarize c = count() by s)',
  'T | partition by host (summarize c = count(), avg(x))',
  'T | partition by host { $partition | project host }',
];

describe('query result naming agrees with Microsoft’s analyzer', () => {
  before(async function () {
    this.timeout(60_000);
    await warmKustoParser();
  });

  for (const q of QUERIES) {
    it(q, () => {
      assert.deepEqual(engineColumns(q), kustoColumns(q));
    });
  }
});
