/**
 * What a new order id costs (src/ids/order-ids.ts): one call to the cipher
 * per id (a batch of 1) against the keys of a millisecond encrypted in one
 * call (ORDER_ID_BATCH_MAX), at 1, 4, 16 and 64 orders per millisecond of
 * the clock. Process CPU per id, the two alternated, each line one round.
 *
 *   npm run build && node dist/bench/micro/run.js orderIds
 */
import { OrderIds } from '../../src/ids/index.js';

const IDS = 200_000;
const PACES = [1, 4, 16, 64];

function nsPerId(ids: OrderIds, perMs: number): number {
  let sink = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < IDS; i++) sink += ids.next(1_800_000_000_000 + Math.floor(i / perMs)).id.length;
  const used = process.cpuUsage(before);
  if (sink === 0) throw new Error('ids were made');
  return ((used.user + used.system) * 1000) / IDS;
}

export async function orderIds(): Promise<void> {
  const secret = OrderIds.newSecret();
  const single = new OrderIds(secret, 1);
  const batched = new OrderIds(secret);
  nsPerId(single, 4);
  nsPerId(batched, 4);
  process.stdout.write('\n## a new order id (process ns of CPU per id; A = one cipher call per id, B = one per batch)\n\n');
  process.stdout.write(`| round | ${PACES.map((p) => `A ${p}/ms | B ${p}/ms`).join(' | ')} |\n|---|${PACES.map(() => '---:|---:').join('|')}|\n`);
  for (let round = 1; round <= 5; round++) {
    const cells = PACES.map((p) => `${Math.round(nsPerId(single, p))} | ${Math.round(nsPerId(batched, p))}`);
    process.stdout.write(`| ${round} | ${cells.join(' | ')} |\n`);
  }
}
