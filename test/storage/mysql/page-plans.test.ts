// Every page on MySQL is one bounded walk of one index, whatever the filter and however the matching
// orders are spread: read from EXPLAIN and from the rows the server's handlers read, not from timings.
import type { RowDataPacket } from 'mysql2/promise'
import t from 'tap'
import type { StorageListQuery } from '../../../lib/storage/order-storage.js'
import { mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  const LIMIT = 21
  const ROWS = 20_000
  const CUSTOMERS = 50

  // A shop with history, as the PostgreSQL plans test has it: the 30 oldest orders are "shipped" (a rare
  // status at the old end), the rest pending, paid or cancelled; 50 customers, one order a minute,
  // numbered in that order; every 50 orders share a reference (every seventh has none) and a store
  // ("eu", "us" or none in turn); orders 31 to 60 are the rare "outlet" store's. One order in five is
  // settled (in runs of seven), 20 of the 40 oldest are owed (a rare sign at the old end), the rest due.
  const table = db.freshTable()
  await mysqlStorage({ client: db.client, table }).init()
  const digits = '(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)'
  await db.client.query(`INSERT INTO \`${table}\` (id, customer_id, status, store, reference, created_at, version, document, balance_sign)
    SELECT MD5(i), CONCAT('cus_', i % ${CUSTOMERS}),
      CASE WHEN i <= 30 THEN 'shipped' ELSE ELT(1 + i % 3, 'pending', 'paid', 'cancelled') END,
      CASE WHEN i BETWEEN 31 AND 60 THEN 'outlet' ELSE ELT(1 + (i DIV ${CUSTOMERS}) % 3, 'eu', 'us', '') END,
      CASE WHEN i % 7 = 0 THEN NULL ELSE CONCAT('ref_', i DIV ${CUSTOMERS}) END,
      DATE_FORMAT(TIMESTAMP('2026-01-01') + INTERVAL i MINUTE, '%Y-%m-%dT%H:%i:%s.000Z'), 1, CONCAT('{"id":"', MD5(i), '"}'),
      CASE WHEN i <= 40 AND i % 2 = 0 THEN -1 WHEN (i DIV 7) % 5 = 0 THEN 0 ELSE 1 END
    FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 1 AS i
      FROM ${digits} AS a, ${digits} AS b, ${digits} AS c, ${digits} AS e, ${digits} AS f) AS n
    WHERE i <= ${ROWS} ORDER BY i`)
  await db.client.query(`ANALYZE TABLE \`${table}\``)

  const minute = (i: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + i * 60_000).toISOString()
  const some = ((await db.client.query<RowDataPacket[]>(`SELECT CAST(id AS CHAR) AS id FROM \`${table}\` ORDER BY id LIMIT 50`))[0]).map(row => row.id as string)
  const numberAt = async (i: number) => Number(((await db.client.query<RowDataPacket[]>(`SELECT number FROM \`${table}\` WHERE id = MD5(?)`, [i]))[0])[0]!.number)
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
    'a common status in a short range': { statuses: ['paid'], createdFrom: minute(100), createdTo: minute(110) },
    'a rare status and a range past it': { statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
    'customer, statuses and a range': { customerId: 'cus_7', statuses: ['paid', 'shipped'], createdFrom: minute(40), createdTo: minute(2000) },
    number: { number: middle },
    'an old number': { number: old },
    'a number no order has': { number: ROWS * 10 },
    'number, customer and statuses': { number: middle, customerId: 'cus_1', statuses: ['paid', 'shipped', 'pending'] },
    'number and ids': { number: middle, ids: some },
    'reference and customer': { reference: 'ref_200', customerId: 'cus_1' },
    'reference, customer and statuses': { reference: 'ref_200', customerId: 'cus_1', statuses: ['paid', 'pending'] },
    reference: { reference: 'ref_200' },
    'the reference of the oldest orders': { reference: 'ref_0' },
    'reference and two statuses': { reference: 'ref_200', statuses: ['shipped', 'cancelled'] },
    store: { store: 'eu' },
    'the rare store of old orders': { store: 'outlet' },
    'a store no order has': { store: 'none' },
    'store and a rare status': { store: 'eu', statuses: ['shipped'] },
    'store and two statuses': { store: 'eu', statuses: ['shipped', 'pending'] },
    'store and customer': { store: 'us', customerId: 'cus_7' },
    'store, customer and three statuses': { store: 'us', customerId: 'cus_7', statuses: ['cancelled', 'paid', 'shipped'] },
    'the rare store and a range past it': { store: 'outlet', createdFrom: minute(10), createdTo: minute(15000) },
    'store and a number': { store: 'eu', number: middle },
    'store, reference and customer': { store: 'eu', reference: 'ref_201', customerId: 'cus_1' },
    'store and reference': { store: 'eu', reference: 'ref_201' },
    'a store and a reference it has no order of': { store: 'us', reference: 'ref_201' },
    'a balance due': { balance: 'due' },
    'a rare balance (owed)': { balance: 'owed' },
    'balance and a status': { balance: 'settled', statuses: ['paid'] },
    'balance and two statuses': { balance: 'due', statuses: ['shipped', 'cancelled'] },
    'customer and balance': { customerId: 'cus_7', balance: 'settled' },
    'customer, balance and two statuses': { customerId: 'cus_7', balance: 'due', statuses: ['paid', 'shipped'] },
    'store and balance': { store: 'eu', balance: 'settled' },
    'store and a rare balance': { store: 'us', balance: 'owed' },
    'store, balance and a status': { store: 'us', balance: 'due', statuses: ['paid'] },
    'store, customer and balance': { store: 'us', customerId: 'cus_7', balance: 'due' },
    'store, customer, balance and two statuses': { store: 'eu', customerId: 'cus_7', balance: 'settled', statuses: ['cancelled', 'paid'] },
    'balance, a status and a range past it': { balance: 'owed', statuses: ['shipped'], createdFrom: minute(10), createdTo: minute(15000) },
    'balance and a number': { balance: 'due', number: middle },
    'balance and a reference': { balance: 'due', reference: 'ref_200' },
    'balance, reference and customer': { balance: 'due', reference: 'ref_200', customerId: 'cus_1' }
  }

  /** The index a shape must read: named after the columns the filter fixes, or the unique one that names its orders. */
  function indexOf (filter: Partial<StorageListQuery>): string {
    if (filter.number !== undefined) return 'number_idx'
    if (filter.ids !== undefined) return 'PRIMARY'
    if (filter.reference !== undefined) {
      return filter.customerId !== undefined ? 'customer_reference_store_idx' : filter.store === undefined ? 'reference_created_idx' : 'store_reference_created_idx'
    }
    const fixed = [filter.store && 'store', filter.customerId && 'customer', filter.balance && 'balance', filter.statuses && 'status'].filter(Boolean)
    return {
      '': 'created_idx',
      customer: 'customer_created_idx',
      status: 'status_created_idx',
      'customer,status': 'customer_status_created_idx',
      store: 'store_created_idx',
      'store,customer': 'store_customer_created_idx',
      'store,status': 'store_status_created_idx',
      'store,customer,status': 'store_customer_status_idx',
      balance: 'balance_created_idx',
      'balance,status': 'balance_status_created_idx',
      'customer,balance': 'customer_balance_created_idx',
      'customer,balance,status': 'customer_balance_status_idx',
      'store,balance': 'store_balance_created_idx',
      'store,balance,status': 'store_balance_status_idx',
      'store,customer,balance': 'store_customer_balance_idx',
      'store,customer,balance,status': 'store_customer_balance_status_idx'
    }[fixed.join(',')]!
  }

  /** The rows a page may read beyond about a page per walk: the ids given, or the orders of one reference (one per customer here) in every store. */
  function removableOf (filter: Partial<StorageListQuery>): number {
    if (filter.ids !== undefined) return some.length
    if (filter.reference !== undefined && filter.customerId === undefined && filter.store === undefined) return CUSTOMERS
    return 0
  }

  const connection = await db.client.getConnection()
  t.teardown(() => connection.release())
  const handlerReads = async () => {
    const [rows] = await connection.query<RowDataPacket[]>('SHOW SESSION STATUS LIKE \'Handler_read%\'')
    return Object.fromEntries(rows.map(row => [row.Variable_name as string, Number(row.Value)]))
  }

  /** The statement `list` sends, with its values. */
  async function statementOf (query: StorageListQuery): Promise<{ sql: string, values: unknown[] }> {
    const sent: Array<{ sql: string, values: unknown[] }> = []
    const watched = Object.assign(Object.create(db.client), {
      execute: (options: { sql: string }, values: unknown[]) => { sent.push({ sql: options.sql, values }); return db.client.execute(options as never, values as never) }
    })
    await mysqlStorage({ client: watched, table }).list(query)
    return sent[0]!
  }

  t.test('every filter shape reads its one index, about a page per walk, never the whole table', async t => {
    // What reading the counters itself costs, taken off every measure.
    const base = await handlerReads()
    const again = await handlerReads()
    const overhead = Object.keys(base).reduce((sum, key) => sum + again[key]! - base[key]!, 0)
    for (const [label, filter] of Object.entries(filters)) {
      const walks = filter.ids === undefined && filter.number === undefined && filter.reference === undefined ? Math.max(1, filter.statuses?.length ?? 1) : 1
      for (const order of ['asc', 'desc'] as const) {
        for (const after of [undefined, { createdAt: minute(ROWS / 2), id: 'm' }]) {
          const what = `${label}, ${order}${after === undefined ? '' : ', after a cursor'}`
          const { sql, values } = await statementOf({ ...filter, order, after, limit: LIMIT })
          const [plan] = await connection.query<RowDataPacket[]>({ sql: `EXPLAIN ${sql}`, values })
          const reads = plan.filter(row => row.table !== null && !String(row.table).startsWith('<'))
          // (A cursor past the range's end leaves nothing to read: the optimizer says so and reads nothing.)
          const nothing = plan.some(row => /Impossible WHERE/i.test(String(row.Extra)))
          t.ok((nothing && reads.length === 0) || (reads.length === walks && reads.every(row => row.key === indexOf(filter) && row.type !== 'ALL')),
            `${what}: each walk reads ${indexOf(filter)}`, { plan: plan.map(row => [row.table, row.key, row.type, row.Extra]) })
          if (reads.length === 1 && !['PRIMARY', 'number_idx', 'customer_reference_store_idx'].includes(indexOf(filter))) {
            t.notMatch(String(reads[0]!.Extra), /filesort/, `${what}: in the index's order, no sort`)
          }
          const before = await handlerReads()
          await connection.query({ sql, values })
          const after_ = await handlerReads()
          const read = Object.keys(before).reduce((sum, key) => sum + after_[key]! - before[key]!, 0) - overhead
          // Each walk reads at most a page and one more row; merged walks are written to a temporary
          // table, read back and sorted.
          const bound = walks * (LIMIT + 2) * (walks > 1 ? 3 : 1) + removableOf(filter) + 2
          t.ok(read <= bound, `${what}: reads ${read} rows, at most ${bound}`)
        }
      }
    }
  })
}
