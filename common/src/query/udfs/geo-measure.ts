/**
 * Kusto's geospatial measurements (issue 17, family 7). Kusto documents its earth model: WGS-84
 * coordinates measured on a sphere, edges are the sphere's geodesics (great-circle arcs). The
 * radius is S2's mean earth radius, 6,371,010 m — Kusto's documented distance Seattle–Los
 * Angeles, 1546754.35197381 m, is that sphere's great-circle distance to all printed digits
 * (decision 0022). Distances and shapes (polygon containment, areas, distances to lines and
 * polygons) come from s2js, a port of the S2 library that Kusto's own geospatial functions are
 * built on; bearings (azimuth, angle) from GeographicLib's geodesic solver on that sphere
 * (flattening 0).
 */
import { BIGINT, BOOLEAN, DOUBLE, VARCHAR } from '@duckdb/node-api';
import geodesic from 'geographiclib-geodesic';
import { s2 } from 's2js';
import {
  type Coordinate,
  lastTextCache,
  parseLines,
  parsePolygons,
  pointJson,
  validLatitude,
  validLongitude,
} from './geo-json.js';
import { sphericalUnion } from './geo-union.js';
import { int, num, scalarUdf, type UdfValue } from './scalar-udf.js';

/** S2's mean earth radius in metres (S2Earth::RadiusMeters), Kusto's sphere. */
export const EARTH_RADIUS_M = 6371010;

const SPHERE = new geodesic.Geodesic.Geodesic(EARTH_RADIUS_M, 0);
const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;

type S2Point = InstanceType<typeof s2.Point>;
const toPoint = ([lng, lat]: Coordinate): S2Point => s2.Point.fromLatLng(s2.LatLng.fromDegrees(lat, lng));

const valid = (lng: number | undefined, lat: number | undefined): [number, number] | undefined =>
  validLongitude(lng) && validLatitude(lat) ? [lng, lat] : undefined;

/** Great-circle distance in metres; undefined for invalid coordinates. */
export function distance2Points(lng1?: number, lat1?: number, lng2?: number, lat2?: number): number | undefined {
  const a = valid(lng1, lat1);
  const b = valid(lng2, lat2);
  if (!a || !b) return undefined;
  // S2's angle between the unit vectors (atan2 of cross and dot: exact at every distance).
  return toPoint(a).distance(toPoint(b)) * EARTH_RADIUS_M;
}

/** Inside the spherical cap (distance ≤ radius); undefined for invalid input or a negative radius. */
export function pointInCircle(lng?: number, lat?: number, cLng?: number, cLat?: number, radius?: number): boolean | undefined {
  const d = distance2Points(lng, lat, cLng, cLat);
  if (d === undefined || radius === undefined || radius < 0) return undefined;
  return d <= radius;
}

/** Equal or antipodal points have no direction between them. */
function degenerate(a: [number, number], b: [number, number]): boolean {
  const [p, q] = [toPoint(a), toPoint(b)];
  const cross = p.vector.cross(q.vector).norm();
  return cross === 0 || (cross < 1e-15 && p.vector.dot(q.vector) < 0) || (a[0] === b[0] && a[1] === b[1]);
}

/** The initial bearing from point 1 to point 2 in radians clockwise from north, in [0, 2π). */
export function azimuth(lng1?: number, lat1?: number, lng2?: number, lat2?: number): number | undefined {
  const a = valid(lng1, lat1);
  const b = valid(lng2, lat2);
  if (!a || !b || degenerate(a, b)) return undefined;
  const azi = (SPHERE.Inverse(a[1], a[0], b[1], b[0]).azi1 as number) * RAD;
  return azi < 0 ? azi + 2 * Math.PI : azi;
}

/** The clockwise angle at point 2 from the line to point 1 to the line to point 3, in [0, 2π). */
export function angle(...c: (number | undefined)[]): number | undefined {
  const from = azimuth(c[2], c[3], c[0], c[1]);
  const to = azimuth(c[2], c[3], c[4], c[5]);
  if (from === undefined || to === undefined) return undefined;
  const d = to - from;
  return d < 0 ? d + 2 * Math.PI : d;
}

// --- Shapes ----------------------------------------------------------------------------------

/**
 * An S2 polygon from one GeoJSON polygon's rings: every ring encloses the smaller of the two
 * regions it divides the sphere into (Kusto's rule), and nesting makes the holes. Undefined when
 * S2 finds it invalid (repeated vertices, crossing rings …).
 */
function s2Polygon(rings: Coordinate[][]): S2Polygon | undefined {
  const loops = [];
  for (const r of rings) {
    if (r.length < 3) return undefined;
    const loop = new s2.Loop(r.map(toPoint));
    if (loop.validate()) return undefined;
    loop.normalize();
    loops.push(loop);
  }
  const polygon = new s2.Polygon(loops);
  return polygon.validate() ? undefined : polygon;
}

type S2Polygon = InstanceType<typeof s2.Polygon>;

/** A (multi)polygon as S2 polygons, one per GeoJSON polygon; undefined when any is invalid. */
function toPolygons(json: unknown): { polygons: S2Polygon[]; rings: Coordinate[][][] } | undefined {
  const parsed = parsePolygons(json);
  if (!parsed) return undefined;
  const out: S2Polygon[] = [];
  for (const rings of parsed) {
    const p = s2Polygon(rings);
    if (!p) return undefined;
    out.push(p);
  }
  return { polygons: out, rings: parsed };
}

const toPolylines = (json: unknown) => parseLines(json)?.map((l) => new s2.Polyline(l.map(toPoint)));

// One cache per argument position, so two shape arguments do not evict each other.
const polygonsOf = lastTextCache(toPolygons);
const secondPolygonsOf = lastTextCache(toPolygons);
const polylinesOf = lastTextCache(toPolylines);
const secondPolylinesOf = lastTextCache(toPolylines);
const linesOf = lastTextCache(parseLines);

type Shape = Parameters<InstanceType<typeof s2.ShapeIndex>['add']>[0];

/** Whether two sets of shapes' edges touch or cross (their edge distance is exactly 0). */
function edgesMeet(a: Shape[], b: Shape[]): boolean {
  const [ia, ib] = [new s2.ShapeIndex(), new s2.ShapeIndex()];
  for (const s of a) ia.add(s);
  for (const s of b) ib.add(s);
  return new s2.ClosestEdgeQuery(ia).getDistance(new s2.EdgeQueryShapeIndexTarget(ib)) === 0;
}

/** Arc length of a chain of points in metres. */
function chainLength(points: Coordinate[]): number {
  let sum = 0;
  for (let i = 1; i < points.length; i++) sum += toPoint(points[i - 1] as Coordinate).distance(toPoint(points[i] as Coordinate));
  return sum * EARTH_RADIUS_M;
}

/** The chord angle S2 measures with, as an arc in metres. */
const chordToMetres = (chord2: number): number => 2 * Math.asin(Math.min(1, Math.sqrt(chord2) / 2)) * EARTH_RADIUS_M;

/** Shortest distance from a point to shapes' edges in metres. */
function distanceToShapes(p: Coordinate, shapes: Shape[]): number {
  const index = new s2.ShapeIndex();
  for (const s of shapes) index.add(s);
  return chordToMetres(new s2.ClosestEdgeQuery(index).getDistance(new s2.EdgeQueryPointTarget(toPoint(p))));
}

export function pointInPolygon(
  lng: number | undefined,
  lat: number | undefined,
  polygonText: string | null,
): boolean | undefined {
  const p = valid(lng, lat);
  const shape = polygonsOf(polygonText);
  if (!p || !shape) return undefined;
  const point = toPoint(p);
  return shape.polygons.some((polygon) => polygon.containsPoint(point));
}

export function distancePointToPolygon(
  lng: number | undefined,
  lat: number | undefined,
  polygonText: string | null,
): number | undefined {
  const p = valid(lng, lat);
  const shape = polygonsOf(polygonText);
  if (!p || !shape) return undefined;
  const point = toPoint(p);
  if (shape.polygons.some((polygon) => polygon.containsPoint(point))) return 0;
  return distanceToShapes(p, shape.polygons);
}

export function distancePointToLine(
  lng: number | undefined,
  lat: number | undefined,
  lineText: string | null,
): number | undefined {
  const p = valid(lng, lat);
  const lines = linesOf(lineText);
  if (!p || !lines) return undefined;
  return distanceToShapes(
    p,
    lines.map((l) => new s2.Polyline(l.map(toPoint))),
  );
}

/**
 * Kusto measures a multipolygon as the union of its polygons. Disjoint polygons (no overlap, no
 * shared edge) measure as they are; others through their union (geo-union.ts). A union that
 * cannot be formed exactly fails the query, naming the limit, rather than answering differently.
 */
function measured(fn: string, shape: { polygons: S2Polygon[]; rings: Coordinate[][][] }): S2Polygon[] {
  const { polygons, rings } = shape;
  if (polygons.length < 2 || !overlapping(polygons, rings)) return polygons;
  const union = sphericalUnion(rings);
  const out: S2Polygon[] = [];
  for (const polygon of union ?? []) {
    const loops = polygon.map((ring) => {
      const loop = new s2.Loop(ring);
      loop.normalize();
      return loop;
    });
    const p = new s2.Polygon(loops);
    if (p.validate()) throw new Error(overlap(fn));
    out.push(p);
  }
  if (!union) throw new Error(overlap(fn));
  return out;
}

function overlapping(polygons: S2Polygon[], rings: Coordinate[][][]): boolean {
  const owners = new Map<string, number>();
  for (const [k, polygon] of rings.entries()) {
    for (const ring of polygon) {
      for (let i = 0; i < ring.length; i++) {
        const [a, b] = [ring[i] as Coordinate, ring[(i + 1) % ring.length] as Coordinate];
        const edge = [a.join(','), b.join(',')].sort().join(';');
        const owner = owners.get(edge);
        if (owner !== undefined && owner !== k) return true;
        owners.set(edge, k);
      }
    }
  }
  for (let i = 0; i < polygons.length; i++)
    for (let j = i + 1; j < polygons.length; j++)
      if ((polygons[i] as S2Polygon).intersects(polygons[j] as S2Polygon)) return true;
  return false;
}

const overlap = (fn: string) =>
  `${fn}: the polygons of this MultiPolygon overlap and do not fit in one hemisphere; Kusto measures their union, which is not supported there`;

/** Area in square metres: S2's area (steradians) on the sphere. */
export function polygonArea(polygonText: string | null): number | undefined {
  const shape = polygonsOf(polygonText);
  if (!shape) return undefined;
  return measured('geo_polygon_area', shape).reduce((acc, p) => acc + p.area(), 0) * EARTH_RADIUS_M ** 2;
}

/** Length of every ring's boundary in metres. */
export function polygonPerimeter(polygonText: string | null): number | undefined {
  const shape = polygonsOf(polygonText);
  if (!shape) return undefined;
  let sum = 0;
  for (const polygon of measured('geo_polygon_perimeter', shape)) {
    for (let i = 0; i < polygon.numLoops(); i++) {
      const loop = polygon.loop(i);
      const n = loop.numVertices();
      for (let k = 0; k < n; k++) sum += loop.vertex(k).distance(loop.vertex((k + 1) % n));
    }
  }
  return sum * EARTH_RADIUS_M;
}

/** Total length of a line or multiline in metres. */
export function lineLength(lineText: string | null): number | undefined {
  const lines = linesOf(lineText);
  return lines?.reduce((acc, l) => acc + chainLength(l), 0);
}

// --- Centroids and positions along a line --------------------------------------------------------

const pointOf = (v: { x: number; y: number; z: number }): Coordinate | undefined => {
  const n = Math.hypot(v.x, v.y, v.z);
  if (!(n > 0)) return undefined;
  const ll = s2.LatLng.fromPoint(new s2.Point(v.x / n, v.y / n, v.z / n));
  return [ll.lng * DEG, ll.lat * DEG];
};

/** S2's area-weighted centroid of the (disjoint) polygons, on the sphere's surface. */
export function polygonCentroid(polygonText: string | null): Coordinate | undefined {
  const shape = polygonsOf(polygonText);
  if (!shape) return undefined;
  const sum = { x: 0, y: 0, z: 0 };
  for (const p of measured('geo_polygon_centroid', shape)) {
    const c = p.centroid().vector;
    sum.x += c.x;
    sum.y += c.y;
    sum.z += c.z;
  }
  return pointOf(sum);
}

/** S2's length-weighted centroid of the line or lines, on the sphere's surface. */
export function lineCentroid(lineText: string | null): Coordinate | undefined {
  const lines = polylinesOf(lineText);
  if (!lines) return undefined;
  const sum = { x: 0, y: 0, z: 0 };
  for (const l of lines) {
    const c = l.centroid().vector;
    sum.x += c.x;
    sum.y += c.y;
    sum.z += c.z;
  }
  return pointOf(sum);
}

/** One LineString (not a multiline) as an S2 polyline. */
const singleLine = lastTextCache((json) =>
  (json as { type?: unknown }).type === 'LineString' ? toPolylines(json)?.[0] : undefined,
);

/** The point at a fraction (0..1) of the line's length from its start. */
export function lineInterpolatePoint(lineText: string | null, fraction: number | undefined): Coordinate | undefined {
  const line = singleLine(lineText);
  if (!line || fraction === undefined || fraction < 0 || fraction > 1) return undefined;
  const [point] = line.interpolate(fraction);
  return pointOf(point.vector);
}

/** The fraction (0..1) of the line's length from its start to the line's point nearest the given one. */
export function lineLocatePoint(lineText: string | null, lng: number | undefined, lat: number | undefined): number | undefined {
  const line = singleLine(lineText);
  const p = valid(lng, lat);
  if (!line || !p) return undefined;
  const [nearest, next] = line.project(toPoint(p));
  return line.uninterpolate(nearest, next);
}

// --- Covering cells --------------------------------------------------------------------------

/** Kusto's limit on the tokens of one covering; past it the answer is null. */
const MAX_COVERING_CELLS = 65536;

/**
 * The S2 cells of one level that cover the (multi)polygon, as S2's RegionCoverer finds them with
 * its minimum and maximum level both at `level`, in cell-id order; null past 65,536 cells. A
 * covering that must exceed the limit (the area alone needs more cells than the largest cells of
 * the level, about twice the average, could hold) is refused before it is computed.
 */
export function polygonToS2Cells(polygonText: string | null, level: number | undefined): string[] | undefined {
  const shape = polygonsOf(polygonText);
  if (!shape || level === undefined || level < 0 || level > 30) return undefined;
  const largestCell = ((4 * Math.PI) / (6 * 4 ** level)) * 2.1;
  const area = shape.polygons.reduce((acc, p) => acc + p.area(), 0);
  if (area / largestCell > MAX_COVERING_CELLS) return undefined;
  const coverer = new s2.RegionCoverer({ minLevel: level, maxLevel: level, maxCells: MAX_COVERING_CELLS });
  const cells = new Set<bigint>();
  for (const p of shape.polygons) for (const id of coverer.covering(p)) cells.add(id);
  if (cells.size > MAX_COVERING_CELLS) return undefined;
  return [...cells].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((id) => s2.cellid.toToken(id));
}

// --- Intersection tests ----------------------------------------------------------------------
// Kusto's shapes here contain their boundaries ("a polygon contains its vertices"): two shapes
// intersect when their interiors overlap (S2's test) or their edges touch or cross.

export function intersects2Lines(a: string | null, b: string | null): boolean | undefined {
  const [x, y] = [polylinesOf(a), secondPolylinesOf(b)];
  if (!x || !y) return undefined;
  return edgesMeet(x, y);
}

export function intersects2Polygons(a: string | null, b: string | null): boolean | undefined {
  const [x, y] = [polygonsOf(a), secondPolygonsOf(b)];
  if (!x || !y) return undefined;
  return x.polygons.some((p) => y.polygons.some((q) => p.intersects(q))) || edgesMeet(x.polygons, y.polygons);
}

export function intersectsLineWithPolygon(line: string | null, polygon: string | null): boolean | undefined {
  const [lines, shape] = [polylinesOf(line), polygonsOf(polygon)];
  if (!lines || !shape) return undefined;
  const inside = lines.some((l) => l.points.some((v) => shape.polygons.some((p) => p.containsPoint(v))));
  return inside || edgesMeet(lines, shape.polygons);
}

// --- SQL functions -------------------------------------------------------------------------

const n = (v: UdfValue | undefined): number | undefined => num(v ?? null);
const text = (v: UdfValue | undefined): string | null => (typeof v === 'string' ? v : null);
const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
const point = (c: Coordinate | undefined): string | null => (c ? pointJson(c[0], c[1]) : null);

export const GEO_MEASURE_UDFS = [
  () =>
    scalarUdf({
      name: 'kql_geo_distance_2points',
      params: [DOUBLE, DOUBLE, DOUBLE, DOUBLE],
      returns: DOUBLE,
      row: (a) => orNull(distance2Points(n(a[0]), n(a[1]), n(a[2]), n(a[3]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_point_in_circle',
      params: [DOUBLE, DOUBLE, DOUBLE, DOUBLE, DOUBLE],
      returns: BOOLEAN,
      row: (a) => orNull(pointInCircle(n(a[0]), n(a[1]), n(a[2]), n(a[3]), n(a[4]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_azimuth',
      params: [DOUBLE, DOUBLE, DOUBLE, DOUBLE],
      returns: DOUBLE,
      row: (a) => orNull(azimuth(n(a[0]), n(a[1]), n(a[2]), n(a[3]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_angle',
      params: [DOUBLE, DOUBLE, DOUBLE, DOUBLE, DOUBLE, DOUBLE],
      returns: DOUBLE,
      row: (a) => orNull(angle(...a.map(n))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_point_in_polygon',
      params: [DOUBLE, DOUBLE, VARCHAR],
      returns: BOOLEAN,
      row: (a) => orNull(pointInPolygon(n(a[0]), n(a[1]), text(a[2]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_distance_point_to_polygon',
      params: [DOUBLE, DOUBLE, VARCHAR],
      returns: DOUBLE,
      row: (a) => orNull(distancePointToPolygon(n(a[0]), n(a[1]), text(a[2]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_distance_point_to_line',
      params: [DOUBLE, DOUBLE, VARCHAR],
      returns: DOUBLE,
      row: (a) => orNull(distancePointToLine(n(a[0]), n(a[1]), text(a[2]))),
    }),
  () =>
    scalarUdf({ name: 'kql_geo_polygon_area', params: [VARCHAR], returns: DOUBLE, row: (a) => orNull(polygonArea(text(a[0]))) }),
  () =>
    scalarUdf({
      name: 'kql_geo_polygon_perimeter',
      params: [VARCHAR],
      returns: DOUBLE,
      row: (a) => orNull(polygonPerimeter(text(a[0]))),
    }),
  () =>
    scalarUdf({ name: 'kql_geo_line_length', params: [VARCHAR], returns: DOUBLE, row: (a) => orNull(lineLength(text(a[0]))) }),
  () =>
    scalarUdf({
      name: 'kql_geo_polygon_to_s2cells',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: (a) => {
        const cells = polygonToS2Cells(text(a[0]), int(a[1] ?? null));
        return cells ? JSON.stringify(cells) : null;
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_polygon_centroid',
      params: [VARCHAR],
      returns: VARCHAR,
      row: (a) => point(polygonCentroid(text(a[0]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_line_centroid',
      params: [VARCHAR],
      returns: VARCHAR,
      row: (a) => point(lineCentroid(text(a[0]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_line_interpolate_point',
      params: [VARCHAR, DOUBLE],
      returns: VARCHAR,
      row: (a) => point(lineInterpolatePoint(text(a[0]), n(a[1]))),
    }),
  () =>
    scalarUdf({
      name: 'kql_geo_line_locate_point',
      params: [VARCHAR, DOUBLE, DOUBLE],
      returns: DOUBLE,
      row: (a) => orNull(lineLocatePoint(text(a[0]), n(a[1]), n(a[2]))),
    }),
  ...(
    [
      ['kql_geo_intersects_2lines', intersects2Lines],
      ['kql_geo_intersects_2polygons', intersects2Polygons],
      ['kql_geo_intersects_line_with_polygon', intersectsLineWithPolygon],
    ] as const
  ).map(
    ([name, f]) =>
      () =>
        scalarUdf({ name, params: [VARCHAR, VARCHAR], returns: BOOLEAN, row: (a) => orNull(f(text(a[0]), text(a[1]))) }),
  ),
];
