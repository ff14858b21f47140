// The keyset page on PostgreSQL: one bounded walk of the index whose leading columns the filter fixes.
import type { Order } from '../../schemas.js'
import type { StorageListQuery } from '../types.js'
import { columnText, type Run } from './client.js'
import type { Tables } from './tables.js'

export function listOrders ({ orders }: Tables, query: Run) {
  return async function list (listQuery: StorageListQuery): Promise<Order[]> {
    const { customerId, statuses, ids, createdFrom, createdTo, after, limit } = listQuery
    const asc = listQuery.order === 'asc'
    const params: unknown[] = []
    const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`
    const conditions: string[] = []
    // The columns an equality fixes lead the index that serves the page: (customer_id?, status?, created_at, id).
    const fixedColumns: string[] = []
    const fixedValues: string[] = []
    if (customerId !== undefined) {
      fixedColumns.push('customer_id')
      fixedValues.push(param(columnText(customerId), 'text'))
    }
    // Statuses without ids: one index walk per status, merged, so a page costs the same however many
    // orders the other statuses hold. With ids, at most 100 orders are read by primary key anyway.
    let wanted: string | undefined
    if (statuses !== undefined) {
      const statusList = param(statuses.map(columnText), 'text[]')
      if (ids === undefined) {
        wanted = statusList
        fixedColumns.push('status')
        fixedValues.push('wanted.status')
      } else {
        conditions.push(`status = ANY(${statusList})`)
      }
    }
    if (ids !== undefined) conditions.push(`id = ANY(${param(ids.map(columnText), 'text[]')})`)

    fixedColumns.forEach((column, index) => conditions.push(`${column} = ${fixedValues[index]}`))

    // The page is a range of that index between two row bounds: the tighter of the cursor and the created
    // range at each end ('' sorts before every id, so (instant, '') bounds the orders created at that
    // instant). Bounds on (created_at, id) position the scan right after the equalities and stop it.
    // The bound the scan starts from is also given on the whole index key, which only the index serving
    // the page matches, so the planner never prefers walking (created_at, id) and filtering. (The end
    // bound is not: on PostgreSQL 15 that made the scan run past it to the end of the equal columns.)
    const lower = after !== undefined && asc && (createdFrom === undefined || after.createdAt >= createdFrom)
      ? { operator: '>', createdAt: after.createdAt, id: after.id }
      : createdFrom === undefined ? undefined : { operator: '>=', createdAt: createdFrom, id: '' }
    const upper = after !== undefined && !asc && (createdTo === undefined || after.createdAt < createdTo)
      ? { operator: '<', createdAt: after.createdAt, id: after.id }
      : createdTo === undefined ? undefined : { operator: '<', createdAt: createdTo, id: '' }
    const start = asc ? lower : upper
    for (const bound of [lower, upper]) {
      if (bound === undefined) continue
      const position = [param(bound.createdAt, 'text'), param(columnText(bound.id), 'text')]
      conditions.push(`(created_at, id) ${bound.operator} (${position.join(', ')})`)
      if (bound === start && fixedColumns.length > 0) {
        conditions.push(`(${[...fixedColumns, 'created_at', 'id'].join(', ')}) ${bound.operator} (${[...fixedValues, ...position].join(', ')})`)
      }
    }
    const direction = asc ? 'ASC' : 'DESC'
    const limitParam = param(limit, 'int')
    const orderBy = (columns: string[]) => `ORDER BY ${columns.map(column => `${column} ${direction}`).join(', ')} LIMIT ${limitParam}`

    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
    const select = `SELECT created_at, id, document::text AS document FROM ${orders} ${where} ${orderBy([...fixedColumns, 'created_at', 'id'])}`
    const text = wanted === undefined
      ? select
      : `SELECT page.document FROM unnest(${wanted}) AS wanted (status) CROSS JOIN LATERAL (${select}) AS page
        ${orderBy(['page.created_at', 'page.id'])}`
    const rows = await query<{ document: string }>(text, params)
    return rows.map(row => JSON.parse(row.document))
  }
}
