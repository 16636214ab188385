/** Runs the operator CLI in-process against a real test server. */
import { runCli } from '../../src/cli/index.js';
import { ADMIN_TOKEN, type TestServer } from './server.js';

export async function cli(t: TestServer, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli([...args, '--admin-url', t.adminUrl, '--token', ADMIN_TOKEN], {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    // Nothing from the developer's environment may leak in (ADMIN_URL, DATA_DIR, ...).
    env: {},
  });
  return { code, out, err };
}
