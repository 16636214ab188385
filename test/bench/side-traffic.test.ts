/**
 * The webhooks benchmark's reference traffic (`bench:http --side-traffic
 * N`): two processes of their own post signed messages to each other until
 * stopped, and stopping leaves neither behind. A reference that silently
 * sent nothing would make the machine look free.
 */
import { describe, expect, it } from 'vitest';
import { startSideTraffic } from '../../bench/http/side-traffic.js';

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 20 s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('side traffic for the webhooks benchmark', () => {
  it('posts between its own two processes until closed', async () => {
    const side = await startSideTraffic(100);
    try {
      await until(async () => (await side.answered()) >= 20, '20 posts answered');
      const before = await side.answered();
      await until(async () => (await side.answered()) > before, 'more posts answered later');
    } finally {
      await side.close();
    }
  });

  it('refuses a rate that is not a whole number of posts a second', async () => {
    await expect(startSideTraffic(0)).rejects.toThrow(/whole number of posts a second/);
    await expect(startSideTraffic(2.5)).rejects.toThrow(/whole number of posts a second/);
  });
});
