// Every page is one bounded walk of an index, whatever the filter and however the matching orders are
// spread: read from the plans PostgreSQL runs (EXPLAIN ANALYZE), not from timings.
import t from 'tap'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import type { StorageListQuery } from '../../../lib/storage/order-storage.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)
const LIMIT = 21
const ROWS = 20_000

const CUSTOMERS = 50
const SHARED = 8_000

// A shop with history: the 30 oldest orders are "shipped" (a rare status, at the old end), the rest are
// pending, paid or cancelled; 50 customers, one order a minute, numbered in that order. Every 50 orders
// in a row share a reference, one order per customer (but every seventh order has none), and a store:
// "eu", "us" or none in turn, so every customer has orders in each; orders 31 to 60 are the "outlet"
// store's, a rare one at the old end. The statistics see it all.
const table = db.freshTable()
await postgresStorage({ client: db.client, table }).init!()
await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, reference, store, document, balance_sign)
  SELECT md5(i::text), 'cus_' || (i % ${CUSTOMERS}),
    CASE WHEN i <= 30 THEN 'shipped' ELSE (ARRAY['pending', 'paid', 'cancelled'])[1 + i % 3] END,
    to_char(timestamp '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1,
    CASE WHEN i % 7 = 0 THEN NULL ELSE 'ref_' || (i / ${CUSTOMERS}) END,
    CASE WHEN i BETWEEN 31 AND 60 THEN 'outlet' ELSE (ARRAY['eu', 'us', NULL])[1 + (i / ${CUSTOMERS}) % 3] END, '{}',
    CASE WHEN i <= 40 AND i % 2 = 0 THEN -1 WHEN (i / 7) % 5 = 0 THEN 0 ELSE 1 END
  FROM generate_series(1, ${ROWS}) AS i ORDER BY i`, [])
// One reference many stores share: SHARED orders of other stores, and a few of "eu" among them.
await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, reference, store, document, balance_sign)
  SELECT md5('shared' || i), 'cus_shared_' || i, 'paid',
    to_char(timestamp '2026-01-01' + i * interval '1 minute' + interval '30 seconds', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1,
    'ref_shared', CASE WHEN i % 400 = 0 THEN 'eu' ELSE 'shop_' || (i % 97) END, '{}', 1
  FROM generate_series(1, ${SHARED}) AS i ORDER BY i`, [])
await db.client.query(`ANALYZE "${table}"`, [])

const minute = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
const some = (await db.client.query(`SELECT id FROM "${table}" ORDER BY id LIMIT 50`, [])).rows.map(row => row.id as string)
/** The number of the order of minute `i`. */
const numberAt = async (i: number) => Number((await db.client.query(`SELECT number FROM "${table}" WHERE id = md5($1::int::text)`, [i])).rows[0].number)
const [middle, old] = [await numberAt(ROWS / 2 + 1), await numberAt(20)]

const filters: Record<string, Partial<StorageListQuery>> = {
  'no filter': {},
  customer: { customerId: 'cus_7' },
  'a rare status': { statuses: ['shipped'] },
  'a common status': { statuses: ['paid'] },
  'a rare and a common status': { statuses: ['shipped', 'cancelled'] },
  'a status no order has': { statuses: ['refunded'] },
  'customer and a rare status': { customerId: 'cus_7', statuses: ['shipped'] },
  'customer and three statuses': { customerId: 'cus_7', statuses: ['cancelled', 'paid', 'shipped'] },
  ids: { ids: some },
  'ids, statuses and customer': { ids: some, statuses: ['paid', 'shipped'], customerId: 'cus_7' },
  'created range': { createdFrom: minute(5000), createdTo: minute(5100) },
  // Few matches near one end of a long run of the same status: the walk must stop at the range's end.
  'a common status in a short range': { statuses: ['paid'], createdFrom: minute(100), createdTo: minute(110) },
  'a rare status and a range past it': { statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
  'customer, statuses and a range': { customerId: 'cus_7', statuses: ['paid', 'shipped'], createdFrom: minute(40), createdTo: minute(2000) },
  // A number names one order, through its unique index; the other filters are conditions on it.
  number: { number: middle },
  'an old number': { number: old },
  'a number no order has': { number: ROWS * 10 },
  'number and customer': { number: middle, customerId: 'cus_1' },
  'number, customer and statuses': { number: middle, customerId: 'cus_1', statuses: ['paid', 'shipped', 'pending'] },
  'number, statuses and a range': { number: old, statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
  'number and ids': { number: middle, ids: some },
  // A reference with a customer names one order, through the unique (customer, reference) index.
  'reference and customer': { reference: 'ref_200', customerId: 'cus_1' },
  'reference, customer and statuses': { reference: 'ref_200', customerId: 'cus_1', statuses: ['paid', 'pending'] },
  'reference, customer and a range': { reference: 'ref_0', customerId: 'cus_20', createdFrom: minute(10), createdTo: minute(15000) },
  // A reference alone: a walk of (reference, created_at, id), statuses a condition on it.
  reference: { reference: 'ref_200' },
  'the reference of the oldest orders': { reference: 'ref_0' },
  'a reference no order has': { reference: 'ref_none' },
  'reference and a range': { reference: 'ref_200', createdFrom: minute(10010), createdTo: minute(10030) },
  'reference and a status': { reference: 'ref_200', statuses: ['paid'] },
  'reference and a rare status': { reference: 'ref_0', statuses: ['shipped'] },
  'reference and a status none of its orders has': { reference: 'ref_200', statuses: ['shipped'] },
  'reference and two statuses': { reference: 'ref_200', statuses: ['shipped', 'cancelled'] },
  // A store, as filter.store or a store scope asks: a walk of an index the store leads.
  store: { store: 'eu' },
  'the rare store of old orders': { store: 'outlet' },
  'a store no order has': { store: 'none' },
  'store and a common status': { store: 'us', statuses: ['paid'] },
  'store and a rare status': { store: 'eu', statuses: ['shipped'] },
  'the rare store and a status': { store: 'outlet', statuses: ['cancelled'] },
  'store and two statuses': { store: 'eu', statuses: ['shipped', 'pending'] },
  'store and customer': { store: 'us', customerId: 'cus_7' },
  'the rare store and customer': { store: 'outlet', customerId: 'cus_40' },
  'store, customer and a rare status': { store: 'eu', customerId: 'cus_7', statuses: ['shipped'] },
  'store, customer and three statuses': { store: 'us', customerId: 'cus_7', statuses: ['cancelled', 'paid', 'shipped'] },
  'store and a created range': { store: 'eu', createdFrom: minute(5000), createdTo: minute(5100) },
  'the rare store and a range past it': { store: 'outlet', createdFrom: minute(10), createdTo: minute(15000) },
  'store, customer, a status and a range': { store: 'us', customerId: 'cus_7', statuses: ['paid'], createdFrom: minute(40), createdTo: minute(12000) },
  'store and a number': { store: 'eu', number: middle },
  'store and ids': { store: 'us', ids: some },
  'store and a reference': { store: 'us', reference: 'ref_200' },
  'store, reference and customer': { store: 'eu', reference: 'ref_201', customerId: 'cus_1' },
  'another store, reference and customer': { store: 'us', reference: 'ref_201', customerId: 'cus_1' },
  // A store's page of a reference thousands of other stores' orders share: they are never walked.
  'store and a reference other stores share': { store: 'eu', reference: 'ref_shared' },
  'store, a status and a reference other stores share': { store: 'eu', reference: 'ref_shared', statuses: ['paid'] },
  'another store and a reference other stores share': { store: 'us', reference: 'ref_shared' },
  'store, customer and a reference other stores share': { store: 'eu', reference: 'ref_shared', customerId: 'cus_shared_400' },
  // A balance sign, alone or with the other filters: a walk of an index the sign leads or follows the store and customer in.
  'a balance due': { balance: 'due' },
  'a balance settled': { balance: 'settled' },
  'a rare balance (owed)': { balance: 'owed' },
  'balance and a status': { balance: 'settled', statuses: ['paid'] },
  'a rare balance and a status': { balance: 'owed', statuses: ['shipped'] },
  'balance and two statuses': { balance: 'due', statuses: ['shipped', 'cancelled'] },
  'customer and balance': { customerId: 'cus_7', balance: 'settled' },
  'customer, balance and two statuses': { customerId: 'cus_7', balance: 'due', statuses: ['paid', 'shipped'] },
  'store and balance': { store: 'eu', balance: 'settled' },
  'store and a rare balance': { store: 'us', balance: 'owed' },
  'store, balance and a status': { store: 'us', balance: 'due', statuses: ['paid'] },
  'store, customer and balance': { store: 'us', customerId: 'cus_7', balance: 'settled' },
  'customer and a common balance': { customerId: 'cus_7', balance: 'due' },
  'store, customer, balance and two statuses': { store: 'eu', customerId: 'cus_7', balance: 'settled', statuses: ['cancelled', 'paid'] },
  'balance and a created range': { balance: 'settled', createdFrom: minute(5000), createdTo: minute(5100) },
  'balance, a status and a range past it': { balance: 'owed', statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
  'balance and a number': { balance: 'due', number: middle },
  'balance and ids': { balance: 'settled', ids: some },
  'balance and a reference': { balance: 'due', reference: 'ref_200' },
  'balance, reference and customer': { balance: 'due', reference: 'ref_200', customerId: 'cus_1' }
}

/**
 * The one index a page of the shape reads, where the filter names its orders or fixes a reference or a
 * store: the unique index of the number, the primary key of the ids, the unique (customer, reference,
 * store) index, the walk of the reference, or an index the store leads (a store of fewer orders than
 * about two pages may be read whole from another of them and sorted). No other index is ANDed in,
 * whatever the other filters.
 */
function indexOf (filter: Partial<StorageListQuery>): RegExp | undefined {
  const named = (index: string) => new RegExp(`^${table}_${index}$`)
  if (filter.number !== undefined) return named('number_idx')
  if (filter.ids !== undefined) return named('pkey')
  if (filter.reference !== undefined && filter.customerId !== undefined) return named('customer_reference_store_idx')
  if (filter.reference !== undefined) return named(filter.store === undefined ? 'reference_created_idx' : 'store_reference_created_idx')
  // With a balance, an index of its sign: (store?, customer?, balance_sign, status?, created_at, id).
  if (filter.balance !== undefined) return named('(store_)?(customer_)?bal\\w*_idx')
  if (filter.store !== undefined) return named('store_\\w+_idx')
  return undefined
}

/**
 * The rows a page may read and throw away, beyond about a page per walk: the given ids, the one order a
 * number names or a customer's reference names in a store, or with a reference and statuses, the
 * orders of that reference (of the store, with one; one per customer at most, here).
 */
function removableOf (filter: Partial<StorageListQuery>): number {
  if (filter.ids !== undefined) return some.length
  // With a store, that store's orders of the reference (the SHARED of other stores are never read).
  if (filter.reference !== undefined && filter.customerId === undefined && (filter.statuses !== undefined || filter.balance !== undefined)) return CUSTOMERS
  return filter.number !== undefined || filter.reference !== undefined ? 1 : 0
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows': number
  'Actual Loops': number
  'Rows Removed by Filter'?: number
  'Shared Hit Blocks': number
  'Shared Read Blocks': number
  Plans?: PlanNode[]
}
const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

/** The plan of the statement `list` runs, executed with its parameters. */
async function planOfPage (query: StorageListQuery): Promise<PlanNode> {
  const statements: Array<[string, unknown[]]> = []
  await postgresStorage({ client: { query: async (text, params) => { statements.push([text, params]); return db.client.query(text, params) } }, table }).list(query)
  const [[text, params]] = statements as [[string, unknown[]]]
  const { rows: [row] } = await db.client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params)
  return row['QUERY PLAN'][0].Plan
}

t.test('every filter shape reads about limit + 1 rows per status walked, from an index, whatever the spread', async t => {
  for (const [label, filter] of Object.entries(filters)) {
    // One walk per status, but for a number, ids or a reference, whose statuses are a condition.
    const walks = filter.ids === undefined && filter.number === undefined && filter.reference === undefined ? Math.max(1, filter.statuses?.length ?? 1) : 1
    const index = indexOf(filter)
    for (const order of ['asc', 'desc'] as const) {
      for (const after of [undefined, { createdAt: minute(ROWS / 2), id: 'm' }]) {
        const what = `${label}, ${order}${after === undefined ? '' : ', after a cursor'}`
        const nodes = nodesOf(await planOfPage({ ...filter, order, after, limit: LIMIT }))
        // The table's own reads, and the bitmaps of its indexes that feed them.
        const reads = nodes.filter(node => node['Relation Name'] === table || node['Node Type'] === 'Bitmap Index Scan')
        t.ok(reads.length > 0 && reads.every(node => node['Node Type'] !== 'Seq Scan'), `${what}: read from an index`)
        if (index !== undefined) {
          const used = nodes.flatMap(node => node['Index Name'] === undefined ? [] : [node['Index Name']])
          t.ok(used.length > 0 && used.every(name => index.test(name)) && new Set(used).size === 1, `${what}: read from one index, ${index.source}`, { used })
        }
        for (const node of reads) {
          // With ids, up to 50 orders are fetched by primary key and the rest of the filter applied.
          const removable = removableOf(filter)
          t.ok((node['Rows Removed by Filter'] ?? 0) <= removable, `${what}: no row read and thrown away${removable === 0 ? '' : ` beyond ${removable}`}`,
            { removed: node['Rows Removed by Filter'] })
          // (A status with fewer orders than about two pages may be read in one go and sorted.)
          t.ok(node['Actual Rows'] * node['Actual Loops'] <= Math.max(2 * LIMIT, removable), `${what}: at most about a page per walk`, { rows: node['Actual Rows'] })
          // An index walk that ran on past the page's end would touch many index pages for few rows
          // (with ids, each is looked up by primary key).
          const blocks = node['Shared Hit Blocks'] + node['Shared Read Blocks']
          t.ok(blocks <= 2 * LIMIT + 8 + 4 * removable, `${what}: stops at the page's end`, { blocks })
        }
        for (const sort of nodes.filter(node => node['Node Type'] === 'Sort')) {
          t.ok(sort['Actual Rows'] <= Math.max(walks * 2 * LIMIT, removableOf(filter)), `${what}: sorts no more than the walks read`, { rows: sort['Actual Rows'] })
        }
      }
    }
  }
})
