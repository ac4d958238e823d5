/**
 * Kusto's `int` (32-bit) result type, reported for the functions Kusto types int (decision 0048).
 * The engine folds int into long (common/src/query/value-types.ts): the values are BIGINTs and every
 * operator treats them as longs. Microsoft's analyzer types the calendar fields int — getyear,
 * getmonth, monthofyear, dayofmonth, dayofyear, hourofday, week_of_year, datetime_part — and Kusto's
 * `getschema` and answer column types show `int` / `Int32` for them. So a long Bound made by one of
 * those functions, and a column made from it unchanged, carries an `int32` mark that only changes the
 * reported type. Any computation on it (arithmetic, sum, …) answers an unmarked long; Kusto keeps int
 * for some of those (int + int), which is not modelled: the value is the same, its type name says long.
 */

/** The `int32` mark of a Bound or Column, to copy onto the column made from it. */
export const int32Flag = (x: { int32?: boolean | undefined }): { int32?: true } => (x.int32 ? { int32: true } : {});

/** The type name an answer's column shows for a long marked int32 (Kusto's .NET name). */
export const INT32_RESULT_TYPE = 'Int32';

/** getschema's DataType and ColumnType of a long marked int32. */
export const INT32_SCHEMA = { dataType: 'System.Int32', columnType: 'int' } as const;
