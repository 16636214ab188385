import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The API document's version is the package's. The package file sits two
 * levels up from src/platform/ when run from source and three from
 * dist/src/platform/ when built.
 */
function readVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    const path = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(path)) {
      const pkg = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'credit-order-api' && typeof pkg.version === 'string') return pkg.version;
    }
  }
  throw new Error('cannot find the credit-order-api package.json');
}

export const VERSION: string = readVersion();
