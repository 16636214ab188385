/**
 * What callers send a wallet actor: a command without the lookups. The
 * actor gathers those (the order as it last applied it, the order's service,
 * a stored Idempotency-Key record, fresh ids) into the immutable `Command`
 * the pure decision reads, so a check that needs one more lookup adds it in
 * one place, `WalletActor.prepare`.
 */
import type { Command } from '../ledger/index.js';

type Kind = Command['kind'];
type CommandOf<K extends Kind> = Extract<Command, { kind: K }>;

/** Fields the actor gathers, per command kind. */
interface Gathered {
  order: 'orderId' | 'seq' | 'number' | 'prior';
  'set-status': 'order';
  progress: 'order';
  'extend-lease': 'order';
  release: 'order';
  'expire-lease': 'order';
  cancel: 'order' | 'service';
  refill: 'order' | 'service' | 'refillId';
  'refill-status': 'order' | 'orderId';
  subscribe: 'number' | 'prior';
  'subscription-post': 'subscription' | 'prior' | 'orderId' | 'seq' | 'number';
  'subscription-status': 'subscription';
}

export type Request = {
  [K in Kind]: K extends keyof Gathered ? Omit<CommandOf<K>, Gathered[K]> : CommandOf<K>;
}[Kind];
