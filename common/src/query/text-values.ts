/**
 * Kusto's string functions that take text apart or format it where DuckDB has no equivalent
 * (issue 17, family 1): URLs, URL queries, file paths, one CSV record, byte sizes, form URL
 * encoding and the base64 array and GUID forms. Pure functions; they run as JS scalar functions
 * (kusto-udfs.ts), the same code on every worker and in the gateway's merge. `undefined` means
 * "does not parse" and becomes null.
 */

/** One decoded query component; `+` is a space. Undecodable text is kept as it is. */
function decodeComponent(s: string): string {
  const spaced = s.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** `k1=v1&k2=v2` (a leading `?` ignored) as a bag; a repeated key keeps its last value. */
function queryParameters(query: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of query.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decodeComponent(eq < 0 ? part : part.slice(0, eq));
    out[key] = eq < 0 ? '' : decodeComponent(part.slice(eq + 1));
  }
  return out;
}

/** parse_urlquery: `{"Query Parameters": {…}}`. */
export function parseUrlQuery(query: string): Record<string, unknown> {
  return { 'Query Parameters': queryParameters(query) };
}

// RFC 3986 appendix B, with the authority split into user info, host and port.
const URL_PATTERN =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^:@/?#]*)(?::([^@/?#]*))?@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

/**
 * parse_url: the parts of an absolute URL (`scheme://…`), each a string ("" when absent), and
 * the query as a bag; an empty bag when the text is not an absolute URL.
 */
export function parseUrl(url: string): Record<string, unknown> {
  const m = URL_PATTERN.exec(url);
  if (!m) return {};
  return {
    Scheme: m[1] ?? '',
    Host: m[4] ?? '',
    Port: m[5] ?? '',
    Path: m[6] ?? '',
    Username: m[2] ?? '',
    Password: m[3] ?? '',
    'Query Parameters': queryParameters(m[7] ?? ''),
    Fragment: m[8] ?? '',
  };
}

/**
 * parse_path: Scheme, RootPath (a drive such as `C:`), DirectoryPath, DirectoryName, Filename,
 * Extension and AlternateDataStreamName (after a `:` in the file name), for both kinds of slash,
 * `scheme://` prefixes, shares (`\\server\…`) and long paths (`\\?\C:\…`).
 */
export function parsePath(path: string): Record<string, string> {
  let rest = path;
  let scheme = '';
  const s = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(rest);
  if (s && (s[1] as string).length > 1) {
    scheme = s[1] as string;
    rest = rest.slice(s[0].length);
  }
  const long = rest.startsWith('\\\\?\\') ? '\\\\?\\' : '';
  const body = rest.slice(long.length);
  const drive = /^[A-Za-z]:/.exec(body)?.[0] ?? '';
  const cut = Math.max(rest.lastIndexOf('/'), rest.lastIndexOf('\\'));
  const directoryPath = cut < 0 ? '' : rest.slice(0, cut);
  let filename = cut < 0 ? rest : rest.slice(cut + 1);
  if (cut < 0 && drive !== '' && filename.startsWith(drive)) filename = filename.slice(drive.length);
  let stream = '';
  const colon = filename.indexOf(':');
  if (colon >= 0) {
    stream = filename.slice(colon + 1);
    filename = filename.slice(0, colon);
  }
  const dirCut = Math.max(directoryPath.lastIndexOf('/'), directoryPath.lastIndexOf('\\'));
  const directoryName = dirCut < 0 ? (directoryPath === drive ? '' : directoryPath) : directoryPath.slice(dirCut + 1);
  const dot = filename.lastIndexOf('.');
  return {
    Scheme: scheme,
    RootPath: drive,
    DirectoryPath: directoryPath,
    DirectoryName: directoryName,
    Filename: filename,
    Extension: dot < 0 ? '' : filename.slice(dot + 1),
    AlternateDataStreamName: stream,
  };
}

/**
 * parse_csv: the fields of the first record. A field in double quotes may hold commas, line
 * breaks and doubled quotes; an unquoted line break ends the record.
 */
export function parseCsv(text: string): string[] {
  const fields: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else field += c;
      i++;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') break;
    else field += c;
    i++;
  }
  fields.push(field);
  return fields;
}

const BYTE_UNITS = ['Bytes', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'];

/** format_bytes: the size in the given unit (or the largest whose value is at least 1), base 1024, `precision` decimals. */
export function formatBytes(size: number, precision: number, units: string): string | undefined {
  if (!Number.isFinite(size) || precision < 0 || precision > 100) return undefined;
  let unit = BYTE_UNITS.findIndex((u) => u.toLowerCase() === units.toLowerCase());
  if (units !== '' && unit < 0) return undefined;
  if (unit < 0) {
    unit = 0;
    while (unit < BYTE_UNITS.length - 1 && Math.abs(size) >= 1024 ** (unit + 1)) unit++;
  }
  return `${(size / 1024 ** unit).toFixed(precision)} ${BYTE_UNITS[unit]}`;
}

/** url_encode: form encoding (.NET HttpUtility.UrlEncode): a space as `+`, other bytes but A-Z a-z 0-9 - _ . ! * ( ) as %xx (lower-case hex). */
export function urlEncodeForm(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.!*()]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** base64_encode_fromarray: the base64 of an array of bytes (0-255); anything else does not encode. */
export function base64FromArray(array: unknown): string | undefined {
  if (!Array.isArray(array) || !array.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return undefined;
  return Buffer.from(array as number[]).toString('base64');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** base64_decode_toarray: the bytes of base64 text as an array of numbers. */
export function base64ToArray(text: string): number[] | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  return [...Buffer.from(text, 'base64')];
}

/**
 * A GUID's 16 bytes in .NET's order (Guid.ToByteArray, which Kusto's base64 GUID forms use): the
 * first three groups little-endian, the last two as written.
 */
function guidBytes(guid: string): Buffer | undefined {
  const hex = guid.replaceAll('-', '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return undefined;
  const b = Buffer.from(hex, 'hex');
  return Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]);
}

export function base64FromGuid(guid: string): string | undefined {
  return guidBytes(guid)?.toString('base64');
}

export function base64ToGuid(text: string): string | undefined {
  const bytes = base64ToArray(text);
  if (bytes?.length !== 16) return undefined;
  const b = Buffer.from(bytes);
  const hex = Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
