/**
 * Names Kusto knows that the engine refuses on purpose, each with the reason its answer would not
 * be Kusto's. Any other unknown name is refused with the plain "not supported"; these say why, so
 * a user can tell "not built yet" from "cannot be answered exactly" (docs/query.md's refused list,
 * decisions 0019, 0023, 0030, 0031 and 0044).
 */

import type { StrataError } from '@strata/common';
import { queryError, type Span } from './errors.js';

/**
 * SqlDecimal has no remainder operator, so nothing fixes the precision and scale of a decimal `%`
 * (decision 0031); any choice would be a guess at Kusto's digits.
 */
export const DECIMAL_MODULO_REASON =
  "Kusto's decimal is SqlDecimal, which has no remainder operator to fix the precision and scale of the answer; convert to real (todouble) or long first.";

/** The one documented combined value matches none of ~420 combining steps tried (decisions 0023, 0030). */
const HASH_COMBINE_REASON =
  "Kusto's combining step is not documented and its documented example matches none of the common ones; a guess would give other hashes silently.";

/**
 * Kusto documents what these compute but not how exactly enough to give its numbers, and no
 * documented or demonstrated input → output pair exists to check a reading against (decisions 0019
 * and 0044: searched again, the documentation's examples are charts or use rand()).
 */
const SERIES_REASON = (what: string) =>
  `Kusto's documentation does not specify ${what}, and shows no numeric example to check one against; a guess would answer other numbers than Kusto.`;
const OUTLIERS_REASON = SERIES_REASON("the percentile method behind its Tukey fences or how a point's score is scaled");
const DECOMPOSE_REASON = SERIES_REASON('its robust STL variant (the tweaks Kusto says it adds to STL)');
const PERIODS_REASON = SERIES_REASON('the periodogram and scoring behind the periods and their scores');
const FIT_2LINES_REASON = SERIES_REASON('the split search (which split indexes are tried, the total r² it maximises, ties)');

const REASONS: Readonly<Record<string, string>> = {
  hash_combine: HASH_COMBINE_REASON,
  hash_many: HASH_COMBINE_REASON,
  series_outliers: OUTLIERS_REASON,
  series_decompose: DECOMPOSE_REASON,
  series_decompose_anomalies: DECOMPOSE_REASON,
  series_decompose_forecast: DECOMPOSE_REASON,
  series_periods_detect: PERIODS_REASON,
  series_periods_validate: PERIODS_REASON,
  series_fit_2lines: FIT_2LINES_REASON,
  series_fit_2lines_dynamic: FIT_2LINES_REASON,
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

/** The refusal of a type name a declaration writes (`datatable`, `parse`, parameters, `typeof`). */
export function refusedType(typeName: string, span: Span): StrataError {
  return queryError(`The type '${typeName}' is not supported.`, span);
}
