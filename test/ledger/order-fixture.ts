/**
 * A plain pending order row for the ledger's unit tests: 100 units at 25
 * micro-credits, debited its whole charge of 2,500. Tests spread it and set
 * the fields they are about.
 */
import type { OrderRecord } from '../../src/ledger/index.js';

export const ORDER_AT_MS = 1_800_000_000_000;

export const ORDER: Readonly<OrderRecord> = {
  id: 'ord-1',
  account: 7,
  service: 3,
  target: 'https://example.com/p/1',
  quantity: 100,
  rate: 25,
  charge: 2_500,
  debit: 2_500,
  status: 'pending',
  remains: null,
  channel: 'api',
  unlimited: false,
  createdAtMs: ORDER_AT_MS,
  seq: 0,
};
