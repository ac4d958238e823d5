/**
 * Names Kusto knows that the engine refuses on purpose, each with the reason its answer would not
 * be Kusto's. Any other unknown name is refused with the plain "not supported"; these say why, so
 * a user can tell "not built yet" from "cannot be answered exactly" (docs/query.md's refused list,
 * decisions 0023 and 0030).
 */

import type { StrataError } from '@strata/common';
import { queryError, type Span } from './errors.js';

/**
 * Kusto's decimal is .NET's SqlDecimal (its type table names System.Data.SqlTypes.SqlDecimal): up
 * to 38 digits, and every value carries its own precision and scale, which decide the precision and
 * scale of each sum, product and quotient (1/3 is 0.333333). Kusto documents neither the precision
 * a literal or a conversion gets nor how it prints the scale, so an answer could differ in its
 * digits or in its text (decision 0030).
 */
const DECIMAL_REASON =
  "Kusto's decimal (SqlDecimal: 38 digits, each value with its own precision and scale, which decide the scale of every result) is not reproduced; reading it as real would answer other digits. Use real (todouble) instead.";

/** The one documented combined value matches none of ~420 combining steps tried (decisions 0023, 0030). */
const HASH_COMBINE_REASON =
  "Kusto's combining step is not documented and its documented example matches none of the common ones; a guess would give other hashes silently.";

/** Datetimes keep microseconds here; Kusto's end of a period is its last 100 ns tick (decision 0023). */
const END_OF_REASON =
  "Kusto answers the period's last 100-nanosecond tick (…:59.9999999), which datetimes here cannot hold (they keep microseconds); compare with < startof…(…, 1) instead.";

const REASONS: Readonly<Record<string, string>> = {
  endofday: END_OF_REASON,
  endofweek: END_OF_REASON,
  endofmonth: END_OF_REASON,
  endofyear: END_OF_REASON,
  todecimal: DECIMAL_REASON,
  hash_combine: HASH_COMBINE_REASON,
  hash_many: HASH_COMBINE_REASON,
};

/** The refusal of a function call, with its reason where the name is refused on purpose. */
export function refusedFunction(name: string, span: Span): StrataError {
  const key = name.toLowerCase();
  const reason = Object.hasOwn(REASONS, key) ? REASONS[key] : undefined;
  return queryError(
    reason ? `The function '${name}' is not supported: ${reason}` : `The function '${name}' is not supported.`,
    span,
  );
}

/** The refusal of the decimal type where a query writes it: a literal `decimal(…)` or a type name. */
export function refusedDecimal(what: string, span: Span): StrataError {
  return queryError(`${what} is not supported: ${DECIMAL_REASON}`, span);
}

/** The refusal of a type name a declaration writes (`datatable`, `parse`, parameters, `typeof`). */
export function refusedType(typeName: string, span: Span): StrataError {
  if (typeName.toLowerCase() === 'decimal') return refusedDecimal("The type 'decimal'", span);
  return queryError(`The type '${typeName}' is not supported.`, span);
}
