/**
 * The orders the replay holds state for. An order is open between its
 * placement and the moment its replayed status reaches the status its row
 * ends in; only open orders are kept in memory. Every other order is, at
 * this point of the log, exactly what its row says, so its state is read
 * from the row when an event names it. In a log where orders are processed
 * as they come, the open orders are the processing backlog, not the orders
 * ever placed; `peak` reports the most held at once.
 */
import { ShardedMap } from '../sharded-map.js';
import { isOrderStatus } from '../rules.js';
import type { OrderStatus } from '../records.js';
import type { LedgerSource } from './ledger-source.js';
import type { OrderRowCursor } from './order-row-cursor.js';
import { asRaw, isInt } from './raw.js';

/** An order between its placement and the status its row ends in. */
export interface OpenOrder {
  account: number;
  service: number;
  /** With the runs of a drip-feed order: the units ordered in all (unitsOrdered), which remains counts. */
  quantity: number;
  extras?: { runs?: number };
  rate: number;
  debit: number;
  status: OrderStatus;
  remains: number | null;
  /** When it reached a final state: its refill window counts from here. */
  finishedAtMs?: number;
  /** The worker that claimed it, and its lease's end while it is processing under a claim (see lease.ts). */
  worker?: string | undefined;
  leaseExpiresMs?: number | undefined;
  /** Where its row ends. */
  final: FinalState;
}

/** The status, remains, worker and lease an orders row holds: where the replay of its order must arrive. */
export interface FinalState {
  status: unknown;
  remains: unknown;
  worker: unknown;
  leaseExpiresMs: unknown;
}

/** Where an orders row ends. */
export function finalState(row: Record<string, unknown>): FinalState {
  return { status: row.status, remains: row.remains, worker: row.worker, leaseExpiresMs: row.leaseExpiresMs };
}

/** Whether the order stands where its row ends. */
function atFinal(order: OpenOrder): boolean {
  const { final } = order;
  return order.status === final.status && order.remains === final.remains && order.worker === final.worker && order.leaseExpiresMs === final.leaseExpiresMs;
}

export class OpenOrders {
  private readonly open = new ShardedMap<OpenOrder>();
  /** The most open orders held at once. */
  peak = 0;

  constructor(
    private readonly source: LedgerSource,
    private readonly rows: OrderRowCursor,
  ) {}

  /** The order's state: held while open, read from its row once settled; undefined when never placed. */
  find(orderId: string): OpenOrder | undefined {
    return this.open.get(orderId) ?? this.settled(orderId);
  }

  /** Holds `order` as open, or lets it go once it stands where its row ends. */
  update(orderId: string, order: OpenOrder): void {
    if (atFinal(order)) this.open.delete(orderId);
    else this.hold(orderId, order);
  }

  /** Holds `order` as open. */
  hold(orderId: string, order: OpenOrder): void {
    this.open.set(orderId, order);
    // ShardedMap.size sums 64 shards: count only when the map grew.
    // Stryker disable next-line EqualityOperator: equivalent: at equal sizes the peak is set to the value it has
    if (this.open.size > this.peak) this.peak = this.open.size;
  }

  /** The orders still open: at the end of the log, each one stopped short of its row, or went past it. */
  entries(): Iterable<[string, OpenOrder]> {
    return this.open;
  }

  /**
   * An order that is not open is, at this point of the log, exactly what its
   * row says (or was never placed): its state comes from the row. Reached by
   * a lifecycle event, or by a move beyond the row's status, which the end
   * reports. Whether a cancel request or a refill is open is not taken from
   * the row, which holds the end state: the replay tracks those itself.
   */
  private settled(orderId: string): OpenOrder | undefined {
    const key = this.source.orderKey(orderId);
    const row = this.source.orderRow(key);
    // Stryker disable next-line ConditionalExpression: equivalent: a missing row reads as an empty record, whose status the check below refuses as well
    if (row === undefined || !this.rows.claimed(key)) return undefined;
    const r = asRaw(row);
    if (!isOrderStatus(r.status)) return undefined;
    return {
      account: r.account as number,
      service: r.service as number,
      quantity: r.quantity as number,
      extras: r.extras as { runs?: number } | undefined,
      rate: r.rate as number,
      debit: r.debit as number,
      status: r.status,
      // Stryker disable next-line LogicalOperator: equivalent: only a partial order settles with remains, and nothing reads a final order's remains again (a final order never moves, progress and refills do not read them)
      remains: (r.remains as number | null) ?? null,
      finishedAtMs: isInt(r.finishedAtMs) ? r.finishedAtMs : undefined,
      worker: r.worker as string | undefined,
      leaseExpiresMs: r.leaseExpiresMs as number | undefined,
      final: finalState(r),
    };
  }
}
