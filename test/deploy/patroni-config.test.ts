/**
 * deploy/patroni.yml is a configuration the installed Patroni accepts, and
 * it keeps PostgreSQL synchronous and strict: the promise that an
 * acknowledged order is on two machines rests on those two settings.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMissing } from '../helpers/replicated-group.js';

const CONFIG = 'deploy/patroni.yml';
const patroniMissing = spawnSync('patroni', ['--version'], { encoding: 'utf8' }).status === 0 ? null : 'patroni was not found: install the Debian package patroni';
const missing = patroniMissing ?? (await postgresMissing());
if (missing !== null) console.log(`Patroni configuration test skipped: ${missing}`);

type PostgresModule = typeof import('../../scripts/cluster/postgres.js');
const dir = mkdtempSync(join(tmpdir(), 'coa-patroni-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The configuration with bin_dir pointing at this machine's PostgreSQL (the validator checks that the binaries exist). */
async function localCopy(text: string): Promise<string> {
  const { findPostgresBin } = (await import('../../dist/scripts/cluster/postgres.js' as string)) as PostgresModule;
  const file = join(dir, 'patroni.yml');
  writeFileSync(file, text.replace(/^(\s*bin_dir:).*$/m, `$1 ${findPostgresBin()}`));
  return file;
}

function validate(file: string): { status: number | null; output: string } {
  const result = spawnSync('patroni', ['--validate-config', file], { encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe.skipIf(missing !== null)('deploy/patroni.yml', () => {
  it('passes patroni --validate-config, which refuses a configuration without its scope', async () => {
    const text = readFileSync(CONFIG, 'utf8');
    expect(validate(await localCopy(text))).toEqual({ status: 0, output: '' });
    const broken = validate(await localCopy(text.replace(/^scope:.*$/m, '')));
    expect(broken.status).not.toBe(0);
    expect(broken.output).toMatch(/scope/);
  });

  it('asks for synchronous replication, strict, with one synchronous standby, and keeps fsync and synchronous_commit on', () => {
    // Patroni's own YAML reader (python3-yaml, a dependency of the patroni package) reads the file.
    const read = spawnSync('python3', ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))["bootstrap"]["dcs"]))', CONFIG], { encoding: 'utf8' });
    expect(read.status, read.stderr).toBe(0);
    const dcs = JSON.parse(read.stdout) as { synchronous_mode: unknown; synchronous_mode_strict: unknown; synchronous_node_count: unknown; postgresql: { parameters: Record<string, unknown> } };
    expect([dcs.synchronous_mode, dcs.synchronous_mode_strict, dcs.synchronous_node_count]).toEqual([true, true, 1]);
    expect(dcs.postgresql.parameters).toMatchObject({ fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' });
  });
});
