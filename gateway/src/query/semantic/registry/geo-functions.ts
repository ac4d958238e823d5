/**
 * Geospatial functions (issue 17, family 7). Each runs as a JS function inside DuckDB
 * (common/src/query/udfs/geo-*.ts, registered on every worker and on the gateway's merge
 * database), so it answers the same wherever it runs. Coordinates are reals in degrees
 * (longitude first); shapes are GeoJSON dynamics, given and returned as Kusto does. Kusto's
 * earth model is a sphere of S2's mean radius (decision 0022). Invalid input gives null, or ""
 * for the functions returning a cell token, as Kusto documents. The functions whose exact
 * algorithm Kusto does not document (buffers, simplification, densification, centroids,
 * intersections, unions, covering cells) are not registered, so they are refused by name.
 */
import { queryError } from '../../errors.js';
import { int, join, type Sql, sql, trusted } from '../../sql/sql.js';
import type { KqlType } from '../../types.js';
import { type Bound, coerce, strSql } from '../bound.js';
import { arity, type CallExpr } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { ScalarFunctionEntry } from './types.js';

/**
 * A parameter and how it reaches the JS function: a DOUBLE, a BIGINT, or text (a string, or a
 * dynamic's JSON). `fallback` makes it optional: its SQL when the query leaves it out.
 */
interface Param {
  name: string;
  kind: 'real' | 'long' | 'string' | 'dynamic';
  fallback?: (given: Sql[]) => Sql;
}

interface GeoSpec {
  name: string;
  params: Param[];
  returns: KqlType;
  /** A long Kusto types int: reported as int (decision 0048, int-columns.ts). */
  int32?: true;
  describe: string;
}

const real = (name: string): Param => ({ name, kind: 'real' });
const text = (name: string): Param => ({ name, kind: 'string' });
const shape = (name: string): Param => ({ name, kind: 'dynamic' });
const long = (name: string, fallback?: (given: Sql[]) => Sql): Param => ({
  name,
  kind: 'long',
  ...(fallback ? { fallback } : {}),
});
const byDefault = (n: number) => () => sql`${int(n)}`;

function argumentSql(b: Bound, p: Param, call: CallExpr): Sql {
  const fail = () =>
    queryError(
      `The ${p.name} of '${call.name}' must be ${p.kind === 'real' ? 'real or long' : p.kind}; this is a ${b.type}.`,
      b.span,
    );
  switch (p.kind) {
    case 'real':
      if (b.type !== 'real' && b.type !== 'long') throw fail();
      return coerce(b, 'real');
    case 'long':
      if (b.type !== 'long') throw fail();
      return b.sql;
    case 'string':
      if (b.type !== 'string') throw fail();
      return strSql(b);
    case 'dynamic':
      if (b.type !== 'dynamic') throw fail();
      return sql`CAST(${b.sql} AS VARCHAR)`;
  }
}

function bind(spec: GeoSpec): ScalarFn {
  const required = spec.params.filter((p) => !p.fallback).length;
  return (args, call) => {
    arity(call, args.length, required, spec.params.length);
    const given = args.map((a, i) => argumentSql(a, spec.params[i] as Param, call));
    const all = [...given, ...spec.params.slice(given.length).map((p) => (p.fallback as (g: Sql[]) => Sql)(given))];
    const udf = sql`${trusted(`kql_${spec.name}`)}(${join(all, ', ')})`;
    // Cell tokens are strings, never null ("" when invalid); shapes come back as JSON text.
    return {
      type: spec.returns,
      sql: spec.returns === 'dynamic' ? sql`CAST(${udf} AS JSON)` : udf,
      span: call.span,
      notNull: spec.returns === 'string',
      ...(spec.int32 ? { int32: true } : {}),
    };
  };
}

function signature(spec: GeoSpec): string {
  const list = (ps: Param[]) => ps.map((p) => `${p.name}: ${p.kind}`).join(', ');
  const optional = spec.params.filter((p) => p.fallback);
  const tail = optional.length ? `[, ${list(optional)}]` : '';
  return `${spec.name}(${list(spec.params.filter((p) => !p.fallback))}${tail}): ${spec.int32 ? 'int' : spec.returns}`;
}

const POINT = [real('longitude'), real('latitude')];
const TWO_POINTS = [real('p1_longitude'), real('p1_latitude'), real('p2_longitude'), real('p2_latitude')];
/** A parent's or children's default resolution: the cell's own level, one up or one down. */
const levelPlus = (delta: number) => (given: Sql[]) => sql`(kql_geo_h3cell_level(${given[0] as Sql}) + ${int(delta)})`;

const SPECS: GeoSpec[] = [
  {
    name: 'geo_point_to_geohash',
    params: [...POINT, long('accuracy', byDefault(5))],
    returns: 'string',
    describe: 'string: the geohash of accuracy 1..18 (default 5); "" when invalid',
  },
  {
    name: 'geo_geohash_to_central_point',
    params: [text('geohash')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point at the centre of the geohash rectangle; null when invalid',
  },
  {
    name: 'geo_geohash_to_polygon',
    params: [text('geohash')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON polygon of the geohash rectangle; null when invalid',
  },
  {
    name: 'geo_geohash_neighbors',
    params: [text('geohash')],
    returns: 'dynamic',
    describe: 'dynamic: the array of the up to 8 neighbouring geohashes; null when invalid',
  },
  {
    name: 'geo_point_to_s2cell',
    params: [...POINT, long('level', byDefault(11))],
    returns: 'string',
    describe: 'string: the S2 cell token of level 0..30 (default 11); "" when invalid',
  },
  {
    name: 'geo_s2cell_to_central_point',
    params: [text('s2cell')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point at the cell centre; null when invalid',
  },
  {
    name: 'geo_s2cell_to_polygon',
    params: [text('s2cell')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON polygon of the cell (geodesic edges); null when invalid',
  },
  {
    name: 'geo_s2cell_neighbors',
    params: [text('s2cell')],
    returns: 'dynamic',
    describe: 'dynamic: the array of the 8 neighbouring cell tokens of the same level; null when invalid',
  },
  {
    name: 'geo_point_to_h3cell',
    params: [...POINT, long('resolution', byDefault(6))],
    returns: 'string',
    describe: 'string: the H3 cell of resolution 0..15 (default 6); "" when invalid',
  },
  {
    name: 'geo_h3cell_to_central_point',
    params: [text('h3cell')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point at the cell centre; null when invalid',
  },
  {
    name: 'geo_h3cell_to_polygon',
    params: [text('h3cell')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON polygon of the cell; null when invalid',
  },
  {
    name: 'geo_h3cell_neighbors',
    params: [text('h3cell')],
    returns: 'dynamic',
    describe: 'dynamic: the array of neighbouring cells (6, or 5 around a pentagon); null when invalid',
  },
  {
    name: 'geo_h3cell_level',
    params: [text('h3cell')],
    returns: 'long',
    int32: true,
    describe: 'int: the resolution 0..15; null when invalid',
  },
  {
    name: 'geo_h3cell_parent',
    params: [text('h3cell'), long('resolution', levelPlus(-1))],
    returns: 'string',
    describe: 'string: the parent at resolution 0..14 (default one up); "" when invalid or finer than the cell',
  },
  {
    name: 'geo_h3cell_children',
    params: [text('h3cell'), long('resolution', levelPlus(1))],
    returns: 'dynamic',
    describe: 'dynamic: the children at resolution 1..15, at most 5 levels down (default one down); null when invalid',
  },
  {
    name: 'geo_h3cell_rings',
    params: [text('h3cell'), long('distance')],
    returns: 'dynamic',
    describe: 'dynamic: the array of rings 0..distance (0..142), each an array of cells; null when invalid',
  },
  {
    name: 'geo_distance_2points',
    params: TWO_POINTS,
    returns: 'real',
    describe: 'real: the great-circle distance in metres; null when invalid',
  },
  {
    name: 'geo_point_in_circle',
    params: [real('p_longitude'), real('p_latitude'), real('pc_longitude'), real('pc_latitude'), real('c_radius')],
    returns: 'bool',
    describe: 'bool: the point lies in the spherical cap (radius in metres); null when invalid',
  },
  {
    name: 'geo_azimuth',
    params: TWO_POINTS,
    returns: 'real',
    describe: 'real: radians clockwise from north, in [0, 2π); null when invalid, equal or antipodal',
  },
  {
    name: 'geo_angle',
    params: [...TWO_POINTS, real('p3_longitude'), real('p3_latitude')],
    returns: 'real',
    describe: 'real: the clockwise angle in radians at point 2 from [p2, p1] to [p2, p3], in [0, 2π); null when invalid',
  },
  {
    name: 'geo_point_in_polygon',
    params: [...POINT, shape('polygon')],
    returns: 'bool',
    describe: 'bool: the (multi)polygon contains the point; null when invalid',
  },
  {
    name: 'geo_distance_point_to_polygon',
    params: [...POINT, shape('polygon')],
    returns: 'real',
    describe: 'real: metres to the (multi)polygon, 0 inside; null when invalid',
  },
  {
    name: 'geo_distance_point_to_line',
    params: [...POINT, shape('lineString')],
    returns: 'real',
    describe: 'real: metres to the nearest point of the (multi)line; null when invalid',
  },
  {
    name: 'geo_polygon_area',
    params: [shape('polygon')],
    returns: 'real',
    describe: 'real: the area in square metres; null when invalid',
  },
  {
    name: 'geo_polygon_perimeter',
    params: [shape('polygon')],
    returns: 'real',
    describe: 'real: the length of all rings in metres; null when invalid',
  },
  {
    name: 'geo_line_length',
    params: [shape('lineString')],
    returns: 'real',
    describe: 'real: the total length in metres; null when invalid',
  },
  {
    name: 'geo_intersects_2lines',
    params: [shape('lineString1'), shape('lineString2')],
    returns: 'bool',
    describe: 'bool: the (multi)lines touch or cross; null when invalid',
  },
  {
    name: 'geo_intersects_2polygons',
    params: [shape('polygon1'), shape('polygon2')],
    returns: 'bool',
    describe: 'bool: the (multi)polygons overlap or their boundaries touch; null when invalid',
  },
  {
    name: 'geo_intersects_line_with_polygon',
    params: [shape('lineString'), shape('polygon')],
    returns: 'bool',
    describe: 'bool: the (multi)line enters or touches the (multi)polygon; null when invalid',
  },
  {
    name: 'geo_polygon_centroid',
    params: [shape('polygon')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point of S2’s area-weighted centroid; null when invalid',
  },
  {
    name: 'geo_line_centroid',
    params: [shape('lineString')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point of S2’s length-weighted centroid; null when invalid',
  },
  {
    name: 'geo_line_interpolate_point',
    params: [shape('lineString'), real('fraction')],
    returns: 'dynamic',
    describe: 'dynamic: the GeoJSON point at fraction 0..1 of a LineString’s length; null when invalid',
  },
  {
    name: 'geo_line_locate_point',
    params: [shape('lineString'), real('longitude'), real('latitude')],
    returns: 'real',
    describe: 'real: the fraction 0..1 of a LineString’s length up to its point nearest the coordinate; null when invalid',
  },
  {
    name: 'geo_polygon_to_s2cells',
    params: [shape('polygon'), long('level', byDefault(11))],
    returns: 'dynamic',
    describe:
      'dynamic: the S2 cell tokens of level 0..30 (default 11) covering the (multi)polygon, in cell order; null when invalid or past 65,536 cells',
  },
];

export const GEO_FUNCTIONS: readonly ScalarFunctionEntry[] = SPECS.map((spec) => ({
  kind: 'scalar',
  name: spec.name,
  signatures: [signature(spec)],
  returns: spec.describe,
  naming: { kind: 'none' },
  bind: bind(spec),
}));
