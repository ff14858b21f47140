// The keyset page on PostgreSQL: one bounded walk of the index whose leading columns the filter fixes.
import type { Order } from '../../../http/schemas.js'
import { balanceSigns } from '../../balance-sign.js'
import type { OrdersCapability, StorageListQuery } from '../../order-storage.js'
import { columnText, type Run } from '../client.js'
import type { Tables } from '../tables.js'

interface Bound {
  operator: '>' | '>=' | '<'
  createdAt: string
  id: string
}

export function listOrders ({ orders }: Tables, query: Run): OrdersCapability['list'] {
  return async function list (listQuery: StorageListQuery): Promise<Order[]> {
    const { customerId, store, number, reference, ids, createdFrom, createdTo, after, limit } = listQuery
    const sign = listQuery.balance === undefined ? undefined : balanceSigns[listQuery.balance]
    const statuses = listQuery.statuses === undefined ? undefined : [...new Set(listQuery.statuses)]
    if (statuses?.length === 0) return []
    const asc = listQuery.order === 'asc'
    const params: unknown[] = []
    const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`
    const conditions: string[] = []
    // The columns the filter fixes lead the index that serves the page: (store?, customer_id?,
    // balance_sign?, status?, created_at, id), or (store?, reference, created_at, id).
    const fixedColumns: string[] = []
    const fixedValues: string[] = []
    // A check is a condition no index serves (a btree never matches `… IS TRUE`): applied to the rows the
    // chosen index gives, so that whatever the statistics say, the planner cannot AND in the whole run of
    // another index (every order of the customer, or of the status) to find a few rows.
    const check = (condition: string) => conditions.push(`(${condition}) IS TRUE`)
    const statusCheck = () => { if (statuses !== undefined) check(`status = ANY(${param(statuses.map(columnText), 'text[]')})`) }
    const storeCheck = () => { if (store !== undefined) check(`store = ${param(columnText(store), 'text')}`) }
    const balanceCheck = () => { if (sign !== undefined) check(`balance_sign = ${param(sign, 'smallint')}`) }
    // A number names at most one order, and a reference with a customer one per store, through a unique
    // index; ids name at most 100, read by primary key. The first of those given is read; every other
    // filter is a check on those few rows.
    const named = number !== undefined ? 'number' : ids !== undefined ? 'ids' : reference !== undefined && customerId !== undefined ? 'reference' : undefined
    if (named !== undefined) {
      const where = (part: typeof named, condition: string) => part === named ? conditions.push(condition) : check(condition)
      if (number !== undefined) where('number', `number = ${param(number, 'bigint')}`)
      if (ids !== undefined) where('ids', `id = ANY(${param(ids.map(columnText), 'text[]')})`)
      if (customerId !== undefined) where('reference', `customer_id = ${param(columnText(customerId), 'text')}`)
      if (reference !== undefined) where('reference', `reference IS NOT NULL AND reference = ${param(columnText(reference), 'text')}`)
      // The unique index's third column: under a store, the one order of that store, not one per store.
      if (named === 'reference' && store !== undefined) conditions.push(`coalesce(store, '') = ${param(columnText(store), 'text')}`)
      else storeCheck()
      statusCheck()
      balanceCheck()
    } else if (reference !== undefined) {
      // The orders of one reference (of one store, when a store is given: other stores' orders of it are
      // never walked), one per customer at most: walked in page order, statuses a check.
      if (store !== undefined) {
        fixedColumns.push('store')
        fixedValues.push(param(columnText(store), 'text'))
        conditions.push('store IS NOT NULL')
      }
      fixedColumns.push('reference')
      fixedValues.push(param(columnText(reference), 'text'))
      conditions.push('reference IS NOT NULL')
      statusCheck()
      balanceCheck()
    } else {
      // A store's indexes hold only orders with one (partial): the condition lets the planner use them.
      if (store !== undefined) {
        fixedColumns.push('store')
        fixedValues.push(param(columnText(store), 'text'))
        conditions.push('store IS NOT NULL')
      }
      if (customerId !== undefined) {
        fixedColumns.push('customer_id')
        fixedValues.push(param(columnText(customerId), 'text'))
      }
      if (sign !== undefined) {
        fixedColumns.push('balance_sign')
        fixedValues.push(param(sign, 'smallint'))
      }
      if (statuses !== undefined) fixedColumns.push('status')
    }
    // Several statuses: one walk each, merged, so a page reads at most `limit` rows per status.
    const walks = fixedColumns.at(-1) === 'status'
      ? statuses!.map(status => [...fixedValues, param(columnText(status), 'text')])
      : [fixedValues]

    // The page is a range of that index between two bounds on (created_at, id): the tighter of the cursor
    // and the created range at each end ('' sorts before every id, so (instant, '') bounds the orders
    // created at that instant).
    const lower: Bound | undefined = after !== undefined && asc && (createdFrom === undefined || after.createdAt >= createdFrom)
      ? { operator: '>', createdAt: after.createdAt, id: after.id }
      : createdFrom === undefined ? undefined : { operator: '>=', createdAt: createdFrom, id: '' }
    const upper: Bound | undefined = after !== undefined && !asc && (createdTo === undefined || after.createdAt < createdTo)
      ? { operator: '<', createdAt: after.createdAt, id: after.id }
      : createdTo === undefined ? undefined : { operator: '<', createdAt: createdTo, id: '' }
    for (const bound of [lower, upper]) {
      if (bound === undefined) continue
      const condition = `(created_at, id) ${bound.operator} (${param(bound.createdAt, 'text')}, ${param(columnText(bound.id), 'text')})`
      if (named === undefined) conditions.push(condition)
      else check(condition)
    }

    // The leading fixed column is matched as `= ANY(ARRAY[value])`, which PostgreSQL's btree walks like
    // an equality (positioned by the bounds on (created_at, id), stopped at the far one) but which the
    // planner does not take as fixing the column: so the order asked for, (fixed columns, created_at,
    // id), is one only their index gives, and whatever the statistics say (a status it cannot see, a
    // rare one it guesses common) it never walks (created_at, id) filtering rows out. A customer or a
    // status behind the leading column is a plain equality: PostgreSQL 15 gives no order from an array
    // match past the first column.
    const direction = asc ? 'ASC' : 'DESC'
    const limitParam = param(limit, 'int')
    const orderBy = (columns: string[]) => `ORDER BY ${columns.map(column => `${column} ${direction}`).join(', ')} LIMIT ${limitParam}`
    const walk = (values: string[]) => {
      const where = [...fixedColumns.map((column, index) => index === 0 ? `${column} = ANY(ARRAY[${values[index]}])` : `${column} = ${values[index]}`), ...conditions]
      return `SELECT created_at, id, document::text AS document FROM ${orders}${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`} ${orderBy([...fixedColumns, 'created_at', 'id'])}`
    }
    const text = walks.length === 1
      ? walk(walks[0]!)
      : `SELECT document FROM (${walks.map(values => `(${walk(values)})`).join(' UNION ALL ')}) AS page ${orderBy(['created_at', 'id'])}`
    const rows = await query<{ document: string }>(text, params)
    return rows.map(row => JSON.parse(row.document))
  }
}
