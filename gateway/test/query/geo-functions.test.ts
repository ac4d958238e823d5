/**
 * Geospatial functions (issue 17, family 7). Expected values come from other paths than the
 * engine's libraries: nodes2ts (another S2 port) for S2 cells, ngeohash and a geohash encoder
 * written here for geohashes, haversine and spherical-trigonometry formulas written here for
 * distances, bearings and areas (on Kusto's sphere of 6,371,010 m), and for H3 (one JS
 * implementation exists) Kusto's documented answers plus invariants of the cell index. `print`
 * runs in the gateway's merge database; queries over Logs run on one worker and on three, and
 * the summarize-then-extend query runs them in the merge.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import ngeohash from 'ngeohash';
import { S2Cell, S2CellId, S2LatLng } from 'nodes2ts';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

const R = 6371010;
const RAD = Math.PI / 180;

/** Haversine great-circle distance in metres. */
function haversine(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const [p1, p2, dl] = [lat1 * RAD, lat2 * RAD, (lng2 - lng1) * RAD];
  const h = Math.sin((p2 - p1) / 2) ** 2 + Math.cos(p1) * Math.cos(p2) * Math.sin(dl / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(h));
}

/** Initial bearing in radians clockwise from north, [0, 2π). */
function bearing(lng1: number, lat1: number, lng2: number, lat2: number): number {
  const [p1, p2, dl] = [lat1 * RAD, lat2 * RAD, (lng2 - lng1) * RAD];
  const b = Math.atan2(Math.sin(dl) * Math.cos(p2), Math.cos(p1) * Math.sin(p2) - Math.sin(p1) * Math.cos(p2) * Math.cos(dl));
  return b < 0 ? b + 2 * Math.PI : b;
}

/** Geohash by bisection, the standard convention (a value on a split goes to the upper half). */
function geohash(lng: number, lat: number, length: number): string {
  const alphabet = '0123456789bcdefghjkmnpqrstuvwxyz';
  const lo = [-180, -90];
  const hi = [180, 90];
  const v = [lng, lat];
  let out = '';
  let bit = 0;
  let ch = 0;
  let even = true;
  while (out.length < length) {
    const k = even ? 0 : 1;
    const mid = ((lo[k] as number) + (hi[k] as number)) / 2;
    ch <<= 1;
    if ((v[k] as number) >= mid) {
      ch |= 1;
      lo[k] = mid;
    } else hi[k] = mid;
    even = !even;
    if (++bit === 5) {
      out += alphabet[ch];
      bit = 0;
      ch = 0;
    }
  }
  return out;
}

function close(actual: unknown, expected: number, relative = 1e-9, what = ''): void {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)} is not a number`);
  const tolerance = Math.max(Math.abs(expected) * relative, 1e-9);
  assert.ok(Math.abs((actual as number) - expected) <= tolerance, `${what}: ${actual} is not ${expected}`);
}

const s2Token = (lng: number, lat: number, level: number) =>
  S2CellId.fromPoint(S2LatLng.fromDegrees(lat, lng).toPoint()).parentL(level).toToken();
const s2Degrees = (p: ReturnType<S2CellId['toPoint']>) => {
  const ll = S2LatLng.fromPoint(p);
  return [ll.lngDegrees, ll.latDegrees];
};

describe('geospatial functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('geohash: points to cells, centres, rectangles and neighbours; invalid input gives "" or null', async () => {
    const r = await one(`print
      a = geo_point_to_geohash(13.4050, 52.5200, 9), b = geo_point_to_geohash(-58.3816, -34.6037), c = geo_point_to_geohash(0, 0, 18),
      d = geo_point_to_geohash(180, 90, 4), e = geo_point_to_geohash(181, 0), f = geo_point_to_geohash(0, -91), g = geo_point_to_geohash(1, 1, 0),
      h = geo_point_to_geohash(1, 1, 19), i = geo_point_to_geohash(1, 1, long(null)), j = geo_point_to_geohash(real(null), 1),
      p = geo_geohash_to_central_point("u33dc0"), q = geo_geohash_to_polygon("u33dc0"), n = geo_geohash_neighbors("u33dc0"),
      x1 = geo_geohash_to_central_point("a"), x2 = geo_geohash_to_polygon(""), x3 = geo_geohash_neighbors("u33dc0u33dc0u33dc0u"), x4 = geo_geohash_to_central_point(tostring(long(null)))`);
    assert.equal(r.a, geohash(13.405, 52.52, 9));
    assert.equal(r.a, ngeohash.encode(52.52, 13.405, 9));
    assert.equal(r.b, ngeohash.encode(-34.6037, -58.3816, 5));
    // On the splits the standard convention takes the upper half: (0, 0) is "s000…".
    assert.equal(r.c, `s${'0'.repeat(17)}`);
    assert.equal(r.d, 'zzzz');
    for (const k of ['e', 'f', 'g', 'h', 'i', 'j']) assert.equal(r[k], '', k);
    const [s, w, nn, e] = ngeohash.decode_bbox('u33dc0');
    assert.deepEqual(r.p, { type: 'Point', coordinates: [(w + e) / 2, (s + nn) / 2] });
    assert.deepEqual(r.q, {
      type: 'Polygon',
      coordinates: [
        [
          [w, s],
          [e, s],
          [e, nn],
          [w, nn],
          [w, s],
        ],
      ],
    });
    assert.deepEqual([...(r.n as string[])].sort(), [...ngeohash.neighbors('u33dc0')].sort());
    assert.deepEqual([r.x1, r.x2, r.x3, r.x4], [null, null, null, null]);
  });

  it('geohash neighbours wrap across the antimeridian and stop at the poles', async () => {
    const west = geohash(-179.99, 10, 3);
    const north = geohash(10, 89.99, 3);
    const r = await one(`print w = geo_geohash_neighbors("${west}"), n = geo_geohash_neighbors("${north}")`);
    const wrapped = geohash(179.99, 10, 3);
    assert.ok((r.w as string[]).includes(wrapped), `${wrapped} in ${JSON.stringify(r.w)}`);
    assert.equal((r.w as string[]).length, 8);
    // A cell on the pole has no neighbours north of it: west, east and the three south.
    assert.equal((r.n as string[]).length, 5);
    for (const h of r.n as string[]) assert.ok(ngeohash.decode(h).latitude < ngeohash.decode(north).latitude + 1e-9);
  });

  it('S2 cells agree with nodes2ts; neighbours of a documented cell match Kusto’s set', async () => {
    const r = await one(`print
      a = geo_point_to_s2cell(2.2945, 48.8584, 15), b = geo_point_to_s2cell(-43.2105, -22.9519), c = geo_point_to_s2cell(180, -90, 30), d = geo_point_to_s2cell(10, 10, 0),
      e = geo_point_to_s2cell(10, 10, 31), f = geo_point_to_s2cell(-180.5, 10), g = geo_point_to_s2cell(10, 10, long(null)),
      p = geo_s2cell_to_central_point("47a1c"), q = geo_s2cell_to_polygon("47a1c"), n = geo_s2cell_neighbors("89c259"),
      x1 = geo_s2cell_to_central_point("a"), x2 = geo_s2cell_to_polygon("zz"), x3 = geo_s2cell_neighbors("")`);
    assert.equal(r.a, s2Token(2.2945, 48.8584, 15));
    assert.equal(r.b, s2Token(-43.2105, -22.9519, 11));
    assert.equal(r.c, s2Token(180, -90, 30));
    assert.equal(r.d, s2Token(10, 10, 0));
    for (const k of ['e', 'f', 'g']) assert.equal(r[k], '', k);
    const id = S2CellId.fromToken('47a1c');
    const center = s2Degrees(id.toPoint());
    const p = r.p as { coordinates: number[] };
    close(p.coordinates[0], center[0] as number, 1e-12, 'centre longitude');
    close(p.coordinates[1], center[1] as number, 1e-12, 'centre latitude');
    const cell = new S2Cell(id);
    const ring = (r.q as { coordinates: number[][][] }).coordinates[0] as number[][];
    assert.equal(ring.length, 5);
    assert.deepEqual(ring[4], ring[0]);
    for (let k = 0; k < 4; k++) {
      const v = s2Degrees(cell.getVertex(k));
      close(ring[k]?.[0], v[0] as number, 1e-12, `vertex ${k}`);
      close(ring[k]?.[1], v[1] as number, 1e-12, `vertex ${k}`);
    }
    // Kusto's documented neighbours of 89c259 (compared as a set: the order is S2's, see docs/query.md).
    assert.deepEqual([...(r.n as string[])].sort(), [
      '89c251',
      '89c257',
      '89c25b',
      '89c25d',
      '89c25f',
      '89c2f5',
      '89c2f7',
      '89c2f9',
    ]);
    const nodes = S2CellId.fromToken('89c259')
      .getAllNeighbors(S2CellId.fromToken('89c259').level())
      .map((c) => c.toToken());
    assert.deepEqual([...(r.n as string[])].sort(), [...new Set(nodes)].sort());
    assert.deepEqual([r.x1, r.x2, r.x3], [null, null, null]);
  });

  it('H3 cells: Kusto’s documented answers, and the index’s own invariants', async () => {
    const r = await one(`print
      a = geo_point_to_h3cell(-74.04450446039874, 40.689250859314974, 6), b = geo_point_to_h3cell(139.6917, 35.6895, 9), c = geo_point_to_h3cell(1, 1, 16),
      d = geo_point_to_h3cell(300, 1), e = geo_point_to_h3cell(1, 1, long(null)),
      n = geo_h3cell_neighbors("862a1072fffffff"), p1 = geo_h3cell_parent("862a1072fffffff"), p2 = geo_h3cell_parent("862a1072fffffff", 1),
      p3 = geo_h3cell_parent("862a1072fffffff", 7), p4 = geo_h3cell_parent("123"), ch = geo_h3cell_children("862a1072fffffff"),
      c3 = array_length(geo_h3cell_children("862a1072fffffff", 9)), c6 = geo_h3cell_children("862a1072fffffff", 12), l = geo_h3cell_level("862a1072fffffff"),
      l0 = geo_h3cell_level("8001fffffffffff"), lx = geo_h3cell_level("abc"), rings = geo_h3cell_rings("861f8894fffffff", 2), rx = geo_h3cell_rings("861f8894fffffff", 143),
      cp = geo_h3cell_to_central_point("862a1072fffffff"), poly = geo_h3cell_to_polygon("862a1072fffffff"), px = geo_h3cell_to_polygon("862a1072ffffff0")`);
    assert.equal(r.a, '862a1072fffffff');
    // The resolution is the index's second hex digit.
    assert.equal(Number.parseInt((r.b as string)[1] as string, 16), 9);
    for (const k of ['c', 'd', 'e']) assert.equal(r[k], '', k);
    assert.deepEqual([...(r.n as string[])].sort(), [
      '862a100d7ffffff',
      '862a100dfffffff',
      '862a10707ffffff',
      '862a1070fffffff',
      '862a10727ffffff',
      '862a10777ffffff',
    ]);
    assert.equal(r.p1, '852a1073fffffff');
    assert.equal(r.p2, '812a3ffffffffff');
    assert.equal(r.p3, '');
    assert.equal(r.p4, '');
    assert.deepEqual(r.ch, [
      '872a10728ffffff',
      '872a10729ffffff',
      '872a1072affffff',
      '872a1072bffffff',
      '872a1072cffffff',
      '872a1072dffffff',
      '872a1072effffff',
    ]);
    assert.equal(r.c3, 343);
    assert.equal(r.c6, null);
    assert.deepEqual([r.l, r.l0, r.lx], [6, 0, null]);
    const rings = r.rings as string[][];
    assert.deepEqual(
      rings.map((x) => x.length),
      [1, 6, 12],
    );
    assert.deepEqual(rings[0], ['861f8894fffffff']);
    assert.equal(r.rx, null);
    const ring = (r.poly as { coordinates: number[][][] }).coordinates[0] as number[][];
    assert.equal(ring.length, 7);
    assert.deepEqual(ring[6], ring[0]);
    // Kusto's first vertex of this cell, and the centre lies within its vertices' box.
    close(ring[0]?.[0], -74.0022744646159, 1e-12);
    close(ring[0]?.[1], 40.735376026215022, 1e-12);
    const [cx, cy] = (r.cp as { coordinates: [number, number] }).coordinates;
    assert.ok(cx > Math.min(...ring.map((v) => v[0] as number)) && cx < Math.max(...ring.map((v) => v[0] as number)));
    assert.ok(cy > Math.min(...ring.map((v) => v[1] as number)) && cy < Math.max(...ring.map((v) => v[1] as number)));
    assert.equal(r.px, null);
  });

  it('distances, circles, azimuths and angles on Kusto’s sphere', async () => {
    const r = await one(`print
      d1 = geo_distance_2points(2.3522, 48.8566, -0.1276, 51.5072), d2 = geo_distance_2points(179.5, 0, -179.5, 0), d3 = geo_distance_2points(0, 90, 123, 90),
      d4 = geo_distance_2points(-122.407628, 47.578557, -118.275287, 34.019056), d5 = geo_distance_2points(181, 0, 0, 0), d6 = geo_distance_2points(0, 0, 180, 0),
      c1 = geo_point_in_circle(2.3522, 48.8566, -0.1276, 51.5072, 344000), c2 = geo_point_in_circle(2.3522, 48.8566, -0.1276, 51.5072, 343000),
      c3 = geo_point_in_circle(1, 1, 1, 1, 0), c4 = geo_point_in_circle(1, 1, 1, 1, -1), c5 = geo_point_in_circle(1, 95, 1, 1, 10),
      z1 = geo_azimuth(0, 0, 1, 0), z2 = geo_azimuth(0, 0, 0, 1), z3 = geo_azimuth(0, 0, 0, -1), z4 = geo_azimuth(0, 0, -1, 0),
      z5 = geo_azimuth(2.3522, 48.8566, -0.1276, 51.5072), z6 = geo_azimuth(5, 10, 5, 10), z7 = geo_azimuth(0, 0, 180, 0), z8 = geo_azimuth(5, 10, 10, -40),
      a1 = geo_angle(0, 1, 0, 0, 1, 0), a2 = geo_angle(1, 0, 0, 0, 0, 1), a3 = geo_angle(-0.1276, 51.5072, 2.3522, 48.8566, 13.405, 52.52), a4 = geo_angle(0, 10, 0, 10, 3, -10)`);
    close(r.d1, haversine(2.3522, 48.8566, -0.1276, 51.5072), 1e-9, 'Paris–London');
    close(r.d2, R * RAD, 1e-9, 'across the antimeridian');
    close(r.d3, 0, 1e-9, 'at the pole');
    // Kusto's documented Seattle–Los Angeles distance fixes the radius.
    close(r.d4, 1546754.35197381, 1e-12, 'documented');
    assert.equal(r.d5, null);
    close(r.d6, Math.PI * R, 1e-12, 'antipodes');
    assert.deepEqual([r.c1, r.c2, r.c3, r.c4, r.c5], [true, false, true, null, null]);
    close(r.z1, Math.PI / 2, 1e-12, 'east');
    close(r.z2, 0, 1e-12, 'north');
    close(r.z3, Math.PI, 1e-12, 'south');
    close(r.z4, (3 * Math.PI) / 2, 1e-12, 'west');
    close(r.z5, bearing(2.3522, 48.8566, -0.1276, 51.5072), 1e-9, 'Paris→London');
    assert.deepEqual([r.z6, r.z7], [null, null]);
    close(r.z8, 3.05459939796449, 1e-12, 'documented azimuth');
    close(r.a1, Math.PI / 2, 1e-12, 'north to east');
    close(r.a2, (3 * Math.PI) / 2, 1e-12, 'east to north');
    const a3 = bearing(2.3522, 48.8566, 13.405, 52.52) - bearing(2.3522, 48.8566, -0.1276, 51.5072);
    close(r.a3, a3 < 0 ? a3 + 2 * Math.PI : a3, 1e-9, 'London–Paris–Berlin');
    assert.equal(r.a4, null);
  });

  it('polygons and lines: containment, distances, area, perimeter, length', async () => {
    const square = '{"type":"Polygon","coordinates":[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]]]}';
    const clockwise = '{"type":"Polygon","coordinates":[[[-1,-1],[-1,1],[1,1],[1,-1],[-1,-1]]]}';
    const holed =
      '{"type":"Polygon","coordinates":[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]],[[-0.5,-0.5],[-0.5,0.5],[0.5,0.5],[0.5,-0.5],[-0.5,-0.5]]]}';
    const multi =
      '{"type":"MultiPolygon","coordinates":[[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]]],[[[10,10],[11,10],[11,11],[10,10]]]]}';
    const repeated = '{"type":"Polygon","coordinates":[[[0,0],[10,10],[10,10],[0,0]]]}';
    const open = '{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}';
    const equator = '{"type":"LineString","coordinates":[[-10,0],[10,0]]}';
    const multiline = '{"type":"MultiLineString","coordinates":[[[-10,0],[10,0]],[[0,20],[0,30]]]}';
    const r = await one(`let sq = dynamic(${square}); print
      i1 = geo_point_in_polygon(0, 0, sq), i2 = geo_point_in_polygon(2, 0, sq), i3 = geo_point_in_polygon(0, 0, dynamic(${clockwise})),
      i4 = geo_point_in_polygon(0, 0, dynamic(${holed})), i5 = geo_point_in_polygon(0.75, 0, dynamic(${holed})), i6 = geo_point_in_polygon(10.6, 10.3, dynamic(${multi})),
      i7 = geo_point_in_polygon(0, 0, dynamic(${repeated})), i8 = geo_point_in_polygon(0, 0, dynamic(${open})), i9 = geo_point_in_polygon(0, 0, dynamic({"type":"Point","coordinates":[0,0]})),
      p1 = geo_distance_point_to_polygon(0, 0, sq), p2 = geo_distance_point_to_polygon(0, 3, sq), p3 = geo_distance_point_to_polygon(500, 1, sq),
      l1 = geo_distance_point_to_line(0, 5, dynamic(${equator})), l2 = geo_distance_point_to_line(20, 0, dynamic(${equator})), l3 = geo_distance_point_to_line(0, 34, dynamic(${multiline})),
      l4 = geo_distance_point_to_line(0, 0, dynamic({"type":"LineString","coordinates":[[1,1]]})),
      ar = geo_polygon_area(sq), ah = geo_polygon_area(dynamic(${holed})), pe = geo_polygon_perimeter(sq), ln = geo_line_length(dynamic(${multiline})), lx = geo_line_length(sq)`);
    assert.deepEqual(
      [r.i1, r.i2, r.i3, r.i4, r.i5, r.i6, r.i7, r.i8, r.i9],
      [true, false, true, false, true, true, null, null, null],
    );
    assert.equal(r.p1, 0);
    // The square's top edge is a great circle: at longitude 0 it reaches latitude atan(tan 1° / cos 1°).
    const crest = Math.atan(Math.tan(RAD) / Math.cos(RAD));
    close(r.p2, (3 * RAD - crest) * R, 1e-9, 'to the top edge');
    assert.equal(r.p3, null);
    close(r.l1, 5 * RAD * R, 1e-9, 'to the equator');
    close(r.l2, 10 * RAD * R, 1e-9, 'to the end point');
    close(r.l3, 4 * RAD * R, 1e-9, 'to the second line');
    assert.equal(r.l4, null);
    // Girard: a geodesic polygon's area is its spherical excess times R².
    const corners = [
      [-1, -1],
      [1, -1],
      [1, 1],
      [-1, 1],
    ];
    const excess = (pts: number[][]) => {
      let sum = 0;
      for (let k = 0; k < pts.length; k++) {
        const [prev, cur, next] = [pts[(k + pts.length - 1) % pts.length], pts[k], pts[(k + 1) % pts.length]] as number[][];
        const toPrev = bearing(cur?.[0] as number, cur?.[1] as number, prev?.[0] as number, prev?.[1] as number);
        const toNext = bearing(cur?.[0] as number, cur?.[1] as number, next?.[0] as number, next?.[1] as number);
        let interior = toNext - toPrev;
        if (interior < 0) interior += 2 * Math.PI;
        sum += interior;
      }
      return sum - (pts.length - 2) * Math.PI;
    };
    close(r.ar, excess(corners) * R * R, 1e-9, 'area');
    const inner = corners.map(([x, y]) => [(x as number) / 2, (y as number) / 2]);
    close(r.ah, (excess(corners) - excess(inner)) * R * R, 1e-9, 'area with a hole');
    let perimeter = 0;
    for (let k = 0; k < 4; k++) {
      const [a, b] = [corners[k], corners[(k + 1) % 4]] as number[][];
      perimeter += haversine(a?.[0] as number, a?.[1] as number, b?.[0] as number, b?.[1] as number);
    }
    close(r.pe, perimeter, 1e-9, 'perimeter');
    close(r.ln, 30 * RAD * R, 1e-9, 'line length');
    assert.equal(r.lx, null);
    // A multipolygon measures as the union of its polygons: disjoint ones add up; overlapping or
    // edge-sharing ones measure as their union.
    const farSquare = '[[[20,20],[22,20],[22,22],[20,22],[20,20]]]';
    const twoSquares = `{"type":"MultiPolygon","coordinates":[[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]]],${farSquare}]}`;
    const m = await one(
      `print a = geo_polygon_area(dynamic(${twoSquares})), one = geo_polygon_area(dynamic({"type":"Polygon","coordinates":${farSquare}})), d = geo_distance_point_to_polygon(21, 21, dynamic(${twoSquares}))`,
    );
    close(m.a, (r.ar as number) + (m.one as number), 1e-12, 'disjoint union');
    assert.equal(m.d, 0);
    const overlapping =
      '{"type":"MultiPolygon","coordinates":[[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]]],[[[0,0],[2,0],[2,2],[0,2],[0,0]]]]}';
    const sharing =
      '{"type":"MultiPolygon","coordinates":[[[[-1,-1],[1,-1],[1,1],[-1,1],[-1,-1]]],[[[1,-1],[3,-1],[3,1],[1,1],[1,-1]]]]}';
    const u = await one(`print
      a = geo_polygon_area(dynamic(${overlapping})), b = geo_polygon_area(dynamic({"type":"Polygon","coordinates":[[[0,0],[2,0],[2,2],[0,2],[0,0]]]})),
      sa = geo_polygon_area(dynamic(${sharing})), sp = geo_polygon_perimeter(dynamic(${sharing})), sc = geo_polygon_centroid(dynamic(${sharing}))`);
    // The overlap of the two squares: the equator, the meridians 0 and 1, and the first square's top arc.
    const lens = [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, crest / RAD],
    ];
    close(u.a, (r.ar as number) + (u.b as number) - excess(lens) * R * R, 1e-9, 'overlapping union');
    close(u.sa, 2 * (r.ar as number), 1e-9, 'edge-sharing union');
    const outline = [
      [-1, -1],
      [1, -1],
      [3, -1],
      [3, 1],
      [1, 1],
      [-1, 1],
    ];
    let outer = 0;
    for (let k = 0; k < outline.length; k++) {
      const [a, b] = [outline[k], outline[(k + 1) % outline.length]] as number[][];
      outer += haversine(a?.[0] as number, a?.[1] as number, b?.[0] as number, b?.[1] as number);
    }
    close(u.sp, outer, 1e-9, 'perimeter of the union without the shared edge');
    close((u.sc as { coordinates: number[] }).coordinates[0], 1, 1e-9, 'centroid of the union');
    const spread =
      '{"type":"MultiPolygon","coordinates":[[[[-100,-1],[-80,-1],[-80,1],[-100,1],[-100,-1]]],[[[80,-1],[100,-1],[100,1],[80,1],[80,-1]]],[[[-90,-1],[-85,-1],[-85,1],[-90,1],[-90,-1]]]]}';
    await assert.rejects(
      run(`print geo_polygon_area(dynamic(${spread}))`),
      /geo_polygon_area: the polygons of this MultiPolygon overlap and do not fit in one hemisphere/,
    );
    const inside = await one(
      `print i = geo_point_in_polygon(1.5, 1.5, dynamic(${overlapping})), o = geo_point_in_polygon(5, 5, dynamic(${overlapping}))`,
    );
    assert.deepEqual(inside, { i: true, o: false });
    await assert.rejects(run('print geo_point_in_polygon(1, 1, "x")'), /polygon of 'geo_point_in_polygon' must be dynamic/);
    await assert.rejects(
      run('print geo_distance_2points("1", 1, 2, 2)'),
      /p1_longitude of 'geo_distance_2points' must be real or long/,
    );
    await assert.rejects(run('print geo_point_to_s2cell(1, 1, 2.5)'), /level of 'geo_point_to_s2cell' must be long/);
    await assert.rejects(run('print geo_polygon_buffer(dynamic(null), 1)'), /geo_polygon_buffer/);
  });

  it('intersection tests: closed shapes (touching counts), multi-shapes, invalid input', async () => {
    const line = (...pts: number[][]) => `dynamic({"type":"LineString","coordinates":${JSON.stringify(pts)}})`;
    const poly = (...pts: number[][]) => `dynamic({"type":"Polygon","coordinates":[${JSON.stringify([...pts, pts[0]])}]})`;
    const square = poly([0, 0], [2, 0], [2, 2], [0, 2]);
    const r = await one(`print
      l1 = geo_intersects_2lines(${line([0, 0], [2, 2])}, ${line([0, 2], [2, 0])}), l2 = geo_intersects_2lines(${line([0, 0], [1, 1])}, ${line([1, 1], [2, 0])}),
      l3 = geo_intersects_2lines(${line([0, 0], [2, 0])}, ${line([1, 0], [1, 1])}), l4 = geo_intersects_2lines(${line([0, 0], [1, 1])}, ${line([3, 3], [4, 0])}),
      l5 = geo_intersects_2lines(${line([0, 0], [1, 1])}, ${line([3, 3])}),
      l6 = geo_intersects_2lines(dynamic({"type":"MultiLineString","coordinates":[[[30,30],[31,31]],[[0,2],[2,0]]]}), ${line([0, 0], [2, 2])}),
      p1 = geo_intersects_2polygons(${square}, ${poly([1, 1], [3, 1], [3, 3], [1, 3])}), p2 = geo_intersects_2polygons(${square}, ${poly([2, 0], [4, 0], [4, 2], [2, 2])}),
      p3 = geo_intersects_2polygons(${square}, ${poly([0.5, 0.5], [1, 0.5], [1, 1])}), p4 = geo_intersects_2polygons(${square}, ${poly([5, 5], [6, 5], [6, 6])}),
      p5 = geo_intersects_2polygons(${square}, dynamic({"type":"Polygon"})),
      w1 = geo_intersects_line_with_polygon(${line([0.5, 0.5], [1.5, 1.5])}, ${square}), w2 = geo_intersects_line_with_polygon(${line([-1, 1], [3, 1])}, ${square}),
      w3 = geo_intersects_line_with_polygon(${line([5, 5], [6, 6])}, ${square}), w4 = geo_intersects_line_with_polygon(${line([5, 5])}, ${square})`);
    assert.deepEqual(r, {
      l1: true,
      l2: true,
      l3: true,
      l4: false,
      l5: null,
      l6: true,
      p1: true,
      p2: true,
      p3: true,
      p4: false,
      p5: null,
      w1: true,
      w2: true,
      w3: false,
      w4: null,
    });
  });

  it('centroids, and points along a line by fraction (S2’s interpolate/locate)', async () => {
    const equator = 'dynamic({"type":"LineString","coordinates":[[0,0],[10,0]]})';
    const meridian = 'dynamic({"type":"LineString","coordinates":[[0,0],[0,10]]})';
    const centralPark =
      'dynamic({"type":"Polygon","coordinates":[[[-73.9495,40.7969],[-73.95807266235352,40.80068603561921],[-73.98201942443848,40.76825672305777],[-73.97317886352539,40.76455136505513],[-73.9495,40.7969]]]})';
    const r = await one(`print
      c1 = geo_polygon_centroid(dynamic({"type":"Polygon","coordinates":[[[9,-1],[11,-1],[11,1],[9,1],[9,-1]]]})), c2 = geo_polygon_centroid(${centralPark}),
      c3 = geo_polygon_centroid(dynamic({"type":"Polygon","coordinates":[[[0,0],[10,10],[10,10],[0,0]]]})),
      k1 = geo_line_centroid(${equator}), k2 = geo_line_centroid(${meridian}), k3 = geo_line_centroid(dynamic({"type":"MultiLineString","coordinates":[[[0,0],[10,0]],[[20,0],[30,0]]]})),
      k4 = geo_line_centroid(dynamic({"type":"LineString","coordinates":[[1,1]]})),
      i1 = geo_line_interpolate_point(${equator}, 0.25), i2 = geo_line_interpolate_point(${meridian}, 0.5), i3 = geo_line_interpolate_point(${equator}, 0),
      i4 = geo_line_interpolate_point(${equator}, 1.5), i5 = geo_line_interpolate_point(dynamic({"type":"MultiLineString","coordinates":[[[0,0],[10,0]]]}), 0.5),
      f1 = geo_line_locate_point(${equator}, 3, 1), f2 = geo_line_locate_point(${equator}, 12, 0), f3 = geo_line_locate_point(${meridian}, 0, 2.5), f4 = geo_line_locate_point(${equator}, 3, 95)`);
    const xy = (v: unknown) => (v as { type: string; coordinates: [number, number] }).coordinates;
    // A shape symmetric about the equator and the meridian 10° has its centroid where they cross.
    close(xy(r.c1)[0], 10, 1e-12, 'centroid longitude');
    close(xy(r.c1)[1], 0, 1e-12, 'centroid latitude');
    // Kusto's documented centroid of the same Central Park polygon.
    close(xy(r.c2)[0], -73.965735689907618, 1e-12);
    close(xy(r.c2)[1], 40.782550538057812, 1e-12);
    assert.equal(r.c3, null);
    // A great-circle arc's centroid is its midpoint; two equal arcs weigh the same.
    assert.deepEqual((r.k1 as { type: string }).type, 'Point');
    close(xy(r.k1)[0], 5, 1e-12);
    close(xy(r.k1)[1], 0, 1e-12);
    close(xy(r.k2)[0], 0, 1e-12);
    close(xy(r.k2)[1], 5, 1e-12);
    close(xy(r.k3)[0], 15, 1e-12);
    assert.equal(r.k4, null);
    close(xy(r.i1)[0], 2.5, 1e-12);
    close(xy(r.i1)[1], 0, 1e-12);
    close(xy(r.i2)[1], 5, 1e-12);
    assert.deepEqual(xy(r.i3), [0, 0]);
    assert.deepEqual([r.i4, r.i5], [null, null]);
    // The nearest point to (3, 1) on the equator is (3, 0): 3 of the arc's 10 degrees.
    close(r.f1, 0.3, 1e-12);
    assert.equal(r.f2, 1);
    close(r.f3, 0.25, 1e-12);
    assert.equal(r.f4, null);
  });

  it('geo_polygon_to_s2cells: one level, covers every inside point, joins points to polygons; null past the limit', async () => {
    const square = 'dynamic({"type":"Polygon","coordinates":[[[10,10],[10.3,10],[10.3,10.2],[10,10.2],[10,10]]]})';
    const r =
      await one(`print c = geo_polygon_to_s2cells(${square}, 12), d = geo_polygon_to_s2cells(${square}), x1 = geo_polygon_to_s2cells(${square}, 31),
      x2 = geo_polygon_to_s2cells(dynamic({"type":"Polygon","coordinates":[[[0,0],[40,0],[40,40],[0,0]]]}), 30), x3 = geo_polygon_to_s2cells(dynamic({"type":"Polygon"}), 5)`);
    const cells = r.c as string[];
    assert.ok(cells.length > 0 && cells.length < 200, `${cells.length} cells`);
    for (const t of cells) assert.equal(S2CellId.fromToken(t).level(), 12, t);
    assert.deepEqual([...cells].sort(), cells.slice().sort(), 'distinct');
    for (const t of r.d as string[]) assert.equal(S2CellId.fromToken(t).level(), 11, t);
    // Every point inside lies in a covering cell (nodes2ts computes the point's cell).
    for (let i = 1; i < 10; i++)
      for (let j = 1; j < 10; j++) assert.ok(cells.includes(s2Token(10 + (0.3 * i) / 10, 10 + (0.2 * j) / 10, 12)), `${i},${j}`);
    assert.deepEqual([r.x1, r.x2, r.x3], [null, null, null]);
    const joined = await run(`let Areas = datatable(name:string, polygon:dynamic)[
        "a", dynamic({"type":"Polygon","coordinates":[[[10,10],[10.3,10],[10.3,10.2],[10,10.2],[10,10]]]}),
        "b", dynamic({"type":"Polygon","coordinates":[[[20,20],[20.1,20],[20.1,20.1],[20,20.1],[20,20]]]})];
      let Points = datatable(id:long, lng:real, lat:real)[1, 10.1, 10.1, 2, 20.05, 20.05, 3, 10.31, 10.1, 4, 0, 0];
      Areas | extend covering = geo_polygon_to_s2cells(polygon, 12) | mv-expand covering to typeof(string)
      | join kind=inner (Points | extend covering = geo_point_to_s2cell(lng, lat, 12)) on covering
      | where geo_point_in_polygon(lng, lat, polygon) | project name, id | order by id asc`);
    assert.deepEqual(joined.results, [
      { name: 'a', id: 1 },
      { name: 'b', id: 2 },
    ]);
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const r = await run(
      'Logs | project id, h = geo_point_to_geohash(ratio * 10, latencyMs / 100.0, 6), d = geo_distance_2points(ratio * 10, latencyMs / 100.0, 0, 0)',
    );
    const expected = LOGS.map((l) => {
      const ok = l.ratio !== null && l.latencyMs !== null && l.latencyMs / 100 <= 90 && l.latencyMs / 100 >= -90;
      const [x, y] = [(l.ratio ?? 0) * 10, (l.latencyMs ?? 0) / 100];
      return { id: l.id, h: ok ? geohash(x, y, 6) : '', d: ok ? haversine(x, y, 0, 0) : null };
    });
    type Row = { id: string; h: string; d: number | null };
    const byId = (rows: Row[]) => [...rows].sort((a, b) => a.id.localeCompare(b.id));
    const got = byId(r.results as Row[]);
    const want = byId(expected);
    assert.equal(got.length, want.length);
    for (const [k, row] of got.entries()) {
      const w = want[k] as Row;
      assert.equal(row.id, w.id);
      assert.equal(row.h, w.h, row.id);
      if (w.d === null) assert.equal(row.d, null);
      else close(row.d, w.d, 1e-9, row.id);
    }
    const merged = await run('Logs | summarize n = count() by level | extend cell = geo_point_to_s2cell(n, n / 2.0, 12)');
    const levels = [...new Set(LOGS.map((l) => l.level))];
    const expectedMerge = levels.map((level) => {
      const n = LOGS.filter((l) => l.level === level).length;
      return { level, n, cell: s2Token(n, n / 2, 12) };
    });
    assert.deepEqual(sortedJson(merged.results), sortedJson(expectedMerge));
  });

  it('property: distances, circles, geohashes and S2 tokens of random points agree with the independent paths', async function () {
    this.timeout(120_000);
    const lng = fc.double({ min: -180, max: 180, noNaN: true });
    const lat = fc.double({ min: -90, max: 90, noNaN: true });
    await fc.assert(
      fc.asyncProperty(
        lng,
        lat,
        lng,
        lat,
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 30 }),
        async (x1, y1, x2, y2, acc, level) => {
          const d = haversine(x1, y1, x2, y2);
          const r = await one(
            `print d = geo_distance_2points(${x1}, ${y1}, ${x2}, ${y2}), inside = geo_point_in_circle(${x1}, ${y1}, ${x2}, ${y2}, ${d * (1 + 1e-6) + 1e-3}),
            outside = geo_point_in_circle(${x1}, ${y1}, ${x2}, ${y2}, ${d * (1 - 1e-6) - 1e-3}), h = geo_point_to_geohash(${x1}, ${y1}, ${acc}), s = geo_point_to_s2cell(${x1}, ${y1}, ${level})`,
          );
          // Haversine loses precision near the antipodes; both are exact well inside that.
          // A micrometre at least: a longitude near ±180 is only exact to ~3e-9 m, and the two
          // formulas amplify that rounding differently (seed -1272138269: 2.86 m across the
          // antimeridian differed by 6e-9 m).
          const tolerance = Math.max(d * (d > 2e7 ? 1e-6 : 1e-9), 1e-6);
          assert.ok(Math.abs((r.d as number) - d) <= tolerance, `distance: ${r.d} is not ${d}`);
          assert.equal(r.inside, true);
          assert.equal(r.outside, d * (1 - 1e-6) - 1e-3 < 0 ? null : false);
          assert.equal(r.h, geohash(x1, y1, acc));
          assert.equal(r.s, s2Token(x1, y1, level));
        },
      ),
      { numRuns: 30 },
    );
  });
});
