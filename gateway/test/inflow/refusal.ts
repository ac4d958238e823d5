import assert from 'node:assert/strict';
import { StrataError } from '@strata/common';

/** The StrataError `fn` throws (fails the test if it returns or throws something else). */
export function refusal(fn: () => unknown): StrataError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StrataError);
    return err;
  }
  assert.fail('expected a refusal');
}
