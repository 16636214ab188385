/**
 * Admin endpoints for the service catalogue: list every service (disabled
 * ones included), create one, change one. Each field is checked, and a
 * service whose max × rate would not fit the exact money range is refused.
 */
import { errorOutcome, type ErrorOutcome } from '../../errors/index.js';
import { isOrderType, ORDER_TYPE_NAMES, SERVICE_DEFAULTS, type ServiceRecord } from '../../ledger/index.js';
import { microFromJson, multiplyMicro } from '../../money/index.js';
import { renderAdminService } from './render.js';
import { invalid, optionalReason, unknownField, type AdminHandler } from './common.js';
import type { AppContext } from '../context.js';
import { send, sendError, type Exchange } from '../transport/reply.js';
import { DESCRIPTION_CHARS_MAX, NAME_CHARS_MAX, REFILL_DAYS_MAX } from '../limits.js';

export const listServices: AdminHandler = (ex, ctx) => {
  const services = ctx.catalog.all().sort((a, b) => a.id - b.id);
  send(ex, 200, `{"ok":true,"services":[${services.map((s) => renderAdminService(s, ctx.catalog.averageTimeS(s.id))).join(',')}]}`);
};

const SERVICE_FIELDS = ['platform', 'name', 'rate', 'min', 'max', 'enabled', 'category', 'type', 'refill', 'refill_days', 'cancel', 'dripfeed', 'description', 'reason'];

/** Applies the body's fields to a service, checking each; returns an error value to refuse. */
function buildService(b: Record<string, unknown>, current: ServiceRecord | null, id: number): ServiceRecord | ErrorOutcome {
  const next: ServiceRecord =
    current === null ? { id, platform: '', name: '', rate: 0, min: 0, max: 0, enabled: true, ...SERVICE_DEFAULTS } : { ...current };
  for (const field of ['platform', 'name'] as const) {
    const value = b[field];
    if (value === undefined && current !== null) continue;
    if (typeof value !== 'string' || value.trim() === '' || value.length > NAME_CHARS_MAX) {
      return invalid(`Field '${field}' must be a non-empty string of at most ${NAME_CHARS_MAX} characters.`);
    }
    next[field] = value.trim();
  }
  if (b['rate'] !== undefined || current === null) {
    const rate = microFromJson(b['rate']);
    if (rate === null || rate < 0) return invalid("Field 'rate' must be a non-negative decimal number with at most 6 decimal places.");
    next.rate = rate;
  }
  for (const field of ['min', 'max'] as const) {
    const value = b[field];
    if (value === undefined && current !== null) continue;
    if (!Number.isSafeInteger(value) || (value as number) < 1) return invalid(`Field '${field}' must be a positive integer.`);
    next[field] = value as number;
  }
  if (b['enabled'] !== undefined) {
    if (typeof b['enabled'] !== 'boolean') return invalid("Field 'enabled' must be true or false.");
    next.enabled = b['enabled'];
  }
  for (const [field, key, charsMax] of [['category', 'category', NAME_CHARS_MAX], ['description', 'description', DESCRIPTION_CHARS_MAX]] as const) {
    const value = b[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length > charsMax) return invalid(`Field '${field}' must be a string of at most ${charsMax} characters.`);
    next[key] = value.trim();
  }
  if (b['type'] !== undefined) {
    if (!isOrderType(b['type'])) return invalid(`Field 'type' must be one of ${ORDER_TYPE_NAMES.join(', ')}.`);
    next.type = b['type'];
  }
  for (const field of ['refill', 'cancel', 'dripfeed'] as const) {
    if (b[field] === undefined) continue;
    if (typeof b[field] !== 'boolean') return invalid(`Field '${field}' must be true or false.`);
    next[field] = b[field];
  }
  if (b['refill_days'] !== undefined) {
    const days = b['refill_days'];
    if (!Number.isSafeInteger(days) || (days as number) < 1 || (days as number) > REFILL_DAYS_MAX) {
      return invalid(`Field 'refill_days' must be an integer from 1 to ${REFILL_DAYS_MAX}.`);
    }
    next.refillDays = days as number;
  }
  if (next.min > next.max) return invalid(`min (${next.min}) must not exceed max (${next.max}).`);
  if (multiplyMicro(next.max, next.rate) === null) {
    return invalid('max × rate is larger than the largest supported charge; lower the rate or the max.');
  }
  return next;
}

async function saveService(ex: Exchange, ctx: AppContext, id: number | null, body: unknown): Promise<void> {
  const b = body as Record<string, unknown>;
  const bad = unknownField(b, SERVICE_FIELDS);
  if (bad !== null) return sendError(ex, bad);
  const reason = optionalReason(b);
  if (!reason.ok) return sendError(ex, reason.error);
  const saved = await ctx.catalog.save<ErrorOutcome>(id, (current, nextId) => buildService(b, current, nextId), reason.reason);
  if (saved === null) return sendError(ex, errorOutcome('NOT_FOUND', `No service with id ${id}.`));
  if ('code' in saved) return sendError(ex, saved);
  send(ex, id === null ? 201 : 200, `{"ok":true,"service":${renderAdminService(saved, ctx.catalog.averageTimeS(saved.id))}}`);
}

export const createService: AdminHandler = (ex, ctx, _params, body) => saveService(ex, ctx, null, body);

export const patchService: AdminHandler = (ex, ctx, [id], body) => saveService(ex, ctx, Number(id), body);
