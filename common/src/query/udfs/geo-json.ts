/**
 * GeoJSON as Kusto's geospatial functions take and give it (dynamic values): points are
 * `[longitude, latitude]` in degrees, WGS-84 coordinates read on a sphere. Parsing is strict —
 * anything that is not a valid coordinate, line or polygon gives undefined, which the functions
 * turn into Kusto's null — and caches the last text it parsed, because a query usually passes
 * one constant shape for every row.
 */

export type Coordinate = [number, number];

export const validLongitude = (x: number | undefined): x is number =>
  x !== undefined && Number.isFinite(x) && x >= -180 && x <= 180;
export const validLatitude = (y: number | undefined): y is number => y !== undefined && Number.isFinite(y) && y >= -90 && y <= 90;

export const pointJson = (lng: number, lat: number): string => JSON.stringify({ type: 'Point', coordinates: [lng, lat] });
export const polygonJson = (ring: Coordinate[]): string => JSON.stringify({ type: 'Polygon', coordinates: [ring] });

function coordinate(v: unknown): Coordinate | undefined {
  if (!Array.isArray(v) || v.length !== 2) return undefined;
  const [x, y] = v as unknown[];
  if (typeof x !== 'number' || typeof y !== 'number' || !validLongitude(x) || !validLatitude(y)) return undefined;
  return [x, y];
}

function coordinates(v: unknown, min: number): Coordinate[] | undefined {
  if (!Array.isArray(v) || v.length < min) return undefined;
  const out: Coordinate[] = [];
  for (const c of v) {
    const p = coordinate(c);
    if (!p) return undefined;
    out.push(p);
  }
  return out;
}

/** A ring: at least four coordinates, the first equal to the last (which is then dropped). */
function ring(v: unknown): Coordinate[] | undefined {
  const cs = coordinates(v, 4);
  if (!cs) return undefined;
  const [first, last] = [cs[0] as Coordinate, cs[cs.length - 1] as Coordinate];
  if (first[0] !== last[0] || first[1] !== last[1]) return undefined;
  return cs.slice(0, -1);
}

function each<T>(v: unknown, item: (x: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const out: T[] = [];
  for (const x of v) {
    const r = item(x);
    if (r === undefined) return undefined;
    out.push(r);
  }
  return out;
}

/** LineString or MultiLineString → lines of at least two coordinates each. */
export function parseLines(json: unknown): Coordinate[][] | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { type, coordinates: c } = json as { type?: unknown; coordinates?: unknown };
  if (type === 'LineString') {
    const line = coordinates(c, 2);
    return line ? [line] : undefined;
  }
  if (type === 'MultiLineString') return each(c, (l) => coordinates(l, 2));
  return undefined;
}

/** Polygon or MultiPolygon → polygons, each a list of rings (shell first, then holes), unclosed. */
export function parsePolygons(json: unknown): Coordinate[][][] | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { type, coordinates: c } = json as { type?: unknown; coordinates?: unknown };
  if (type === 'Polygon') {
    const rings = each(c, ring);
    return rings ? [rings] : undefined;
  }
  if (type === 'MultiPolygon') return each(c, (p) => each(p, ring));
  return undefined;
}

/** Memoises a parse of JSON text by the last text seen (constant shapes repeat on every row). */
export function lastTextCache<T>(parse: (json: unknown) => T | undefined): (text: string | null) => T | undefined {
  let lastText: string | undefined;
  let lastValue: T | undefined;
  return (text) => {
    if (text === null) return undefined;
    if (text !== lastText) {
      lastText = text;
      try {
        lastValue = parse(JSON.parse(text));
      } catch {
        lastValue = undefined;
      }
    }
    return lastValue;
  };
}
