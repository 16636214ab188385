/**
 * One record of the commit log (`commit-log.ts`): a batch of WAL entries at
 * one position, framed so that recovery can tell a whole record from a torn
 * or stale one.
 *
 *   magic u32 | payload length u32 | position u64 | crc32 u32 | payload
 *
 * The checksum covers the first 16 header bytes and the payload, so a record
 * cut short by a crash mid-write, the zeros of preallocated space, and bytes
 * left over from an earlier use of the file all fail it. The payload is the
 * entries as `node:v8` serializes them (every key and value type the tables
 * take: strings, numbers, arrays, Buffers, plain records).
 */
import { deserialize, serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import type { WalEntry } from './entry.js';
import { RECORD_PAYLOAD_BYTES_MAX } from './limits.js';

const MAGIC = 0x31474c43; // not a limit: the record format's magic number, "CLG1" little-endian
export const RECORD_HEADER_BYTES = 20;

export function encodeRecord(position: number, entries: readonly WalEntry[]): Buffer {
  const payload = serialize(entries);
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + payload.length);
  record.writeUInt32LE(MAGIC, 0);
  record.writeUInt32LE(payload.length, 4);
  record.writeBigUInt64LE(BigInt(position), 8);
  payload.copy(record, RECORD_HEADER_BYTES);
  record.writeUInt32LE(checksum(record, payload.length), 16);
  return record;
}

export interface DecodedRecord {
  position: number;
  /** Where the next record would begin. */
  end: number;
  payload: Buffer;
}

/** The record at `offset`, or null when there is none there that is whole and intact. */
export function decodeRecordAt(bytes: Buffer, offset: number): DecodedRecord | null {
  if (offset + RECORD_HEADER_BYTES > bytes.length) return null;
  if (bytes.readUInt32LE(offset) !== MAGIC) return null;
  const length = bytes.readUInt32LE(offset + 4);
  const end = offset + RECORD_HEADER_BYTES + length;
  if (length > RECORD_PAYLOAD_BYTES_MAX || end > bytes.length) return null;
  const record = bytes.subarray(offset, end);
  if (record.readUInt32LE(16) !== checksum(record, length)) return null;
  const position = Number(record.readBigUInt64LE(8));
  if (!Number.isSafeInteger(position) || position < 1) return null;
  return { position, end, payload: record.subarray(RECORD_HEADER_BYTES) };
}

export function decodeEntries(payload: Buffer): WalEntry[] {
  return deserialize(payload) as WalEntry[];
}

function checksum(record: Buffer, payloadLength: number): number {
  return crc32(record.subarray(RECORD_HEADER_BYTES, RECORD_HEADER_BYTES + payloadLength), crc32(record.subarray(0, 16)));
}
