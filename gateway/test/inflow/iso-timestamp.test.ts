import assert from 'node:assert/strict';
import { mightBeIsoTimestamp, parseIsoTimestampMicros } from '../../src/inflow/iso-timestamp.js';

describe('inflow ISO 8601 timestamps', () => {
  const base = Date.UTC(2024, 2, 5, 6, 7, 8) * 1000;

  it('accepts Z, offsets (as sent by .NET agents), no zone (UTC), and 0–9 fraction digits', () => {
    assert.equal(parseIsoTimestampMicros('2024-03-05T06:07:08Z'), base);
    assert.equal(parseIsoTimestampMicros('2024-03-05T06:07:08.123Z'), base + 123_000);
    assert.equal(parseIsoTimestampMicros('2024-03-05T06:07:08.123456789Z'), base + 123_456, 'nanoseconds truncated');
    assert.equal(parseIsoTimestampMicros('2024-03-05T06:07:08.1234567+00:00'), base + 123_456);
    assert.equal(parseIsoTimestampMicros('2024-03-05T08:07:08+02:00'), base);
    assert.equal(parseIsoTimestampMicros('2024-03-05T01:37:08-0430'), base);
    assert.equal(parseIsoTimestampMicros('2024-03-05T07:07:08+01'), base);
    assert.equal(parseIsoTimestampMicros('2024-03-05 06:07:08'), base);
    assert.equal(parseIsoTimestampMicros('2024-03-05t06:07:08,5z'), base + 500_000);
    assert.equal(parseIsoTimestampMicros('0001-01-01T00:00:00Z'), -62135596800000000);
    assert.equal(parseIsoTimestampMicros('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29) * 1000);
  });

  it('refuses what is not a date and time', () => {
    for (const bad of [
      '2024-03-05',
      '2024-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-03-05T24:00:00Z',
      '2024-03-05T06:07:60Z',
      '2024-03-05T06:07:08.Z',
      '2024-03-05T06:07:08+25:00',
      '0000-01-01T00:00:00Z',
      ' 2024-03-05T06:07:08Z',
      '1709618828',
      'yesterday',
    ])
      assert.equal(parseIsoTimestampMicros(bad), undefined, bad);
  });

  it('pre-checks cheaply without false negatives', () => {
    assert.equal(mightBeIsoTimestamp('2024-03-05T06:07:08Z'), true);
    assert.equal(mightBeIsoTimestamp('2024-03-05T06:07:08.123456789+00:00'), true);
    assert.equal(mightBeIsoTimestamp('hello world, how are you'), false);
  });
});
