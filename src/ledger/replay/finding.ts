/**
 * A broken invariant, as the replay reports it: the family it belongs to,
 * the seq, account and order involved, and one plain sentence naming them,
 * so an operator can go straight to the event. The replay stops at the
 * first one: `fail` throws it as `Broken`, which `replayLedger` catches.
 */

/** Which family of invariants a failure belongs to. */
export type Invariant = 'log-sequence' | 'balance' | 'wallet' | 'order-charge' | 'order-status' | 'idempotency' | 'lifecycle' | 'subscription';

export interface BrokenInvariant {
  invariant: Invariant;
  /** The log entry at fault, or null for a table-only finding. */
  seq: number | null;
  account: number | null;
  order: string | null;
  /** The same plain sentence as `VerifyReport.firstBroken`. */
  sentence: string;
}

const LABEL: Record<Invariant, string> = {
  'log-sequence': 'Log sequence check',
  balance: 'Balance replay',
  wallet: 'Wallet check',
  'order-charge': 'Order charge check',
  'order-status': 'Order status check',
  idempotency: 'Idempotency check',
  lifecycle: 'Lifecycle check',
  subscription: 'Subscription check',
};

/** Thrown inside the replay to stop at the first failure; never escapes `replayLedger`. */
export class Broken extends Error {
  constructor(readonly finding: BrokenInvariant) {
    super(finding.sentence);
  }
}

/** The finding, its sentence saying where: "seq 7 (account 1, order o2)", or "the tables" for a table-only one. */
export function finding(invariant: Invariant, seq: number | null, account: number | null, order: string | null, detail: string): BrokenInvariant {
  const who = [account === null ? null : `account ${account}`, order === null ? null : `order ${order}`].filter((p) => p !== null);
  let where: string;
  if (seq !== null) where = who.length > 0 ? `seq ${seq} (${who.join(', ')})` : `seq ${seq}`;
  else where = who.length > 0 ? who.join(', ') : 'the tables';
  return { invariant, seq, account, order, sentence: `${LABEL[invariant]} failed at ${where}: ${detail}` };
}

/** Stops the replay at this finding. */
export function fail(invariant: Invariant, seq: number | null, account: number | null, order: string | null, detail: string): never {
  throw new Broken(finding(invariant, seq, account, order, detail));
}
