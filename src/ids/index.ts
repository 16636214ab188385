export { hashSecret, newApiKey, newApiSecret, newRequestId, newV2Key } from './keys.js';
export { ORDER_ID_PATTERN, OrderIds, type NewOrderId } from './order-ids.js';
export { OrderNumbers, parsePositiveId } from './order-numbers.js';
export { RefillIds } from './refill-ids.js';
export * from './limits.js';
