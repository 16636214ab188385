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
        const proxy = new Haproxy(child, exited, url);
        await proxy.settled();
        return proxy;
      } catch {
        if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${listen} within 10 s: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /**
   * Waits until HAProxy's health checks have settled: HAProxy counts every
   * server as up until its first checks fail, so for a moment after it
   * starts a follower may get requests (and answer 503). Settled means ten
   * /readyz in a row, spread over the servers, reached the leader.
   */
  async settled(deadlineMs = 15_000): Promise<void> {
    const started = Date.now();
    let inARow = 0;
    while (inARow < 10) {
      if (Date.now() - started > deadlineMs) throw new Error(`HAProxy did not settle on one leader within ${deadlineMs} ms`);
      const status = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0);
      inARow = status === 200 ? inARow + 1 : 0;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }
}
