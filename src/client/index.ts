/** The typed client for the customer API v1, published as `credit-order-api/client`. */
export { createApiClient, type ApiClient, type ApiClientOptions } from './api-client.js';
export { retryingFetch, type RetryOptions } from './retrying-fetch.js';
export type { components, operations, paths, webhooks } from './openapi-types.js';
