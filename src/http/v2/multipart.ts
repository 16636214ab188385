/**
 * The text fields of a `multipart/form-data` body (RFC 7578), which is what
 * PHP's curl sends when CURLOPT_POSTFIELDS is an array instead of a string.
 * Only what a form post of plain fields needs: parts with a
 * `Content-Disposition: form-data; name="..."` header and a UTF-8 value.
 * File parts are refused: no API v2 action takes a file.
 */

export type MultipartResult = { ok: true; fields: [string, string][] } | { ok: false; message: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The boundary parameter of a multipart/form-data content type, or null. */
export function multipartBoundary(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  if (match === null) return null;
  return match[1] ?? match[2] ?? null;
}

/** Splits the body into its fields; at most `fieldsMax` of them. */
export function parseMultipart(body: Buffer, boundary: string, fieldsMax: number): MultipartResult {
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: [string, string][] = [];
  let at = body.indexOf(delimiter);
  if (at === -1) return { ok: false, message: 'The multipart body has no part with the declared boundary.' };
  for (;;) {
    at += delimiter.length;
    // "--" right after a delimiter closes the body.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return { ok: true, fields };
    if (!body.subarray(at, at + 2).equals(CRLF)) return { ok: false, message: 'The multipart body is malformed.' };
    const headersStart = at + 2;
    const headersEnd = body.indexOf(HEADER_END, headersStart);
    if (headersEnd === -1) return { ok: false, message: 'The multipart body is malformed.' };
    const next = body.indexOf(Buffer.concat([CRLF, delimiter]), headersEnd + 4);
    if (next === -1) return { ok: false, message: 'The multipart body ends before its closing boundary.' };
    const headers = body.subarray(headersStart, headersEnd).toString('latin1');
    const disposition = /^content-disposition:\s*form-data\s*;(.*)$/im.exec(headers);
    const name = disposition === null ? null : /(?:^|;)\s*name="([^"]*)"/i.exec(disposition[1]!);
    if (name === null || name === undefined) return { ok: false, message: 'Every multipart part needs Content-Disposition: form-data with a name.' };
    if (/(?:^|;)\s*filename\*?=/i.test(disposition![1]!)) return { ok: false, message: 'File uploads are not accepted; send the fields as text.' };
    if (fields.length === fieldsMax) return { ok: false, message: `Send at most ${fieldsMax} fields.` };
    let value: string;
    try {
      value = utf8.decode(body.subarray(headersEnd + 4, next));
    } catch {
      return { ok: false, message: 'The request body is not valid UTF-8.' };
    }
    fields.push([name[1]!, value]);
    at = next + 2;
  }
}
