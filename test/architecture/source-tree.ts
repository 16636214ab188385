/** Reading `src/` as files, and building a small tree to show that a check catches what it should. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export { sourceFiles } from '../../scripts/source-files.js';

/** Writes `files` (path → text) into a fresh temporary folder, runs `check` on it and removes it. */
export function withTree(files: Record<string, string>, check: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'coa-arch-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    check(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
