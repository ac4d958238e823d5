/**
 * Each aggregate's form that takes a predicate (count → countif, …): where an operator rewrites an
 * aggregate to count only some rows (pivot's cells, mv-apply's per-row groups) it uses this form.
 * Only the forms the registry declares (registry/aggregate-functions.ts) are listed.
 */
export const IF_FORM: Readonly<Record<string, string>> = {
  count: 'countif',
  sum: 'sumif',
  avg: 'avgif',
  min: 'minif',
  max: 'maxif',
  dcount: 'dcountif',
  take_any: 'take_anyif',
  stdev: 'stdevif',
  variance: 'varianceif',
  make_list: 'make_list_if',
  make_set: 'make_set_if',
  make_bag: 'make_bag_if',
};

/** The predicate forms themselves. */
export const IF_FORMS: ReadonlySet<string> = new Set(Object.values(IF_FORM));
