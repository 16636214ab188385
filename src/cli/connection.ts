import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError, UsageError } from './errors.js';

/**
 * Where the admin API is and how to authenticate, following the same
 * environment variables the server reads, so on the server's own host the
 * CLI works with no flags at all.
 */

export function resolveAdminUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  let text = flag ?? (env.ADMIN_URL || undefined);
  if (text === undefined) {
    const host = env.ADMIN_HOST || '127.0.0.1';
    // An IPv6 literal needs brackets inside a URL.
    const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    text = `http://${hostPart}:${env.ADMIN_PORT || 8081}`; // not a limit: ADMIN_PORT's default, as in src/app/config.ts
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`the admin URL "${text}" is not a valid URL (expected something like http://127.0.0.1:8081).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the admin URL "${text}" must start with http:// or https://.`);
  }
  // Request paths start with '/', so a trailing slash would double it.
  return url.href.replace(/\/+$/, '');
}

export function tokenFilePath(env: NodeJS.ProcessEnv): string {
  return resolve(env.DATA_DIR || './data', 'admin-token');
}

export async function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (flag !== undefined) {
    // An empty --token is almost always an unset shell variable; say so rather than send "Bearer ".
    if (flag.trim() === '') throw new UsageError('--token is empty.');
    return flag.trim();
  }
  if (env.ADMIN_TOKEN && env.ADMIN_TOKEN.trim() !== '') return env.ADMIN_TOKEN.trim();

  const file = tokenFilePath(env);
  let contents: string;
  try {
    contents = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new CliError(
        `no admin token: pass --token, set ADMIN_TOKEN, or start the server once (npm start) so it writes ${file}.`,
      );
    }
    throw new CliError(`cannot read the admin token file ${file} (${code ?? String(err)}).`);
  }
  const token = contents.trim();
  if (token === '') throw new CliError(`the admin token file ${file} is empty.`);
  return token;
}
