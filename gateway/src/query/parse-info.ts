/**
 * The answer to `POST /search/{accountId}/kusto/parse`: whether the query would run (the same
 * parse and bind as execution, stopping at the first error), its result columns, and completions
 * at the cursor from Microsoft's language service, limited to what this engine supports.
 */
import { isStrataError } from '@strata/common';
import { asQueryError, bindQuery, type PlanOptions } from './engine.js';
import { resultColumns } from './exec/result-format.js';
import { NeedsAnswer } from './semantic/phases.js';
import { allFunctions } from './semantic/registry/registry.js';
import { DEFAULT_PARSE_LIMITS, type KustoTable, kustoCompletions } from './syntax/parse-kql.js';
import { prescan } from './syntax/prescan.js';
import { KQL_TYPE_NAME, type SchemaCatalog } from './types.js';

export interface ApiErrorModel {
  message: string;
  stackTrace: null;
  errors: { message: string | null; tokens: { start: number; end: number }[] }[];
}

export interface AutoCompletion {
  token: { start: number; length: number };
  value: string;
  completionType: string;
  description: string;
}

export interface ParseResponse {
  parseSuccess: boolean;
  tokenInfo: never[];
  suggestions: { autoCompletions: AutoCompletion[] } | null;
  error: ApiErrorModel | null;
  header: string[];
  columns: { name: string; type: string }[];
}

function toApiError(err: unknown): ApiErrorModel {
  const e = isStrataError(err) ? err : asQueryError(err);
  return {
    message: e.message,
    stackTrace: null,
    errors:
      e.details.length > 0
        ? e.details.map((d) => ({ message: d.message, tokens: d.tokens }))
        : [{ message: e.message, tokens: [] }],
  };
}

const SUPPORTED_OPERATORS = new Set([
  'where',
  'filter',
  'project',
  'project-away',
  'project-rename',
  'extend',
  'summarize',
  'count',
  'distinct',
  'take',
  'limit',
  'sort',
  'order',
  'top',
  'union',
  'parse',
  'render',
  'datatable',
  'range',
  'print',
  'let',
  'join',
  'lookup',
  'mv-expand',
  'parse-where',
  'serialize',
  'project-keep',
  'project-reorder',
  'getschema',
  'sample',
  'sample-distinct',
  'as',
  'invoke',
  'set',
  'declare',
  'toscalar',
  'mv-apply',
  'evaluate',
  'top-nested',
  'top-hitters',
  'search',
  'partition',
]);

/** Functions and aggregates completions may offer: exactly the registry's. */
const SUPPORTED_FUNCTIONS = new Set(allFunctions().map((f) => f.name));

function schemaName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `['${name.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}']`;
}

/**
 * Kusto reads `app.requests` as database `app`, table `requests`: dotted table names do not
 * resolve in its analyzer. For completions each dotted name gets a same-length alias with `_`
 * for `.` (so positions stay true), the text is rewritten to the aliases, and aliases in the
 * completions are mapped back.
 */
interface Aliases {
  /** Alias → real table name. */
  toReal: Map<string, string>;
  /** Real dotted name → alias, longest first. */
  toAlias: [string, string][];
}

function aliasesFor(catalog: SchemaCatalog): Aliases {
  const names = new Set(catalog.tables.map((t) => t.name));
  const toReal = new Map<string, string>();
  for (const name of names) {
    if (!name.includes('.')) continue;
    const alias = name.replace(/[^A-Za-z0-9_$]/g, '_');
    if (!names.has(alias) && !toReal.has(alias)) toReal.set(alias, name);
  }
  const toAlias = [...toReal].map(([a, r]) => [r, a] as [string, string]).sort((x, y) => y[0].length - x[0].length);
  return { toReal, toAlias };
}

/** The catalog as Kusto table declarations, dotted names under their aliases. */
function kustoTables(catalog: SchemaCatalog, aliases: Aliases): KustoTable[] {
  const aliasOf = new Map(aliases.toAlias);
  return catalog.tables.map((t) => ({
    name: aliasOf.get(t.name) ?? t.name,
    schema: `(${t.columns.map((c) => `${schemaName(c.name)}:${KQL_TYPE_NAME[c.type]}`).join(', ')})`,
  }));
}

/** The text with dotted table names replaced by their aliases (same length). */
function aliasText(text: string, aliases: Aliases): string {
  let out = text;
  for (const [real, alias] of aliases.toAlias) {
    let at = out.indexOf(real);
    while (at >= 0) {
      const before = at === 0 ? '' : (out[at - 1] as string);
      const after = out[at + real.length] ?? '';
      if (!/[\w.$'"\]]/.test(before) && !/[\w.]/.test(after)) out = out.slice(0, at) + alias + out.slice(at + real.length);
      at = out.indexOf(real, at + 1);
    }
  }
  return out;
}

function completions(text: string, catalog: SchemaCatalog, cursor: number): AutoCompletion[] {
  const position = Math.max(0, Math.min(cursor, text.length));
  const aliases = aliasesFor(catalog);
  const info = kustoCompletions(aliasText(text, aliases), kustoTables(catalog, aliases), position);
  if (!info) return [];
  const out: AutoCompletion[] = [];
  for (const item of info.items) {
    if (out.length >= MAX_COMPLETIONS) break;
    const shown = item.matchText || item.displayText;
    const value = aliases.toReal.get(shown) ?? shown;
    const word = (/^[\w-]+/.exec(value)?.[0] ?? value).toLowerCase();
    const kind = item.kind;
    if (kind === 'BuiltInFunction' || kind === 'AggregateFunction') {
      if (!SUPPORTED_FUNCTIONS.has(word)) continue;
    } else if (kind === 'QueryPrefix' || kind === 'TabularPrefix' || kind === 'TabularSuffix') {
      if (!SUPPORTED_OPERATORS.has(word)) continue;
    } else if (NO_COMPLETION_KINDS.has(kind)) {
      continue;
    }
    out.push({
      token: { start: info.editStart, length: info.editLength },
      value,
      completionType: kind,
      description: item.displayText,
    });
  }
  return out;
}

/**
 * At most this many completions per answer: after a `|` or in an expression Kusto offers every
 * function it knows, and the registry (several hundred names) keeps most of them, so a smaller cap
 * cut the alphabetical list before common names like `strlen`.
 */
const MAX_COMPLETIONS = 1000;

/** Completions of things this engine has no notion of. ('MaterialiedView' is Kusto's spelling.) */
const NO_COMPLETION_KINDS = new Set(['Database', 'Cluster', 'MaterialiedView', 'EntityGroup', 'Graph']);

const MAX_COMPLETION_QUERY_LENGTH = 16_384;

/** Parses and binds the query; never throws for problems in the query. */
export function parseQuery(
  text: string,
  catalog: SchemaCatalog,
  cursorPosition?: number,
  options: PlanOptions = {},
): ParseResponse {
  const response: ParseResponse = { parseSuccess: false, tokenInfo: [], suggestions: null, error: null, header: [], columns: [] };
  try {
    const { bound } = bindQuery(text, catalog, options);
    response.parseSuccess = true;
    response.header = bound.columns.map((c) => c.name);
    response.columns = resultColumns(bound.columns);
  } catch (err) {
    // bag_unpack / pivot: the query is fine, its columns are known only when it runs.
    if (err instanceof NeedsAnswer) response.parseSuccess = true;
    else response.error = toApiError(err);
  }
  // Completions analyse the text again with Microsoft's binder (3–5× a parse): only for queries
  // of editor size within the nesting limit.
  const limits = options.limits ?? DEFAULT_PARSE_LIMITS;
  if (
    cursorPosition !== undefined &&
    text.length <= MAX_COMPLETION_QUERY_LENGTH &&
    prescan(text).maxDepth <= limits.maxBracketDepth
  ) {
    try {
      response.suggestions = { autoCompletions: completions(text, catalog, cursorPosition) };
    } catch {
      response.suggestions = null;
    }
  }
  return response;
}
