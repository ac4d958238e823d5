/**
 * Fills `{{column}}` placeholders of a rule's title or description with the values of the row
 * that fired (missing columns render as empty; objects as JSON), cut to `max` characters (the
 * incident's own limit, so a long value never makes the incident save fail). Plain text
 * substitution: the incident stores text and the mail renders it as markdown, as it does a typed
 * title.
 */
export function renderAlertTemplate(template: string, row: Record<string, unknown>, max: number): string {
  const lower = new Map(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v] as const));
  const out = template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g, (_, name: string) => {
    const v = Object.hasOwn(row, name) ? row[name] : lower.get(name.toLowerCase());
    if (v === undefined || v === null) return '';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  });
  return out.length > max ? out.slice(0, max) : out;
}
