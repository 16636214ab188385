/**
 * The admin API's bearer token: ADMIN_TOKEN, else the token file in the
 * data directory, else a new one written there (mode 0600) and shown once.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

export function adminToken(config: Config): { token: string; generated: boolean } {
  if (config.adminToken !== null) return { token: config.adminToken, generated: false };
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), generated: false };
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600, flag: 'wx' });
  return { token, generated: true };
}
