import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, run } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

describe('datetimes with 100 ns ticks', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('smoke', async () => {
    const r =
      await one(`print a = endofday(datetime(2017-01-01 10:10:17)), b = endofday(datetime(2017-01-01 10:10:17)) - startofday(datetime(2017-01-01 10:10:17)),
      c = datetime(2017-01-01 00:00:00.0000001), d = datetime_add('nanosecond', 100, datetime(2017-01-01)), e = tostring(endofmonth(datetime(2016-02-10))),
      f = datetime_part('nanosecond', datetime(2017-01-01 00:00:00.1234567)), g = format_datetime(endofyear(datetime(2020-05-05)), 'yyyy-MM-dd HH:mm:ss.fffffff'),
      h = hash(datetime(2017-01-01 00:00:00.0000001)), i = datetime_diff('nanosecond', endofday(datetime(2017-01-01)), datetime(2017-01-01))`);
    console.log(r);
    const w = await run(
      `Logs | where timestamp <= endofday(datetime(2024-03-09)) | extend e = endofday(timestamp) | summarize count() by e | sort by e asc`,
    );
    console.log(w.results);
    assert.ok(r);
  });
});
