/**
 * The documented examples of issue 16's part-2 operators (toscalar, bag_unpack, pivot, narrow,
 * top-nested, top-hitters, search, partition, mv-apply), each reproduced with our own small data
 * and queries of the same shape; the expected answers are written by hand from Kusto's documented
 * semantics. The count of these cases is the coverage measure reported for the issue. Every query
 * runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, run } from './fixture.js';

const rows = (r: { results: Record<string, unknown>[] }) => r.results.map((x) => JSON.stringify(x)).sort();
const expectRows = (r: { results: Record<string, unknown>[] }, expected: Record<string, unknown>[]) =>
  assert.deepEqual(rows(r), expected.map((x) => JSON.stringify(x)).sort());

/** A small sales table: region, seller, amount, day. */
const SALES = `datatable(Region:string, Seller:string, Amount:long, Day:long)[
  "north", "ann", 10, 1, "north", "ann", 5, 2, "north", "bob", 7, 1, "north", "cid", 1, 3,
  "south", "dan", 20, 1, "south", "eve", 3, 2, "south", "eve", 4, 3,
  "west", "fay", 2, 1, "west", "gus", 1, 2,
]`;

describe('documented examples of the part-2 operators, with our own data', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  describe('toscalar', () => {
    it('start, end and step of a range as scalar constants', async () => {
      const r = await run(
        'let Start = toscalar(print x = 2); let End = toscalar(range x from 1 to 7 step 1 | count); let Step = toscalar(3); range z from Start to End step Step | extend s = Start, e = End, st = Step',
        { ordered: true },
      );
      assert.deepEqual(r.results, [
        { z: 2, s: 2, e: 7, st: 3 },
        { z: 5, s: 2, e: 7, st: 3 },
      ]);
    });

    it('a per-row toscalar inside a function is refused (row-context scope)', async () => {
      await assert.rejects(
        run(
          'let A = datatable(k:long)[1, 2]; let B = datatable(k:long, v:long)[1, 10, 2, 20]; let f = (k_:long) { toscalar(B | where k == k_ | project v) }; A | extend v = f(k)',
        ),
        /can't use 'k_' as it is defined outside its row-context scope/,
      );
    });

    it('the join the documentation suggests instead', async () => {
      const r = await run(
        'let A = datatable(k:long)[1, 2, 3]; let B = datatable(k:long, v:long)[1, 10, 3, 30]; A | join (B) on k | project k, v',
      );
      expectRows(r, [
        { k: 1, v: 10 },
        { k: 3, v: 30 },
      ]);
    });

    it('fixes a value that changes on each evaluation: once for every row', async () => {
      const r = await run(
        'let g1 = toscalar(new_guid()); let g2 = new_guid(); range x from 1 to 3 step 1 | extend a = g1, b = g2',
        {
          columnsOnly: true,
        },
      );
      assert.equal(new Set(r.results.map((x) => x.a)).size, 1);
      assert.equal(new Set(r.results.map((x) => x.b)).size, 3);
    });

    it('a total used to filter groups by their share', async () => {
      const r = await run(
        `let total = toscalar(${SALES} | summarize sum(Amount)); ${SALES} | summarize s = sum(Amount) by Region | where s * 100 / total > 20 | project Region`,
      );
      // total 53: north 23 (43 %), south 27 (50 %), west 3 (5 %)
      expectRows(r, [{ Region: 'north' }, { Region: 'south' }]);
    });
  });

  describe('bag_unpack', () => {
    const PEOPLE =
      'datatable(d:dynamic)[dynamic({"Name": "Ada", "Age": 36}), dynamic({"Name": "Bo", "Age": 5}), dynamic({"Name": "Cy", "Age": 71})]';

    it('expands a bag into columns', async () => {
      const r = await run(`${PEOPLE} | evaluate bag_unpack(d)`);
      assert.deepEqual(r.header, ['Age', 'Name']);
      expectRows(r, [
        { Age: 36, Name: 'Ada' },
        { Age: 5, Name: 'Bo' },
        { Age: 71, Name: 'Cy' },
      ]);
    });

    it('with OutputColumnPrefix', async () => {
      const r = await run(`${PEOPLE} | evaluate bag_unpack(d, 'P_')`);
      assert.deepEqual(r.header, ['P_Age', 'P_Name']);
    });

    it('columnsConflict: replace_source and keep_source', async () => {
      const q = 'datatable(Name:string, d:dynamic)["old", dynamic({"Name": "new", "Age": 1})]';
      expectRows(await run(`${q} | evaluate bag_unpack(d, columnsConflict='replace_source')`), [{ Age: 1, Name: 'new' }]);
      const kept = await run(`${q} | evaluate bag_unpack(d, columnsConflict='keep_source')`);
      assert.deepEqual(kept.header, ['Age', 'Name']);
      expectRows(kept, [{ Age: 1, Name: 'old' }]);
      await assert.rejects(run(`${q} | evaluate bag_unpack(d)`), /columnsConflict/);
    });

    it('ignoredProperties', async () => {
      const q = 'datatable(d:dynamic)[dynamic({"Name": "Ada", "Family": "x", "Address": "y", "Age": 3})]';
      const r = await run(`${q} | evaluate bag_unpack(d, ignoredProperties=dynamic(["Address", "Family"]))`);
      assert.deepEqual(r.header, ['Age', 'Name']);
    });

    it('with an output schema, input columns kept by *', async () => {
      const q = 'datatable(k:long, d:dynamic)[1, dynamic({"Name": "Ada", "Age": 36, "Other": true})]';
      const r = await run(`${q} | evaluate bag_unpack(d) : (*, Name:string, Age:long)`);
      assert.deepEqual(r.header, ['k', 'Name', 'Age']);
      assert.deepEqual(r.results, [{ k: 1, Name: 'Ada', Age: 36 }]);
    });
  });

  describe('pivot', () => {
    it('counts per value of the pivot column', async () => {
      const r = await run(`${SALES} | project Region, Day | evaluate pivot(Region)`);
      assert.deepEqual(r.header, ['Day', 'north', 'south', 'west']);
      expectRows(r, [
        { Day: 1, north: 2, south: 1, west: 1 },
        { Day: 2, north: 1, south: 1, west: 1 },
        { Day: 3, north: 1, south: 1, west: 0 },
      ]);
    });

    it('with an aggregate', async () => {
      const r = await run(`${SALES} | project Region, Day, Amount | evaluate pivot(Region, max(Amount))`);
      expectRows(r, [
        { Day: 1, north: 10, south: 20, west: 2 },
        { Day: 2, north: 5, south: 3, west: 1 },
        { Day: 3, north: 1, south: 4, west: null },
      ]);
    });

    it('with sum: a cell without rows is 0', async () => {
      const r = await run(`${SALES} | where Amount > 3 | project Region, Seller, Amount | evaluate pivot(Region, sum(Amount))`);
      assert.deepEqual(r.header, ['Seller', 'north', 'south']);
      expectRows(r, [
        { Seller: 'ann', north: 15, south: 0 },
        { Seller: 'bob', north: 7, south: 0 },
        { Seller: 'dan', north: 0, south: 20 },
        { Seller: 'eve', north: 0, south: 4 },
      ]);
    });

    it('with sum and several grouping columns', async () => {
      const r = await run(`${SALES} | where Amount > 3 | evaluate pivot(Region, sum(Amount), Seller, Day)`);
      assert.deepEqual(r.header, ['Seller', 'Day', 'north', 'south']);
      expectRows(r, [
        { Seller: 'ann', Day: 1, north: 10, south: 0 },
        { Seller: 'ann', Day: 2, north: 5, south: 0 },
        { Seller: 'bob', Day: 1, north: 7, south: 0 },
        { Seller: 'dan', Day: 1, north: 0, south: 20 },
        { Seller: 'eve', Day: 3, north: 0, south: 4 },
      ]);
    });

    it('with an output schema naming the value columns', async () => {
      const r = await run(`${SALES} | project Region, Day | evaluate pivot(Region) : (Day:long, north:long, west:long)`);
      assert.deepEqual(r.header, ['Day', 'north', 'west']);
      expectRows(r, [
        { Day: 1, north: 2, west: 1 },
        { Day: 2, north: 1, west: 1 },
        { Day: 3, north: 1, west: 0 },
      ]);
    });

    it('with an aggregate and the grouping columns named', async () => {
      const r = await run(`${SALES} | evaluate pivot(Day, dcount(Seller), Region)`);
      assert.deepEqual(r.header, ['Region', '1', '2', '3']);
      expectRows(r, [
        { Region: 'north', '1': 2, '2': 1, '3': 1 },
        { Region: 'south', '1': 1, '2': 1, '3': 1 },
        { Region: 'west', '1': 1, '2': 1, '3': 0 },
      ]);
    });
  });

  describe('narrow', () => {
    it('a wide table as Row, Column, Value', async () => {
      const r = await run('datatable(a:long, b:real, c:string)[1, 0.5, "x"] | evaluate narrow()', { ordered: true });
      assert.deepEqual(r.results, [
        { Row: 0, Column: 'a', Value: '1' },
        { Row: 0, Column: 'b', Value: '0.5' },
        { Row: 0, Column: 'c', Value: 'x' },
      ]);
    });
  });

  describe('top-nested', () => {
    it('three levels', async () => {
      const r = await run(
        `${SALES} | top-nested 2 of Region by sum(Amount), top-nested 1 of Seller by sum(Amount), top-nested 1 of Day by max(Amount)`,
      );
      assert.deepEqual(r.header, ['Region', 'aggregated_Region', 'Seller', 'aggregated_Seller', 'Day', 'aggregated_Day']);
      expectRows(r, [
        { Region: 'south', aggregated_Region: 27, Seller: 'dan', aggregated_Seller: 20, Day: 1, aggregated_Day: 20 },
        { Region: 'north', aggregated_Region: 23, Seller: 'ann', aggregated_Seller: 15, Day: 1, aggregated_Day: 10 },
      ]);
    });

    it('with others at each level', async () => {
      const r = await run(
        `${SALES} | top-nested 1 of Region with others = "other regions" by sum(Amount), top-nested 1 of Seller with others = "others" by sum(Amount)`,
      );
      expectRows(r, [
        { Region: 'south', aggregated_Region: 27, Seller: 'dan', aggregated_Seller: 20 },
        { Region: 'south', aggregated_Region: 27, Seller: 'others', aggregated_Seller: 7 },
        { Region: 'other regions', aggregated_Region: 26, Seller: '', aggregated_Seller: null },
      ]);
    });

    it('every value of a level, and extra columns through max(1)', async () => {
      const r = await run(
        `${SALES} | top-nested of Region by Ignore0 = max(1), top-nested 1 of Day by Ignore1 = max(Day), top-nested of Seller by Ignore2 = max(1) | project-away Ignore*`,
      );
      expectRows(r, [
        { Region: 'north', Day: 3, Seller: 'cid' },
        { Region: 'south', Day: 3, Seller: 'eve' },
        { Region: 'west', Day: 2, Seller: 'gus' },
      ]);
    });

    it('ascending', async () => {
      const r = await run(`${SALES} | top-nested 1 of Region by sum(Amount) asc`);
      assert.deepEqual(r.results, [{ Region: 'west', aggregated_Region: 3 }]);
    });
  });

  describe('top-hitters', () => {
    it('by count', async () => {
      const r = await run(`${SALES} | top-hitters 2 of Region`, { ordered: true });
      assert.deepEqual(r.results, [
        { Region: 'north', approximate_count_Region: 4 },
        { Region: 'south', approximate_count_Region: 3 },
      ]);
    });

    it('by a weight', async () => {
      const r = await run(`${SALES} | top-hitters 1 of Seller by Amount`, { ordered: true });
      assert.deepEqual(r.results, [{ Seller: 'dan', approximate_sum_Amount: 20 }]);
    });
  });

  describe('search', () => {
    const NOTES =
      'datatable(Id:long, Note:string, Source:string)[1, "Green lights", "Trained Spotter", 2, "deep green sea", "Public", 3, "Greenland trip", "Public", 4, "nothing", "Law"]';

    it('a term in any column, case-insensitive', async () => {
      expectRows(await run(`${NOTES} | search "green" | project Id`), [{ Id: 1 }, { Id: 2 }]);
    });

    it('kind=case_sensitive', async () => {
      expectRows(await run(`${NOTES} | search kind=case_sensitive "Green" | project Id`), [{ Id: 1 }]);
    });

    it('and, or, not and Column:"term"', async () => {
      expectRows(await run(`${NOTES} | search "green" and ("deep" or "lights") | project Id`), [{ Id: 1 }, { Id: 2 }]);
      expectRows(await run(`${NOTES} | search "green" and not(Source:"trained") | project Id`), [{ Id: 2 }]);
    });

    it('prefix, suffix, substring and pattern terms', async () => {
      expectRows(await run(`${NOTES} | search "green*" | project Id`), [{ Id: 1 }, { Id: 2 }, { Id: 3 }]);
      expectRows(await run(`${NOTES} | search "*land" | project Id`), [{ Id: 3 }]);
      expectRows(await run(`${NOTES} | search "*ree*" | project Id`), [{ Id: 1 }, { Id: 2 }, { Id: 3 }]);
      expectRows(await run(`${NOTES} | search "no*ng" | project Id`), [{ Id: 4 }]);
      expectRows(await run(`${NOTES} | search kind=default "GREEN" | project Id`), [{ Id: 1 }, { Id: 2 }]);
    });

    it('a column comparison, an exact match, a regex, or with a range', async () => {
      expectRows(await run(`${NOTES} | search Id > 2 and Source == "Public" | project Id`), [{ Id: 3 }]);
      expectRows(await run(`${NOTES} | search Source == "Public" | project Id`), [{ Id: 2 }, { Id: 3 }]);
      expectRows(await run(`${NOTES} | search Note matches regex "^[a-z]" | project Id`), [{ Id: 2 }, { Id: 4 }]);
      expectRows(await run(`${NOTES} | search "lights" or (Id > 1 and Id < 3) | project Id`), [{ Id: 1 }, { Id: 2 }]);
    });

    it('search * keeps every row; a pattern term is bounded by word boundaries', async () => {
      expectRows(await run(`${NOTES} | search * | project Id`), [{ Id: 1 }, { Id: 2 }, { Id: 3 }, { Id: 4 }]);
      const lab = 'datatable(Host:string)["Lab1 PC", "xLab PCs", "my Lab-PC", "lab pc"]';
      expectRows(await run(`${lab} | search "Lab*PC" | project Host`), [
        { Host: 'Lab1 PC' },
        { Host: 'my Lab-PC' },
        { Host: 'lab pc' },
      ]);
      expectRows(await run(`${lab} | search kind=case_sensitive "Lab*PC" | project Host`), [
        { Host: 'Lab1 PC' },
        { Host: 'my Lab-PC' },
      ]);
    });

    it('two columns, either term; a condition on a column only one table has', async () => {
      const people = 'datatable(First:string, Last:string)["Ada", "Hughes", "Bo", "Aaron", "Aaron", "Stone"]';
      expectRows(await run(`${people} | search First:"Aaron" or Last:"Hughes"`), [
        { $table: '', First: 'Ada', Last: 'Hughes' },
        { $table: '', First: 'Aaron', Last: 'Stone' },
      ]);
      const r = await run('search in (Logs, logship.agent.events) "db" and value > 20 | summarize n = count() by $table');
      const expected = [21, 23, 25, 27, 29].length; // db-9 rows are the odd hours; value is the hour
      assert.deepEqual(r.results, [{ $table: 'logship.agent.events', n: expected }]);
    });

    it('over several tables with $table', async () => {
      const r = await run('search in (Logs, logship.agent.events) "db" | summarize n = count() by $table');
      assert.ok(r.results.some((x) => x.$table === 'logship.agent.events' && x.n === 15));
    });
  });

  describe('partition', () => {
    it('top per partition (native strategy)', async () => {
      const r = await run(
        `${SALES} | partition hint.strategy=native by Region (top 1 by Amount | project Region, Seller, Amount)`,
      );
      expectRows(r, [
        { Region: 'north', Seller: 'ann', Amount: 10 },
        { Region: 'south', Seller: 'dan', Amount: 20 },
        { Region: 'west', Seller: 'fay', Amount: 2 },
      ]);
    });

    it('the legacy form with its own source, reading the key column as the value', async () => {
      const r = await run(
        `range x from 1 to 2 step 1 | partition hint.strategy=legacy by x { ${SALES} | where Day == x | count }`,
      );
      expectRows(r, [{ Count: 4 }, { Count: 3 }]);
    });

    it('a partition named with as and read by toscalar', async () => {
      const r = await run(
        `${SALES} | partition by Region (as P | extend pct = Amount * 100.0 / toscalar(P | summarize sum(Amount)) | where Seller == "gus" or Seller == "dan" | project Seller, pct)`,
      );
      expectRows(r, [
        { Seller: 'dan', pct: (20 * 100) / 27 },
        { Seller: 'gus', pct: (1 * 100) / 3 },
      ]);
    });

    it('the legacy form over $partition', async () => {
      const r = await run(`${SALES} | partition by Region { $partition | summarize n = count(), total = sum(Amount) }`);
      expectRows(r, [
        { n: 4, total: 23 },
        { n: 3, total: 27 },
        { n: 2, total: 3 },
      ]);
    });
  });

  describe('mv-apply', () => {
    const LISTS = 'datatable(Id:long, l:dynamic)[1, dynamic([3, 9, 4]), 2, dynamic([8, 1]), 3, dynamic([])]';

    it('the largest element of each array', async () => {
      const r = await run(`${LISTS} | mv-apply element = l to typeof(long) on (top 1 by element)`);
      expectRows(r, [
        { Id: 1, l: [3, 9, 4], element: 9 },
        { Id: 2, l: [8, 1], element: 8 },
      ]);
    });

    it('the sum of the top two elements', async () => {
      const r = await run(`${LISTS} | mv-apply l to typeof(long) on (top 2 by l | summarize SumOfTop2 = sum(l))`);
      assert.deepEqual(r.header, ['Id', 'SumOfTop2']);
      expectRows(r, [
        { Id: 1, SumOfTop2: 13 },
        { Id: 2, SumOfTop2: 9 },
        { Id: 3, SumOfTop2: null },
      ]);
    });

    it('with an item index', async () => {
      const r = await run(`${LISTS} | mv-apply with_itemindex = i e = l to typeof(long) on (where i == 1 | project second = e)`);
      expectRows(r, [
        { Id: 1, l: [3, 9, 4], second: 9 },
        { Id: 2, l: [8, 1], second: 1 },
      ]);
    });

    it('the expansion itself (take more than there are)', async () => {
      const r = await run(
        'datatable(k:long, a:dynamic)[0, dynamic([4]), 1, dynamic([2, 9, 4])] | mv-apply b = a to typeof(long) on (take 50)',
      );
      assert.deepEqual(r.header, ['k', 'a', 'b']);
      expectRows(r, [
        { k: 0, a: [4], b: 4 },
        { k: 1, a: [2, 9, 4], b: 2 },
        { k: 1, a: [2, 9, 4], b: 9 },
        { k: 1, a: [2, 9, 4], b: 4 },
      ]);
    });

    it('two arrays in parallel: the top two by one, listed', async () => {
      const r = await run(
        'datatable(k:long, n:dynamic, v:dynamic)[1, dynamic(["p", "q", "r"]), dynamic([5, 9, 1]), 2, dynamic(["s", "t"]), dynamic([3, 8])] | mv-apply N = n, V = v to typeof(long) on (top 2 by V | summarize N = make_list(N), V = make_list(V))',
        { unorderedLists: true },
      );
      assert.deepEqual(r.header, ['k', 'n', 'v', 'N', 'V']);
      const sorted = r.results.map((x) => ({ ...x, N: [...(x.N as string[])].sort(), V: [...(x.V as number[])].sort() }));
      expectRows({ results: sorted }, [
        { k: 1, n: ['p', 'q', 'r'], v: [5, 9, 1], N: ['p', 'q'], V: [5, 9] },
        { k: 2, n: ['s', 't'], v: [3, 8], N: ['s', 't'], V: [3, 8] },
      ]);
    });

    it('two arrays of different lengths joined element by element', async () => {
      const r = await run(
        'datatable(k:long, a:dynamic, b:dynamic)[1, dynamic(["a", "b"]), dynamic(["x", "y", "z"])] | mv-apply A = a, B = b on (extend o = strcat(A, "-", B) | summarize o = make_list(o))',
        { unorderedLists: true },
      );
      assert.deepEqual([...(r.results[0] as { o: string[] }).o].sort(), ['-z', 'a-x', 'b-y']);
    });

    it("over a property bag, reading the row's own column inside", async () => {
      const r = await run(
        'datatable(k:string, P:dynamic)["a", dynamic({"S":"555-1","T":"777","C":4}), "b", dynamic({"S":"555-3","T":"555-9"})] | mv-apply e = P on (mv-expand kind = array P | where tostring(P[1]) !startswith "555" | summarize drop = make_set(P[0])) | project k, drop',
        { unorderedLists: true },
      );
      expectRows({ results: r.results.map((x) => ({ ...x, drop: [...(x.drop as string[])].sort() })) }, [
        { k: 'a', drop: ['C', 'T'] },
        { k: 'b', drop: [] },
      ]);
    });

    it('a list per row, filtered', async () => {
      const r = await run(`${LISTS} | mv-apply e = l to typeof(long) on (where e > 3 | summarize big = make_list(e))`);
      expectRows(r, [
        { Id: 1, l: [3, 9, 4], big: [9, 4] },
        { Id: 2, l: [8, 1], big: [8] },
        { Id: 3, l: [], big: [] },
      ]);
    });
  });
});
