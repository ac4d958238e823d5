/**
 * The union of overlapping polygons on the sphere, for measuring a MultiPolygon as Kusto does
 * (the area, perimeter and centroid of its polygons' union). s2js has no boolean operations, so
 * the rings go through the gnomonic projection, which maps great-circle arcs to straight
 * segments: a planar union there (polygon-clipping) has exactly the union's geodesic edges, and its
 * vertices map back onto the sphere. The projection needs every vertex within one hemisphere
 * around the shapes' mean direction (with a margin); undefined otherwise.
 */
import polygonClipping, { type MultiPolygon as PlanarMultiPolygon } from 'polygon-clipping';
import { s2 } from 's2js';
import type { Coordinate } from './geo-json.js';

type Vec = [number, number, number];
const RAD = Math.PI / 180;

const dot = (a: Vec, b: Vec) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: Vec, b: Vec): Vec => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const normalize = (a: Vec): Vec => {
  const n = Math.hypot(...a);
  return [a[0] / n, a[1] / n, a[2] / n];
};
const unit = ([lng, lat]: Coordinate): Vec => {
  const [phi, lambda] = [lat * RAD, lng * RAD];
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)];
};

/** Rings of S2 points (unclosed), grouped by polygon (shell first), of the union. */
export function sphericalUnion(polygons: Coordinate[][][]): InstanceType<typeof s2.Point>[][][] | undefined {
  const all = polygons.flat(2).map(unit);
  const center = normalize(all.reduce<Vec>((acc, v) => [acc[0] + v[0], acc[1] + v[1], acc[2] + v[2]], [0, 0, 0]));
  if (all.some((v) => dot(v, center) < 0.1)) return undefined;
  const e1 = normalize(cross(Math.abs(center[2]) < 0.9 ? [0, 0, 1] : [1, 0, 0], center));
  const e2 = cross(center, e1);
  const project = (c: Coordinate): [number, number] => {
    const v = unit(c);
    const t = dot(v, center);
    return [dot(v, e1) / t, dot(v, e2) / t];
  };
  const planar: PlanarMultiPolygon = polygons.map((rings) => rings.map((ring) => [...ring, ring[0] as Coordinate].map(project)));
  const [first, ...rest] = planar;
  if (!first) return undefined;
  const union = polygonClipping.union(first, ...rest);
  return union.map((rings) =>
    rings.map((ring) =>
      ring.slice(0, -1).map(([x, y]) => {
        const v = normalize([
          center[0] + x * e1[0] + y * e2[0],
          center[1] + x * e1[1] + y * e2[1],
          center[2] + x * e1[2] + y * e2[2],
        ]);
        return new s2.Point(v[0], v[1], v[2]);
      }),
    ),
  );
}
