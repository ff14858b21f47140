// Page cost on PostgreSQL at 10,000 and 1,000,000 orders with a skewed spread, through app.orders.list, with and without a store.
// Run by bench/run.ts (`npm run bench -- --only scale-pg`): on the server at DATABASE_URL, else PGlite.
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { balanceShapes, idOf, pageShapes, pageTime, storagePageTime } from './page-shapes.js'
import { formatCount, printTable } from './report.js'
import { loadPlugin, openStorage } from './storages.js'

const { values: flags } = parseArgs({ options: { quick: { type: 'boolean', default: false } } })
const [small, large] = flags.quick ? [10_000, 100_000] : [10_000, 1_000_000]
const PAGES = 40
const where = process.env.DATABASE_URL === undefined ? 'pglite' : 'postgres'
// On a server, tables of the benchmark's own, dropped at the end; PGlite is in memory.
const TABLE = where === 'postgres' ? 'fastify_order_bench_scale' : 'fastify_orders'

const { orderPlugin } = await loadPlugin()
const { storage, client, close } = await openStorage(where, { table: TABLE })
const app = Fastify()
await app.register(orderPlugin, { storage })
await app.ready()

/**
 * Orders `from + 1` to `to`, one a second, in SQL: the 30 oldest are shipped (a rare status at the old
 * end), the rest pending, paid or cancelled; 500 customers. Stores "eu", "us" and none in turn, but
 * orders 31 to 60 are the "outlet" store's (a rare store at the old end); every order has a reference,
 * shared by the 1,000 orders of one run (one per customer and store). One in five is settled (in runs of
 * seven), orders 61 to 90 are owed (a rare balance at the old end), the rest due. Each a real order document.
 */
async function fill (from: number, to: number): Promise<void> {
  await client!.query(`INSERT INTO ${TABLE} (id, customer_id, status, created_at, version, store, reference, balance_sign, document)
    SELECT o.id, o.customer_id, o.status, o.created_at, 1, o.store, o.reference, sign(o.balance), json_strip_nulls(json_build_object(
      'id', o.id, 'reference', o.reference, 'store', o.store, 'customerId', o.customer_id, 'status', o.status, 'currency', 'EUR',
      'items', json_build_array(json_build_object('sku', 'A-1', 'quantity', 2, 'unitPrice', 1250)), 'total', 2500,
      'paid', 2500 - o.balance, 'balance', o.balance, 'metadata', json_build_object(), 'version', 1,
      'statusHistory', json_build_array(json_build_object('status', o.status, 'at', o.created_at)),
      'createdAt', o.created_at, 'updatedAt', o.created_at))
    FROM (
      SELECT lpad(to_hex(i), 12, '0') || md5(i::text) AS id, 'cus_' || (i % 500) AS customer_id,
        CASE WHEN i <= 30 THEN 'shipped' ELSE (ARRAY['pending', 'paid', 'cancelled'])[1 + i % 3] END AS status,
        CASE WHEN i BETWEEN 31 AND 60 THEN 'outlet' ELSE (ARRAY['eu', 'us', NULL])[1 + i % 3] END AS store,
        'ref_' || (i / 1000) AS reference,
        CASE WHEN i BETWEEN 61 AND 90 THEN -500 WHEN (i / 7) % 5 = 0 THEN 0 ELSE 2500 END AS balance,
        to_char(timestamp '2020-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
      FROM generate_series($1::int + 1, $2::int) AS i) AS o`, [from, to])
  await client!.query(`ANALYZE ${TABLE}`)
}

/** The number the storage gave order `i`. */
const numberOf = async (i: number) => Number((await client!.query(`SELECT number FROM ${TABLE} WHERE id = $1`, [idOf(i)])).rows[0].number)
const shapes = pageShapes(numberOf)

const costs = new Map<string, number>()
let stored = 0
const started = Date.now()
for (const size of [small, large]) {
  await fill(stored, size)
  stored = size
  for (const [name, filterOf, scope] of shapes) costs.set(`${name} ${size}`, await pageTime(app, await filterOf(size), scope, PAGES))
  for (const [name, query] of balanceShapes) costs.set(`${name} ${size}`, await storagePageTime(storage, query, PAGES))
}
const seconds = ((Date.now() - started) / 1000).toFixed(0)
await app.close()
await close()

console.log(`Page cost on ${where === 'postgres' ? 'PostgreSQL' : 'PGlite'} (limit 20, newest first, app.orders.list, median ms of ${PAGES} pages) at ${formatCount(small)} and ${formatCount(large)} orders, the 30 oldest shipped, the next 30 the outlet store's (${seconds} s with the fills):`)
// Balance pages are timed on the storage: their label says so.
const rows = [...shapes.map(([name]) => [name, name]), ...balanceShapes.map(([name]) => [name, `${name} (storage.list)`])]
printTable(['filter', `ms at ${formatCount(small)}`, `ms at ${formatCount(large)}`, 'ratio'], rows.map(([name, label]) => {
  const [a, b] = [costs.get(`${name} ${small}`)!, costs.get(`${name} ${large}`)!]
  return [label!, a.toFixed(2), b.toFixed(2), (b / a).toFixed(2)]
}))
