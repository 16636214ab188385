/**
 * One commit-log record's frame, byte by byte: the magic "CLG1", the
 * payload's length, the position, and a CRC-32 over the first 16 header
 * bytes and the payload, computed here with node:zlib. A record is read
 * back only when every part of its frame holds.
 */
import { serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeEntries, decodeRecordAt, encodeRecord, RECORD_HEADER_BYTES, type WalEntry } from '../../src/wal/index.js';
import { RECORD_PAYLOAD_BYTES_MAX } from '../../src/wal/limits.js';

const entries: WalEntry[] = [{ events: [{ type: 'credits.adjusted', atMs: 5, account: 1, amount: 2, reason: 'test', balance: 2 }], puts: [{ table: 'wallets', key: 1, value: { id: 1, credits: 2 } }] }];

/** A frame built field by field: `magic`, the payload's length (or `length`), `position`, and the checksum of the header and the payload. */
function framed(magic: string, position: bigint, payload: Buffer, length = payload.length): Buffer {
  const header = Buffer.alloc(RECORD_HEADER_BYTES);
  header.write(magic, 0, 'latin1');
  header.writeUInt32LE(length, 4);
  header.writeBigUInt64LE(position, 8);
  header.writeUInt32LE(crc32(payload, crc32(header.subarray(0, 16))), 16);
  return Buffer.concat([header, payload]);
}

describe('encodeRecord', () => {
  it('frames the entries as magic, length, position, checksum and the serialized entries', () => {
    const payload = serialize(entries);
    expect(RECORD_HEADER_BYTES).toBe(20);
    expect(encodeRecord(7, entries)).toStrictEqual(framed('CLG1', 7n, payload));
  });
});

describe('decodeRecordAt', () => {
  it('reads a frame built by hand, where it starts in the bytes', () => {
    const payload = serialize(entries);
    const bytes = Buffer.concat([Buffer.from('xyz'), framed('CLG1', 9n, payload)]);
    const record = decodeRecordAt(bytes, 3);
    expect(record).toMatchObject({ position: 9, end: bytes.length });
    expect(record!.payload).toStrictEqual(payload);
    expect(decodeEntries(record!.payload)).toStrictEqual(entries);
  });

  it('reads a record with an empty payload, which ends exactly with its header', () => {
    const bytes = framed('CLG1', 1n, Buffer.alloc(0));
    expect(bytes.length).toBe(RECORD_HEADER_BYTES);
    expect(decodeRecordAt(bytes, 0)).toMatchObject({ position: 1, end: RECORD_HEADER_BYTES });
  });

  it('refuses a frame with another magic even when its checksum matches', () => {
    expect(decodeRecordAt(framed('CLG2', 1n, serialize(entries)), 0)).toBeNull();
  });

  it('refuses a frame whose payload or header changed after its checksum was taken', () => {
    const good = framed('CLG1', 1n, serialize(entries));
    const payloadChanged = Buffer.from(good);
    const last = payloadChanged.length - 1;
    payloadChanged.writeUInt8(payloadChanged.readUInt8(last) ^ 1, last);
    const positionChanged = Buffer.from(good);
    positionChanged.writeBigUInt64LE(2n, 8);
    expect(decodeRecordAt(good, 0)).not.toBeNull();
    expect(decodeRecordAt(payloadChanged, 0)).toBeNull();
    expect(decodeRecordAt(positionChanged, 0)).toBeNull();
  });

  it('finds no record in fewer bytes than a header, however few', () => {
    const whole = framed('CLG1', 1n, Buffer.alloc(0));
    for (let kept = 0; kept < RECORD_HEADER_BYTES; kept++) expect([kept, decodeRecordAt(whole.subarray(0, kept), 0)]).toEqual([kept, null]);
    expect(decodeRecordAt(whole, 1)).toBeNull();
    expect(decodeRecordAt(whole, RECORD_HEADER_BYTES)).toBeNull();
  });

  it('refuses a frame whose length claims more bytes than there are, even when the bytes there match its checksum', () => {
    const payload = serialize(entries);
    expect(decodeRecordAt(framed('CLG1', 1n, payload, payload.length + 1), 0)).toBeNull();
  });

  it('refuses a frame whose length runs one byte past the bytes, and reads it at exactly their end', () => {
    const payload = serialize(entries);
    const whole = framed('CLG1', 1n, payload);
    expect(decodeRecordAt(whole.subarray(0, whole.length - 1), 0)).toBeNull();
    expect(decodeRecordAt(whole, 0)).toMatchObject({ end: whole.length });
  });
});

describe('decodeRecordAt at the payload bound (RECORD_PAYLOAD_BYTES_MAX)', () => {
  /** Frames, in place, the bytes after the header of `bytes` as the payload of one record at position 1, with its checksum. */
  function sealedInPlace(bytes: Buffer): Buffer {
    bytes.write('CLG1', 0, 'latin1');
    bytes.writeUInt32LE(bytes.length - RECORD_HEADER_BYTES, 4);
    bytes.writeBigUInt64LE(1n, 8);
    bytes.writeUInt32LE(crc32(bytes.subarray(RECORD_HEADER_BYTES), crc32(bytes.subarray(0, 16))), 16);
    return bytes;
  }

  it('reads a payload of exactly RECORD_PAYLOAD_BYTES_MAX bytes, and refuses one a byte longer', () => {
    const bytes = Buffer.alloc(RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX + 1);
    const atBound = sealedInPlace(bytes.subarray(0, RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX));
    // Only the end is compared: a failure would otherwise print 256 MiB of payload.
    expect(decodeRecordAt(atBound, 0)?.end).toBe(RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX);
    expect(decodeRecordAt(sealedInPlace(bytes), 0)?.end).toBeUndefined();
  });
});
