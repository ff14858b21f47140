// Page cost on MySQL at 10,000, 100,000 and 1,000,000 orders with the skewed spread of scale-pg.ts, through app.orders.list:
// the rows the server read for a page (its Handler_read counters, which no load on the machine moves) and the time.
// Run by bench/run.ts (`npm run bench -- --only scale-mysql`): on the server at MYSQL_URL, else the local MariaDB.
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import type { RowDataPacket } from 'mysql2/promise'
import type { ListOrdersFilter, OrderScope } from '../lib/index.js'
import { dropTablesOf, openPool } from './mysql.js'
import { balanceShapes, idOf, pageShapes, pageTime, storagePageTime, type BalanceShape } from './page-shapes.js'
import { formatCount, printTable } from './report.js'
import { libraryDir, loadPlugin } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
const sizes = flags.quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
const PAGES = 40
// Rows a fill statement inserts: 10,000, made by the server from four tables of ten digits.
const BATCH = 10_000
const TABLE = 'fastify_order_bench_scale'

const { orderPlugin } = await loadPlugin()
const { mysqlStorage } = await import(new URL('storage/mysql/mysql-storage.js', libraryDir).href) as typeof import('../lib/storage/mysql/mysql-storage.js')
// One connection, so the session counters read after a page count that page's statements.
const { pool, close } = await openPool({ connectionLimit: 1 })
await dropTablesOf(pool, TABLE)
const app = Fastify()
const storage = mysqlStorage({ client: pool, table: TABLE })
await app.register(orderPlugin, { storage })
await app.ready()

const digits = '(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)'
// Orders base + 1 to base + BATCH, made by the server (no rows sent): the columns mysqlStorage writes,
// and the document it stores (without the number, which its column holds). SQL both MariaDB and MySQL 8 take.
const fillBatch = `INSERT INTO \`${TABLE}\` (id, customer_id, status, store, reference, created_at, version, balance_sign, document)
  SELECT o.id, o.customer_id, o.status, COALESCE(o.store, ''), o.reference, o.created_at, 1, SIGN(o.balance),
    IF(o.store IS NULL, o.document, JSON_INSERT(o.document, '$.store', o.store))
  FROM (
    SELECT n.id, n.customer_id, n.status, n.store, n.reference, n.created_at, n.balance, JSON_OBJECT(
      'id', n.id, 'reference', n.reference, 'customerId', n.customer_id, 'status', n.status, 'currency', 'EUR',
      'items', JSON_ARRAY(JSON_OBJECT('sku', 'A-1', 'quantity', 2, 'unitPrice', 1250)), 'total', 2500,
      'paid', 2500 - n.balance, 'balance', n.balance, 'metadata', JSON_OBJECT(), 'version', 1,
      'statusHistory', JSON_ARRAY(JSON_OBJECT('status', n.status, 'at', n.created_at)),
      'createdAt', n.created_at, 'updatedAt', n.created_at) AS document
    FROM (
      SELECT CONCAT(LPAD(LOWER(HEX(i)), 12, '0'), MD5(i)) AS id, CONCAT('cus_', i % 500) AS customer_id,
        CASE WHEN i <= 30 THEN 'shipped' ELSE ELT(1 + i % 3, 'pending', 'paid', 'cancelled') END AS status,
        CASE WHEN i BETWEEN 31 AND 60 THEN 'outlet' ELSE ELT(1 + i % 3, 'eu', 'us', NULL) END AS store,
        CONCAT('ref_', i DIV 1000) AS reference,
        CASE WHEN i BETWEEN 61 AND 90 THEN -500 WHEN (i DIV 7) % 5 = 0 THEN 0 ELSE 2500 END AS balance,
        DATE_FORMAT(TIMESTAMP('2020-01-01 00:00:00') + INTERVAL i SECOND, '%Y-%m-%dT%H:%i:%s.000Z') AS created_at
      FROM (SELECT ? + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS i FROM ${digits} a, ${digits} b, ${digits} c, ${digits} e) AS numbers
    ) AS n
  ) AS o`

/** Orders `from + 1` to `to`, in batches, then fresh index statistics. */
async function fill (from: number, to: number): Promise<void> {
  for (let base = from; base < to; base += BATCH) await pool.query(fillBatch, [base])
  await pool.query(`ANALYZE TABLE \`${TABLE}\``)
}

/** The number the storage gave order `i`. */
const numberOf = async (i: number) => Number((await pool.query<RowDataPacket[]>(`SELECT number FROM \`${TABLE}\` WHERE id = ?`, [idOf(i)]))[0][0]!.number)
const shapes = pageShapes(numberOf)

/** The rows the server's storage engine read so far on the one connection: index lookups and steps, and table scans. */
async function rowsRead (): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>('SHOW SESSION STATUS LIKE \'Handler\\_read\\_%\'')
  return rows.reduce((sum, row) => sum + Number(row.Value), 0)
}

/** The rows read for one page of `filter` under `scope`. */
async function pageRows (filter: ListOrdersFilter, scope: OrderScope | undefined): Promise<number> {
  const before = await rowsRead()
  await app.orders.list({ filter, limit: 20 }, { scope })
  return await rowsRead() - before
}

/** The rows read for one balance page, on the storage. */
async function storagePageRows (query: BalanceShape[1]): Promise<number> {
  const before = await rowsRead()
  await storage.list({ ...query, order: 'desc', limit: 21 })
  return await rowsRead() - before
}

const costs = new Map<string, number>()
const reads = new Map<string, number>()
const fills: string[] = []
let stored = 0
for (const size of sizes) {
  const started = Date.now()
  await fill(stored, size)
  fills.push(`${formatCount(size - stored)} orders in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  stored = size
  for (const [name, filterOf, scope] of shapes) {
    const filter = await filterOf(size)
    costs.set(`${name} ${size}`, await pageTime(app, filter, scope, PAGES))
    reads.set(`${name} ${size}`, await pageRows(filter, scope))
  }
  for (const [name, query] of balanceShapes) {
    costs.set(`${name} ${size}`, await storagePageTime(storage, query, PAGES))
    reads.set(`${name} ${size}`, await storagePageRows(query))
  }
}
await app.close()
await dropTablesOf(pool, TABLE)
await close()

const [small, large] = [sizes[0]!, sizes.at(-1)!]
console.log(`Page cost on MySQL (limit 20, newest first, app.orders.list, median ms of ${PAGES} pages) at ${sizes.map(formatCount).join(', ')} orders, the 30 oldest shipped, the next 30 the outlet store's (fills: ${fills.join(', ')}):`)
// Balance pages are timed on the storage: their label says so.
const rows = [...shapes.map(([name]) => [name, name]), ...balanceShapes.map(([name]) => [name, `${name} (storage.list)`])]
printTable(['filter', ...sizes.map(size => `rows read at ${formatCount(size)}`), ...sizes.map(size => `ms at ${formatCount(size)}`), `ms ratio ${formatCount(large)} / ${formatCount(small)}`], rows.map(([name, label]) => {
  const times = sizes.map(size => costs.get(`${name} ${size}`)!)
  return [label!, ...sizes.map(size => formatCount(reads.get(`${name} ${size}`)!)), ...times.map(time => time.toFixed(2)), (times.at(-1)! / times[0]!).toFixed(2)]
}))
