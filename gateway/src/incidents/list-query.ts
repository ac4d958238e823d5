import { invalid } from '@strata/common';
import type { Context } from 'koa';

/** Values of a query parameter given repeatedly (`?state=OPEN&state=MITIGATED`) or comma-separated. */
export function queryList(ctx: Context, name: string): string[] {
  const raw = ctx.query[name] ?? ctx.query[Object.keys(ctx.query).find((k) => k.toLowerCase() === name.toLowerCase()) ?? ''];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** A non-negative integer query parameter; `fallback` when absent. */
export function queryInt(ctx: Context, name: string, fallback: number): number {
  const [raw, ...more] = queryList(ctx, name);
  if (raw === undefined) return fallback;
  if (more.length > 0 || !/^\d{1,9}$/.test(raw)) throw invalid(`${name} must be a non-negative integer.`);
  return Number(raw);
}

/**
 * Paging headers of a list whose body stays a plain array: `X-Total-Count` (matches over all
 * pages) and an RFC 8288 `Link` header with `next`/`prev` relations when there are such pages.
 */
export function pagingHeaders(ctx: Context, offset: number, limit: number, returned: number, total: number) {
  const link = (o: number) => {
    const params = new URLSearchParams(ctx.querystring);
    params.set('offset', String(o));
    params.set('limit', String(limit));
    return `<${ctx.path}?${params.toString()}>`;
  };
  const links: string[] = [];
  if (offset + returned < total) links.push(`${link(offset + returned)}; rel="next"`);
  if (offset > 0) links.push(`${link(Math.max(0, offset - limit))}; rel="prev"`);
  const headers: Record<string, string> = { 'x-total-count': String(total) };
  if (links.length) headers.link = links.join(', ');
  return headers;
}
