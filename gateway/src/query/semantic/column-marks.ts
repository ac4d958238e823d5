import { ticksFlag } from './datetime-ticks.js';
import { int32Flag } from './int-columns.js';

/**
 * The marks a Column or Bound made from another value copies from it: `ticks` (a datetime carried
 * as 100 ns ticks, decision 0036) and `int32` (Kusto's int, decision 0048). One place, so that a
 * column made unchanged from a value keeps every mark the value has; a new mark is added here, not
 * at each of the binder's column makers. Where only one mark carries over (a sort key, a computed
 * value that is no longer int), the binder copies that one with ticksFlag or int32Flag.
 */
export const columnMarks = (x: { ticks?: boolean | undefined; int32?: boolean | undefined }): { ticks?: true; int32?: true } => ({
  ...ticksFlag(x),
  ...int32Flag(x),
});
