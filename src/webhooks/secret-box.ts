/**
 * Endpoint secrets at rest. A secret must be stored so that the server can
 * sign with it (a hash would not do), so it is sealed with AES-256-GCM under
 * a key kept outside LMDB: WEBHOOKS_SECRET_KEY (base64 of 32 bytes) when the
 * operator sets it, else DATA_DIR/webhook-secrets.key, created once with
 * mode 0600. A copy of data.mdb, or a snapshot, alone does not reveal any
 * secret; keep the key file out of backups you hand around, or set the key
 * from a secret store. At start the key must open every stored secret
 * (sealing-check.ts).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface SealedSecret {
  iv: Uint8Array;
  tag: Uint8Array;
  data: Uint8Array;
}

export const SECRET_KEY_FILE = 'webhook-secrets.key';

/** The sealing key and where it came from. */
export interface SealingKey {
  key: Buffer;
  /** A short public name of the key (`sealingKeyId`), to tell keys apart without showing one. */
  id: string;
  /** Where it came from, as the operator names it: `WEBHOOKS_SECRET_KEY` or the key file's path. */
  source: string;
}

/**
 * The sealing key: from the setting when given, else the data directory's
 * key file. A missing file is created only when `create` is true; else the
 * answer is null (the caller refuses to start rather than make a key that
 * cannot open the secrets already stored).
 */
export function loadSecretKey(dataDir: string, configured: string | null, options: { create: boolean }): SealingKey | null {
  if (configured !== null) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('WEBHOOKS_SECRET_KEY must be the base64 of exactly 32 bytes (openssl rand -base64 32).');
    return { key, id: sealingKeyId(key), source: 'WEBHOOKS_SECRET_KEY' };
  }
  const file = join(dataDir, SECRET_KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} must hold the base64 of exactly 32 bytes.`);
    return { key, id: sealingKeyId(key), source: file };
  }
  if (!options.create) return null;
  const key = randomBytes(32);
  writeDurably(dataDir, file, key.toString('base64') + '\n');
  return { key, id: sealingKeyId(key), source: file };
}

/**
 * A key's public name: the first 16 hex digits of the SHA-256 of its 32
 * bytes. An operator computes it from a key file with
 * `base64 -d webhook-secrets.key | sha256sum | cut -c1-16`; it reveals
 * nothing of the key.
 */
export function sealingKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, KEY_ID_HEX_DIGITS);
}

const KEY_ID_HEX_DIGITS = 16;

/** Whether `key` opens `sealed`. */
export function opensWith(key: Buffer, sealed: SealedSecret): boolean {
  try {
    openSecret(key, sealed);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes the key file so that a crash or power cut leaves either no file or
 * the whole key, never an empty one: a private temporary file, synced, then
 * renamed into place and the directory synced. Secrets sealed with the key
 * are committed only after this returns.
 */
function writeDurably(dir: string, file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

export function sealSecret(key: Buffer, secret: string): SealedSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), data };
}

/** Throws when the key is not the one that sealed it (or the record was altered). */
export function openSecret(key: Buffer, sealed: SealedSecret): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv));
  decipher.setAuthTag(Buffer.from(sealed.tag));
  return Buffer.concat([decipher.update(Buffer.from(sealed.data)), decipher.final()]).toString('utf8');
}
