/**
 * The typed client for the customer API v1: openapi-fetch over the types
 * generated from docs/openapi.json, so every path, parameter, body and
 * answer is checked by the compiler, sent through the retrying fetch.
 *
 *     const api = createApiClient({ baseUrl: 'https://panel.example', key, secret });
 *     const { data, error, response } = await api.POST('/api/v1/order', { body: { service: 1, target, quantity: 100 } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi-types.js';
import { retryingFetch, type RetryOptions } from './retrying-fetch.js';

export interface ApiClientOptions {
  /** The server's root, e.g. https://panel.example (the paths begin with /api/v1). */
  baseUrl: string;
  /** The account's API key and secret (X-API-Key, X-API-Secret). */
  key: string;
  secret: string;
  /** How requests are retried (see retrying-fetch.ts). */
  retry?: RetryOptions;
}

export type ApiClient = Client<paths>;

export function createApiClient(options: ApiClientOptions): ApiClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-API-Key': options.key, 'X-API-Secret': options.secret },
    fetch: retryingFetch(options.retry),
    // orders=a,b and refills=1,2: the lists are one comma-separated parameter (style form, explode false).
    querySerializer: { array: { style: 'form', explode: false } },
  });
}
