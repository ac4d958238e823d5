/**
 * Kusto's three geospatial grids (issue 17, family 7): Geohash (latlon-geohash), S2 cells (s2js,
 * a port of Google's S2, the library Kusto's own geospatial functions are built on) and H3 cells
 * (h3-js, Uber's H3 compiled to JS). Invalid coordinates, levels or tokens give "" for the
 * point-to-cell functions and null for the others, as Kusto documents.
 */
import { BIGINT, DOUBLE, VARCHAR } from '@duckdb/node-api';
import {
  cellToBoundary,
  cellToChildren,
  cellToLatLng,
  cellToParent,
  getResolution,
  gridDisk,
  gridDiskDistances,
  isValidCell,
  latLngToCell,
} from 'h3-js';
import Geohash from 'latlon-geohash';
import { s2 } from 's2js';
import { type Coordinate, pointJson, polygonJson, validLatitude, validLongitude } from './geo-json.js';
import { int, num, scalarUdf, type UdfValue } from './scalar-udf.js';

const DEG = 180 / Math.PI;
const GEOHASH = /^[0-9b-hjkmnp-z]{1,18}$/i;

// --- Geohash -------------------------------------------------------------------------------

export function pointToGeohash(lng: number | undefined, lat: number | undefined, accuracy: number | undefined): string {
  if (!validLongitude(lng) || !validLatitude(lat) || accuracy === undefined || accuracy < 1 || accuracy > 18) return '';
  return Geohash.encode(lat, lng, accuracy);
}

/** The cell's rectangle as [west, south, east, north], or undefined for an invalid geohash. */
function geohashBounds(hash: string): [number, number, number, number] | undefined {
  if (!GEOHASH.test(hash)) return undefined;
  const { sw, ne } = Geohash.bounds(hash);
  return [sw.lon, sw.lat, ne.lon, ne.lat];
}

export function geohashCenter(hash: string): Coordinate | undefined {
  const b = geohashBounds(hash);
  return b && [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
}

/** The rectangle counter-clockwise from its south-west corner, closed. */
export function geohashPolygon(hash: string): Coordinate[] | undefined {
  const b = geohashBounds(hash);
  if (!b) return undefined;
  const [w, s, e, n] = b;
  return [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
}

/**
 * The (up to eight) cells around a geohash, in the order of Kusto's documented example
 * (south-west, north-west, south-east, north, west, north-east, east, south). Across the
 * antimeridian the neighbours wrap; past a pole there is none.
 */
const GEOHASH_DIRECTIONS: readonly [number, number][] = [
  [-1, -1],
  [-1, 1],
  [1, -1],
  [0, 1],
  [-1, 0],
  [1, 1],
  [1, 0],
  [0, -1],
];

export function geohashNeighbors(hash: string): string[] | undefined {
  const b = geohashBounds(hash);
  if (!b) return undefined;
  const [w, s, e, n] = b;
  const [cx, cy, dx, dy] = [(w + e) / 2, (s + n) / 2, e - w, n - s];
  const out: string[] = [];
  for (const [i, j] of GEOHASH_DIRECTIONS) {
    const y = cy + j * dy;
    if (y < -90 || y > 90) continue;
    let x = cx + i * dx;
    if (x > 180) x -= 360;
    if (x < -180) x += 360;
    const h = Geohash.encode(y, x, hash.length);
    if (h !== hash.toLowerCase() && !out.includes(h)) out.push(h);
  }
  return out;
}

// --- S2 ------------------------------------------------------------------------------------

export function pointToS2Cell(lng: number | undefined, lat: number | undefined, level: number | undefined): string {
  if (!validLongitude(lng) || !validLatitude(lat) || level === undefined || level < 0 || level > 30) return '';
  const leaf = s2.cellid.fromLatLng(s2.LatLng.fromDegrees(lat, lng));
  return s2.cellid.toToken(s2.cellid.parent(leaf, level));
}

/** A token's cell id, or undefined for a token that is not a valid cell. */
function s2Cell(token: string): bigint | undefined {
  if (!/^[0-9a-f]{1,16}$/i.test(token)) return undefined;
  const id = s2.cellid.fromToken(token);
  return s2.cellid.valid(id) ? id : undefined;
}

const degrees = (p: InstanceType<typeof s2.Point>): Coordinate => {
  const ll = s2.LatLng.fromPoint(p);
  return [ll.lng * DEG, ll.lat * DEG];
};

export function s2CellCenter(token: string): Coordinate | undefined {
  const id = s2Cell(token);
  return id === undefined ? undefined : degrees(s2.cellid.point(id));
}

/** The cell's four vertices in S2's (counter-clockwise) order, closed. */
export function s2CellPolygon(token: string): Coordinate[] | undefined {
  const id = s2Cell(token);
  if (id === undefined) return undefined;
  const cell = s2.Cell.fromCellID(id);
  const ring = [0, 1, 2, 3].map((k) => degrees(cell.vertex(k)));
  return [...ring, ring[0] as Coordinate];
}

/** The cells of the same level that share an edge or a vertex, in S2's AppendAllNeighbors order. */
export function s2CellNeighbors(token: string): string[] | undefined {
  const id = s2Cell(token);
  if (id === undefined) return undefined;
  const out: string[] = [];
  for (const n of s2.cellid.allNeighbors(id, s2.cellid.level(id))) {
    const t = s2.cellid.toToken(n);
    if (n !== id && !out.includes(t)) out.push(t);
  }
  return out;
}

// --- H3 ------------------------------------------------------------------------------------

export function pointToH3Cell(lng: number | undefined, lat: number | undefined, resolution: number | undefined): string {
  if (!validLongitude(lng) || !validLatitude(lat) || resolution === undefined || resolution < 0 || resolution > 15) return '';
  return latLngToCell(lat, lng, resolution);
}

const h3Valid = (cell: string): boolean => /^[0-9a-f]{15,16}$/i.test(cell) && isValidCell(cell);

export function h3CellCenter(cell: string): Coordinate | undefined {
  if (!h3Valid(cell)) return undefined;
  const [lat, lng] = cellToLatLng(cell);
  return [lng, lat];
}

/** The cell's boundary as GeoJSON orders it (counter-clockwise, closed). */
export function h3CellPolygon(cell: string): Coordinate[] | undefined {
  return h3Valid(cell) ? (cellToBoundary(cell, true) as Coordinate[]) : undefined;
}

export function h3CellNeighbors(cell: string): string[] | undefined {
  return h3Valid(cell) ? gridDisk(cell, 1).filter((c) => c !== cell) : undefined;
}

export function h3CellLevel(cell: string): number | undefined {
  return h3Valid(cell) ? getResolution(cell) : undefined;
}

/**
 * The parent at resolution `r` (0..14); "" when invalid or finer than the cell. (The binding
 * passes the cell's level - 1 when the query gives no resolution.)
 */
export function h3CellParent(cell: string, r: number | undefined): string {
  if (!h3Valid(cell) || r === undefined || r < 0 || r > 14 || r > getResolution(cell)) return '';
  return cellToParent(cell, r);
}

/** The children at resolution `r` (1..15, at most 5 levels down; the binding's default is level + 1). */
export function h3CellChildren(cell: string, r: number | undefined): string[] | undefined {
  if (!h3Valid(cell) || r === undefined) return undefined;
  const own = getResolution(cell);
  if (r < 1 || r > 15 || r < own || r - own > 5) return undefined;
  return cellToChildren(cell, r);
}

/** Rings 0..distance (0..142) around the cell, each in H3's order. */
export function h3CellRings(cell: string, distance: number | undefined): string[][] | undefined {
  if (!h3Valid(cell) || distance === undefined || distance < 0 || distance > 142) return undefined;
  return gridDiskDistances(cell, distance);
}

// --- SQL functions -------------------------------------------------------------------------

const text = (v: UdfValue | undefined): string => (typeof v === 'string' ? v : '');
const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const point = (c: Coordinate | undefined): string | null => (c ? pointJson(c[0], c[1]) : null);
const polygon = (r: Coordinate[] | undefined): string | null => (r ? polygonJson(r) : null);

/** A cell function of one token returning JSON (or null). */
const tokenToJson = (name: string, f: (token: string) => string | null) => () =>
  scalarUdf({ name, params: [VARCHAR], returns: VARCHAR, row: ([t]) => f(text(t)) });

export const GEO_CELL_UDFS = [
  () =>
    scalarUdf({
      name: 'kql_geo_point_to_geohash',
      params: [DOUBLE, DOUBLE, BIGINT],
      returns: VARCHAR,
      row: ([x, y, a]) => pointToGeohash(num(x ?? null), num(y ?? null), int(a ?? null)),
    }),
  tokenToJson('kql_geo_geohash_to_central_point', (t) => point(geohashCenter(t))),
  tokenToJson('kql_geo_geohash_to_polygon', (t) => polygon(geohashPolygon(t))),
  tokenToJson('kql_geo_geohash_neighbors', (t) => json(geohashNeighbors(t))),
  () =>
    scalarUdf({
      name: 'kql_geo_point_to_s2cell',
      params: [DOUBLE, DOUBLE, BIGINT],
      returns: VARCHAR,
      row: ([x, y, l]) => pointToS2Cell(num(x ?? null), num(y ?? null), int(l ?? null)),
    }),
  tokenToJson('kql_geo_s2cell_to_central_point', (t) => point(s2CellCenter(t))),
  tokenToJson('kql_geo_s2cell_to_polygon', (t) => polygon(s2CellPolygon(t))),
  tokenToJson('kql_geo_s2cell_neighbors', (t) => json(s2CellNeighbors(t))),
  () =>
    scalarUdf({
      name: 'kql_geo_point_to_h3cell',
      params: [DOUBLE, DOUBLE, BIGINT],
      returns: VARCHAR,
      row: ([x, y, r]) => pointToH3Cell(num(x ?? null), num(y ?? null), int(r ?? null)),
    }),
  tokenToJson('kql_geo_h3cell_to_central_point', (t) => point(h3CellCenter(t))),
  tokenToJson('kql_geo_h3cell_to_polygon', (t) => polygon(h3CellPolygon(t))),
  tokenToJson('kql_geo_h3cell_neighbors', (t) => json(h3CellNeighbors(t))),
  () =>
    scalarUdf({
      name: 'kql_geo_h3cell_level',
      params: [VARCHAR],
      returns: BIGINT,
      row: ([t]) => {
        const l = h3CellLevel(text(t));
        return l === undefined ? null : BigInt(l);
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_h3cell_parent',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: ([t, r]) => h3CellParent(text(t), int(r ?? null)),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_h3cell_children',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: ([t, r]) => json(h3CellChildren(text(t), int(r ?? null))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_h3cell_rings',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: ([t, d]) => json(h3CellRings(text(t), int(d ?? null))),
    }),
];
