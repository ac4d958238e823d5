/**
 * The function reference of docs/query.md, rendered from the registry so the documentation
 * cannot drift from what the engine runs. gateway/test/query/registry.test.ts compares the
 * section between the markers with this text (and rewrites it when UPDATE_DOCS=1).
 */
import { allFunctions } from './registry.js';
import type { NamingRule, RegistryEntry } from './types.js';

export const DOCS_BEGIN = '<!-- function registry: begin (generated; UPDATE_DOCS=1 npm test rewrites it) -->';
export const DOCS_END = '<!-- function registry: end -->';

function namingText(rule: NamingRule): string {
  switch (rule.kind) {
    case 'none':
      return 'ColumnN';
    case 'first-argument':
      return "the argument's name";
    case 'prefix':
      return `\`${rule.prefix}_\` + argument`;
    case 'suffix':
      return `argument + \`_${rule.suffix}\``;
    case 'fixed':
      return `\`${rule.name}\``;
    case 'own':
      return rule.describe;
  }
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

function row(e: RegistryEntry): string {
  const name = `\`${e.name}\`${e.origin === 'product' ? ' (product)' : ''}`;
  const signatures = e.signatures.map((s) => `\`${s}\``).join('<br>');
  const empty = e.kind === 'aggregate' ? ` Empty input: ${e.empty}.` : '';
  return `| ${name} | ${cell(signatures)} | ${cell(e.returns)}.${cell(empty)} | ${cell(namingText(e.naming))} |`;
}

/** The generated section, markers included. */
export function registryDocsTable(): string {
  const entries = allFunctions();
  const table = (kind: RegistryEntry['kind']) => [
    '| name | signatures | returns | unnamed result column |',
    '|---|---|---|---|',
    ...entries.filter((e) => e.kind === kind).map(row),
  ];
  return [
    DOCS_BEGIN,
    '### Scalar functions',
    '',
    ...table('scalar'),
    '',
    '### Aggregates (summarize)',
    '',
    ...table('aggregate'),
    DOCS_END,
  ].join('\n');
}
