/**
 * How a commit-log record read back is told from damage: its magic number,
 * its header, its length within the bytes read and within
 * RECORD_PAYLOAD_BYTES_MAX. Each case has a matching checksum, so that
 * only the check it is about can refuse it. The records are framed here by
 * hand (magic, payload length, position, CRC-32 of the header's first 16
 * bytes and the payload), independently of `encodeRecord`.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeRecordAt, encodeRecord, RECORD_HEADER_BYTES } from '../../src/wal/index.js';
import { RECORD_PAYLOAD_BYTES_MAX } from '../../src/wal/limits.js';

const MAGIC = 0x31474c43;

/**
 * Frames the bytes after the header of `bytes` as one record at position 1:
 * the header says `length` payload bytes (all of them unless given), and
 * the checksum covers the header and the payload bytes that are there.
 */
function sealed(bytes: Buffer, options: { magic?: number; length?: number } = {}): Buffer {
  bytes.writeUInt32LE(options.magic ?? MAGIC, 0);
  bytes.writeUInt32LE(options.length ?? bytes.length - RECORD_HEADER_BYTES, 4);
  bytes.writeBigUInt64LE(1n, 8);
  bytes.writeUInt32LE(crc32(bytes.subarray(RECORD_HEADER_BYTES), crc32(bytes.subarray(0, 16))), 16);
  return bytes;
}

describe('a commit-log record read back, each check alone', () => {
  it('frames a record as encodeRecord does', () => {
    const record = encodeRecord(1, []);
    expect(sealed(Buffer.from(record))).toEqual(record);
  });

  it('refuses another magic number', () => {
    const payload = Buffer.from('payload');
    expect(decodeRecordAt(sealed(Buffer.concat([Buffer.alloc(RECORD_HEADER_BYTES), payload])), 0)?.end).toBe(RECORD_HEADER_BYTES + payload.length);
    expect(decodeRecordAt(sealed(Buffer.concat([Buffer.alloc(RECORD_HEADER_BYTES), payload]), { magic: MAGIC + 1 }), 0)).toBeNull();
  });

  it('reads a record with an empty payload that ends exactly where the bytes end', () => {
    const bytes = Buffer.concat([Buffer.alloc(4), sealed(Buffer.alloc(RECORD_HEADER_BYTES))]);
    expect(decodeRecordAt(bytes, 4)).toEqual({ position: 1, end: bytes.length, payload: Buffer.alloc(0) });
  });

  it('refuses a record whose length runs past the bytes read, even when the bytes there match its checksum', () => {
    const bytes = sealed(Buffer.alloc(RECORD_HEADER_BYTES + 10), { length: 11 });
    expect(decodeRecordAt(bytes, 0)).toBeNull();
  });

  it('reads a payload of exactly RECORD_PAYLOAD_BYTES_MAX bytes, and refuses one a byte longer', () => {
    const bytes = Buffer.alloc(RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX + 1);
    const atBound = sealed(bytes.subarray(0, RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX));
    // Only the end is compared: a failure would otherwise print 256 MiB of payload.
    expect(decodeRecordAt(atBound, 0)?.end).toBe(RECORD_HEADER_BYTES + RECORD_PAYLOAD_BYTES_MAX);
    expect(decodeRecordAt(sealed(bytes), 0)?.end).toBeUndefined();
  });
});
