/**
 * The one spelling of an identifier. Base64url text whose length is not a
 * multiple of four leaves bits unused in its last character (4 of them for
 * 16 bytes in 22 characters): decoders ignore them, so 16 spellings would
 * decode to the same bytes. An id is accepted only as the server wrote it,
 * so that an id never issued never resolves to something. Every binary id
 * read from a client goes through here.
 */
const BASE64URL_TEXT = /^[A-Za-z0-9_-]*$/;

/** The bytes of `text` if it is the canonical base64url spelling of exactly `bytes` bytes, else null. */
export function decodeCanonicalBase64url(text: string, bytes: number): Buffer | null {
  if (text.length !== Math.ceil((bytes * 4) / 3) || !BASE64URL_TEXT.test(text)) return null;
  const decoded = Buffer.from(text, 'base64url');
  if (decoded.length !== bytes || decoded.toString('base64url') !== text) return null;
  return decoded;
}
