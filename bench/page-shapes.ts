// The page shapes the scale benchmarks time at each store size, and how one is timed: every filter of sections 3 and 15, over
// the spread both fills make (order i made at 2020-01-01 + i s; the 30 oldest shipped, the next 30 the
// outlet store's; stores eu, us and none in turn; 500 customers; a reference per 1,000 orders; one order in
// five settled, in runs of seven, orders 61 to 90 owed, the rest due), and the balance pages of section 17.
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { ListOrdersFilter, OrderScope } from '../lib/index.js'
import type { OrderStorage, StorageListQuery } from '../lib/storage/order-storage.js'
import { median } from './report.js'

/** The id both fills give order `i`. */
export const idOf = (i: number) => i.toString(16).padStart(12, '0') + createHash('md5').update(String(i)).digest('hex')

export const instant = (i: number) => new Date(Date.parse('2020-01-01T00:00:00.000Z') + i * 1000).toISOString()

/** A page's filter at a size, and the scope it is read under. */
export type Shape = [name: string, filterOf: (size: number) => ListOrdersFilter | Promise<ListOrdersFilter>, scope?: OrderScope]

/** Every shape; `numberOf(i)` reads the number the storage gave order `i`. */
export function pageShapes (numberOf: (i: number) => Promise<number>): Shape[] {
  const euStaff = { store: 'eu', actor: 'staff_7' }
  return [
    ['none', () => ({})],
    ['customer', () => ({ customerId: 'cus_7' })],
    ['status: shipped (the 30 oldest)', () => ({ status: 'shipped' })],
    ['status: [shipped, cancelled]', () => ({ status: ['shipped', 'cancelled'] })],
    ['customer + status', () => ({ customerId: 'cus_7', status: 'paid' })],
    ['created range', size => ({ createdFrom: instant(size / 4), createdTo: instant(size / 2) })],
    ['store: eu', () => ({ store: 'eu' })],
    ['store: outlet (30 old orders)', () => ({ store: 'outlet' })],
    ['store + status', () => ({ store: 'eu', status: 'paid' })],
    ['store + status: shipped', () => ({ store: 'eu', status: 'shipped' })],
    ['store: outlet + status', () => ({ store: 'outlet', status: 'cancelled' })],
    ['store + customer', () => ({ store: 'us', customerId: 'cus_7' })],
    ['store + customer + status', () => ({ store: 'us', customerId: 'cus_7', status: 'pending' })],
    ['store + created range', size => ({ store: 'eu', createdFrom: instant(size / 4), createdTo: instant(size / 2) })],
    ['store: outlet + created range', size => ({ store: 'outlet', createdFrom: instant(1), createdTo: instant(size / 2) })],
    ['eu scope', () => ({}), euStaff],
    ['eu scope + status', () => ({ status: 'cancelled' }), euStaff],
    ['eu scope + customer', () => ({ customerId: 'cus_11' }), euStaff],
    ['eu scope + ids', size => ({ ids: [1, 2, 3, size / 2, size / 2 + 1, size].map(idOf) }), euStaff],
    ['eu scope + number', async size => ({ number: await numberOf(size / 2 + 1) }), euStaff],
    ['eu scope + reference', size => ({ reference: `ref_${size / 2000}` }), euStaff],
    ['eu scope + reference + customer', size => ({ reference: `ref_${size / 2000}`, customerId: 'cus_7' }), euStaff]
  ]
}

/** Median time of one page (limit 20), in ms, over `pages` pages after a warm-up of 10. */
export async function pageTime (app: FastifyInstance, filter: ListOrdersFilter, scope: OrderScope | undefined, pages: number): Promise<number> {
  for (let page = 0; page < 10; page++) await app.orders.list({ filter, limit: 20 }, { scope })
  const times: number[] = []
  for (let page = 0; page < pages; page++) {
    const start = process.hrtime.bigint()
    await app.orders.list({ filter, limit: 20 }, { scope })
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return median(times)
}

/**
 * A balance page's query (section 17), timed on the storage itself: what the filter costs the database,
 * whatever the rules around it do.
 */
export type BalanceShape = [name: string, query: Omit<StorageListQuery, 'order' | 'limit'>]

/** Every balance shape: alone and with each filter it combines with (statuses, customer, store). */
export const balanceShapes: BalanceShape[] = [
  ['balance: due', { balance: 'due' }],
  ['balance: owed (30 old orders)', { balance: 'owed' }],
  ['balance: settled + status', { balance: 'settled', statuses: ['paid'] }],
  ['balance: owed + status', { balance: 'owed', statuses: ['pending', 'cancelled'] }],
  ['balance + customer', { balance: 'due', customerId: 'cus_7' }],
  ['balance + customer + status', { balance: 'settled', customerId: 'cus_7', statuses: ['pending'] }],
  ['balance + store', { balance: 'settled', store: 'eu' }],
  ['balance + store + status', { balance: 'due', store: 'eu', statuses: ['paid'] }],
  ['balance + store + customer', { balance: 'due', store: 'us', customerId: 'cus_7' }],
  ['balance + store + customer + status', { balance: 'due', store: 'us', customerId: 'cus_7', statuses: ['pending'] }]
]

/** Median time of one balance page (limit 21, as the rules ask for 20, newest first) on `storage`, in ms, over `pages` pages after a warm-up of 10. */
export async function storagePageTime (storage: Pick<OrderStorage, 'list'>, query: BalanceShape[1], pages: number): Promise<number> {
  const page = { ...query, order: 'desc' as const, limit: 21 }
  for (let warm = 0; warm < 10; warm++) await storage.list(page)
  const times: number[] = []
  for (let i = 0; i < pages; i++) {
    const start = process.hrtime.bigint()
    await storage.list(page)
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return median(times)
}
