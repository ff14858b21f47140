// The keyset page on MySQL: one bounded walk of the index whose leading columns the filter fixes, forced.
import type { Order } from '../../../http/schemas.js'
import { balanceSigns } from '../../balance-sign.js'
import type { OrdersCapability, StorageListQuery } from '../../order-storage.js'
import { columnText, parsedJson, type Session } from '../client.js'
import { orderIndexes, type Tables } from '../tables.js'
import { ORDER_DOCUMENT } from './get-order.js'

/** The index led by the columns a filter fixes (store, customer, balance sign, status, in that order), then (created_at, id). */
const walkIndexes: Record<string, string> = {
  '': orderIndexes.created,
  customer_id: orderIndexes.customer,
  status: orderIndexes.status,
  'customer_id,status': orderIndexes.customerStatus,
  store: orderIndexes.store,
  'store,customer_id': orderIndexes.storeCustomer,
  'store,status': orderIndexes.storeStatus,
  'store,customer_id,status': orderIndexes.storeCustomerStatus,
  balance_sign: orderIndexes.balance,
  'balance_sign,status': orderIndexes.balanceStatus,
  'customer_id,balance_sign': orderIndexes.customerBalance,
  'customer_id,balance_sign,status': orderIndexes.customerBalanceStatus,
  'store,balance_sign': orderIndexes.storeBalance,
  'store,balance_sign,status': orderIndexes.storeBalanceStatus,
  'store,customer_id,balance_sign': orderIndexes.storeCustomerBalance,
  'store,customer_id,balance_sign,status': orderIndexes.storeCustomerBalanceStatus
}

export function listOrders ({ orders }: Tables, session: Session): OrdersCapability['list'] {
  return async function list (listQuery: StorageListQuery): Promise<Order[]> {
    const { customerId, store, number, reference, ids, createdFrom, createdTo, after, limit } = listQuery
    const sign = listQuery.balance === undefined ? undefined : balanceSigns[listQuery.balance]
    const statuses = listQuery.statuses === undefined ? undefined : [...new Set(listQuery.statuses.map(columnText))]
    if (statuses?.length === 0 || ids?.length === 0) return []
    const asc = listQuery.order === 'asc'
    const params: unknown[] = []
    const conditions: string[] = []
    const where = (condition: string, ...values: unknown[]) => { conditions.push(condition); params.push(...values) }
    const statusCheck = () => { if (statuses !== undefined) where('status IN (?)', statuses) }
    const storeCheck = () => { if (store !== undefined) where('store = ?', columnText(store)) }
    // A number names at most one order, and a reference with a customer one per store, through a
    // unique index; ids name at most 100, read by primary key. The first of those given is read; every
    // other filter is a condition on those few rows. A reference without a customer walks (store,
    // reference, created_at, id) in a store, (reference, created_at, id) otherwise.
    let index: string
    // The fixed columns of a walk, with several statuses one walk each, merged: a page reads at most `limit` rows per status.
    let walks: unknown[][] = [[]]
    if (number !== undefined || ids !== undefined || reference !== undefined) {
      index = number !== undefined
        ? orderIndexes.number
        : ids !== undefined
          ? 'PRIMARY'
          : customerId !== undefined ? orderIndexes.storeReference : store !== undefined ? orderIndexes.storeReferenceCreated : orderIndexes.reference
      if (number !== undefined) where('number = ?', number)
      if (ids !== undefined) where('id IN (?)', ids.map(columnText))
      if (customerId !== undefined) where('customer_id = ?', columnText(customerId))
      if (reference !== undefined) where('reference = ?', columnText(reference))
      statusCheck()
      storeCheck()
      if (sign !== undefined) where('balance_sign = ?', sign)
    } else {
      const fixed: string[] = []
      const values: unknown[] = []
      if (store !== undefined) { fixed.push('store'); values.push(columnText(store)) }
      if (customerId !== undefined) { fixed.push('customer_id'); values.push(columnText(customerId)) }
      if (sign !== undefined) { fixed.push('balance_sign'); values.push(sign) }
      if (statuses !== undefined) fixed.push('status')
      index = walkIndexes[fixed.join(',')]!
      walks = statuses === undefined ? [values] : statuses.map(status => [...values, status])
      conditions.push(...fixed.map(column => `${column} = ?`))
    }
    const shared = params.length

    // The page is a range of that index between two bounds on (created_at, id): the tighter of the
    // cursor and the created range at each end. Spelled out as ORs, which the range optimizer of both
    // MySQL and MariaDB turns into index ranges (a row comparison it may not).
    const lower = after !== undefined && asc && (createdFrom === undefined || after.createdAt >= createdFrom)
      ? ['(created_at > ? OR (created_at = ? AND id > ?))', after.createdAt, after.createdAt, columnText(after.id)]
      : createdFrom === undefined ? undefined : ['created_at >= ?', createdFrom]
    const upper = after !== undefined && !asc && (createdTo === undefined || after.createdAt < createdTo)
      ? ['(created_at < ? OR (created_at = ? AND id < ?))', after.createdAt, after.createdAt, columnText(after.id)]
      : createdTo === undefined ? undefined : ['created_at < ?', createdTo]
    for (const bound of [lower, upper]) {
      if (bound !== undefined) where(...bound as [string, ...unknown[]])
    }

    // FORCE INDEX: whatever the statistics say (a rare status the optimizer guesses common), the walk
    // is that index's, in its order, stopped at `limit`.
    const direction = asc ? 'ASC' : 'DESC'
    const orderBy = `ORDER BY created_at ${direction}, id ${direction} LIMIT ?`
    const walk = `SELECT created_at, id, ${ORDER_DOCUMENT} FROM ${orders} FORCE INDEX (${index})${conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`} ${orderBy}`
    const walkParams = (values: unknown[]) => [...params.slice(0, shared), ...values, ...params.slice(shared), limit]
    const text = walks.length === 1 ? walk : `${walks.map(() => `(${walk})`).join(' UNION ALL ')} ${orderBy}`
    const values = walks.length === 1 ? walkParams(walks[0]!) : [...walks.flatMap(walkParams), limit]
    const rows = await session.run<{ document: Buffer }>(text, values)
    return rows.map(row => parsedJson(row.document))
  }
}
