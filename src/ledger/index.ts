/**
 * The ledger: the domain's records and the rules that move money. It imports
 * nothing from storage, HTTP or the actors; they import it.
 */
export * from './records.js';
export * from './rules.js';
export * from './replay/index.js';
export * from './order-types.js';
export * from './order-fingerprint.js';
export * from './lifecycle.js';
export * from './token-bucket.js';
export * from './decide.js';
export * from './limits.js';
export * from './statement.js';
export * from './lease.js';
export * from './subscription-record.js';
export * from './subscription-terms.js';
export type { SubscriptionOutcome, PostReport } from './subscription-decide.js';
