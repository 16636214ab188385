/**
 * The order types a service can have. Each type says which inputs an order
 * of it takes, how they are checked and how many units it is charged for;
 * the table `ORDER_TYPES` is the only place that knows, so a new type is one
 * entry here.
 */
export const ORDER_TYPE_NAMES = ['Default', 'Package', 'Custom Comments', 'Custom Comments Package', 'Mentions Custom List', 'Poll'] as const;
export type OrderType = (typeof ORDER_TYPE_NAMES)[number];

export function isOrderType(value: unknown): value is OrderType {
  return typeof value === 'string' && (ORDER_TYPE_NAMES as readonly string[]).includes(value);
}
