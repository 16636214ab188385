/**
 * What a customer or the operator may register: checked here once for both
 * APIs, each refusal a sentence saying what to send instead.
 */
import { guardedHost, isForbiddenHost } from './address-guard.js';
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent } from './records.js';
import { URL_CHARS_MAX } from '../ledger/index.js';

export interface EndpointRules {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export type EndpointInput = { ok: true; url: string; events: WebhookEvent[]; enabled: boolean } | { ok: false; message: string };

const FIELDS = ['url', 'events', 'enabled'];

export function readEndpointInput(body: unknown, rules: EndpointRules): EndpointInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse('The request body must be a JSON object: {"url": "https://…", "events": ["order.updated"]}.');
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!FIELDS.includes(key)) return refuse(`Field '${key}' is not allowed here; allowed: ${FIELDS.join(', ')}.`);
  const url = checkUrl(b['url'], rules);
  if (typeof url !== 'string') return url;
  const events = b['events'] ?? ['order.updated'];
  if (!Array.isArray(events) || events.length === 0 || events.length > WEBHOOK_EVENTS.length || !events.every(isWebhookEvent)) {
    return refuse(`Field 'events' must be a non-empty list of event types from: ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  if (new Set(events).size !== events.length) return refuse("Field 'events' names an event type twice.");
  const enabled = b['enabled'] ?? true;
  if (typeof enabled !== 'boolean') return refuse("Field 'enabled' must be true or false.");
  return { ok: true, url, events: [...(events as WebhookEvent[])], enabled };
}

function checkUrl(value: unknown, rules: EndpointRules): string | { ok: false; message: string } {
  if (typeof value !== 'string' || value.length === 0) return refuse("Field 'url' is required: the https URL that receives the notifications.");
  if (value.length > URL_CHARS_MAX) return refuse(`Field 'url' must be at most ${URL_CHARS_MAX} characters.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("Field 'url' is not a valid absolute URL, such as https://example.com/webhooks.");
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) {
    return refuse(rules.allowHttp ? "Field 'url' must be an http or https URL." : "Field 'url' must be an https URL.");
  }
  if (url.username !== '' || url.password !== '') return refuse("Field 'url' must not carry a user name or password.");
  if (url.hash !== '') return refuse("Field 'url' must not have a #fragment.");
  if (guardedHost(url.hostname) === '') return refuse("Field 'url' must name a host.");
  if (!rules.allowPrivate && isForbiddenHost(url.hostname)) {
    return refuse("Field 'url' points at a loopback, private or link-local address; notifications go only to public addresses.");
  }
  return url.toString();
}

function refuse(message: string): { ok: false; message: string } {
  return { ok: false, message };
}
