export type { Request } from './request.js';
export { WalletActor, idempotencyTableKey, type ActorContext, type Delivery } from './wallet-actor.js';
export { Registry, type Account, type AccountView } from './registry.js';
export { Catalog } from './catalog.js';
export * from './limits.js';
export { LeaseSweeper } from './lease-sweeper.js';
export { SubscriptionSweeper } from './subscription-sweeper.js';
export type { SubscriptionStore } from './subscription-rows.js';
