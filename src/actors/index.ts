export { decide, initialState, type Command, type Decision, type ForceJoinVerdict, type Now, type OrderInput, type Outcome, type WalletState } from './wallet-logic.js';
export { takeToken, fullBucket, RATE_LIMIT_MAX, type BucketState, type BucketVerdict } from './token-bucket.js';
export { WalletActor, idempotencyTableKey, type ActorContext, type Delivery } from './wallet-actor.js';
export { Registry, ACCOUNT_IDLE_EVICT_MS, type Account, type AccountView } from './registry.js';
export { Catalog } from './catalog.js';
