/**
 * HAProxy (the Debian package) in front of a group's nodes, with the
 * project's deploy/haproxy.cfg: the addresses are given through the
 * environment the configuration reads.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const HAPROXY_MISSING = 'haproxy was not found: install the Debian package haproxy';
export const HAPROXY_CONFIG = fileURLToPath(new URL('../../../deploy/haproxy.cfg', import.meta.url));

export function haproxyPresent(): boolean {
  return spawnSync('haproxy', ['-v'], { encoding: 'utf8' }).status === 0;
}

export class Haproxy {
  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    readonly url: string,
  ) {}

  /** Starts HAProxy listening on `listen` (host:port), in front of the two nodes' customer ports. */
  static async start(listen: string, nodeA: string, nodeB: string): Promise<Haproxy> {
    const child = spawn('haproxy', ['-db', '-f', HAPROXY_CONFIG], {
      env: { ...process.env, COA_LISTEN: listen, COA_NODE_A: nodeA, COA_NODE_B: nodeB },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = `http://${listen}`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`haproxy exited at start: ${stderr}`);
      try {
        await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
        return new Haproxy(child, exited, url);
      } catch {
        if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${listen} within 10 s: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }
}
