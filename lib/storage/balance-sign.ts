// The sign of an order's balance, which the SQL storages keep beside the order so that a balance page walks an index.
import type { Order } from '../http/schemas.js'
import type { StorageListQuery } from './order-storage.js'

/** -1, 0 or 1: the sign of `order.balance`, or of `order.total` for an order stored without a balance. */
export function balanceSign (order: Pick<Order, 'total'>): -1 | 0 | 1 {
  const { balance } = order as { balance?: unknown }
  const amount = typeof balance === 'number' ? balance : order.total
  return amount > 0 ? 1 : amount < 0 ? -1 : 0
}

/** The sign of the balance each `balance` filter asks for. */
export const balanceSigns = Object.freeze({ due: 1, settled: 0, owed: -1 }) satisfies Record<NonNullable<StorageListQuery['balance']>, -1 | 0 | 1>
