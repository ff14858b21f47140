// postgresStorage with no option behind a real PgBouncer in transaction pooling mode, in front of the server of DATABASE_URL.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import pg from 'pg'
import t from 'tap'
import { runConformance } from '../../../lib/storage/conformance/run-conformance.js'
import orderPlugin, { type OrderEvent } from '../../../lib/index.js'
import { postgresStorage, POSTGRES_SCHEMA_VERSION, type PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import { createOrder, eventually, orderBody, post, storedOrder, storeOrder } from '../../helper.js'
import { pgBouncerMissing, startPgBouncer } from '../../pgbouncer.js'
import { testDatabase } from '../../postgres-helper.js'

const missing = pgBouncerMissing()
// A skipped test rather than plan(0): in test/adapter.postgres.ts this file's tests run among others.
if (missing !== undefined) t.test('postgresStorage behind PgBouncer', { skip: missing }, async () => {})
else await behindPgBouncer(process.env.DATABASE_URL!)

async function behindPgBouncer (serverUrl: string) {
  const pgbouncer = await startPgBouncer(serverUrl)
  // Straight to the server, to see what PgBouncer hides: the server's locks and catalog.
  const server = new pg.Pool({ connectionString: serverUrl, max: 1 })
  // Torn down last (teardowns run last added first): the database's pools end before PgBouncer does.
  t.teardown(async () => {
    await server.end()
    await pgbouncer.stop()
  })
  const db = await testDatabase(t, pgbouncer.url)

  /** The storage's upgrade lock on `table` as pg_locks shows it: a bigint key, its high and low halves. */
  const locksOf = async (table: string) => {
    const key = BigInt.asUintN(64, createHash('sha256').update(`fastify-order:${table}`).digest().readBigInt64BE(0))
    const { rows } = await server.query(`SELECT count(*)::int AS held FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $1::oid AND objid = $2::oid AND objsubid = 1`, [String(key >> 32n), String(key & 0xffffffffn)])
    return rows[0].held as number
  }

  // A transaction on a connection lent through PgBouncer, as a host opens one.
  const { transaction } = db

  t.test('PgBouncer loses a named statement, and the storage sends it again unnamed without a failed call', async t => {
    const table = db.freshTable()
    await postgresStorage({ client: db.client, table }).init!()
    const pool = new pg.Pool({ connectionString: pgbouncer.url, max: 1 })
    t.teardown(() => pool.end())
    // Still a pg.Pool, so the storage names its statements; each call and its error code recorded.
    const calls: Array<{ named: boolean, error?: string }> = []
    const query = pool.query.bind(pool) as (config: unknown, values?: unknown[]) => Promise<pg.QueryResult>
    Object.assign(pool, {
      query: async (config: unknown, values?: unknown[]) => {
        const call: { named: boolean, error?: string } = { named: typeof config !== 'string' }
        calls.push(call)
        return query(config, values).catch(err => { call.error = err.code; throw err })
      }
    })
    const storage = postgresStorage({ client: pool, table })
    const first = storedOrder()
    await storeOrder(storage, first)
    // A host's transaction takes the server connection that statement was parsed on (PgBouncer reuses
    // the last one freed), so the next create, the same statement, runs on another one.
    const host = await db.session()
    await host.query('BEGIN', [])
    await host.query('SELECT 1', [])
    const second = storedOrder()
    t.same(await storeOrder(storage, second), { created: true, order: second }, 'the create succeeds')
    await host.query('COMMIT', [])
    t.same(calls.slice(0, 3), [{ named: true }, { named: true, error: '26000' }, { named: false }], 'named, lost ("does not exist"), sent again unnamed')
    calls.length = 0
    t.same(await storage.get(first.id), first)
    t.same(calls, [{ named: false }], 'unnamed from then on')
  })

  t.test('two instances starting together on a fresh table: one creates the tables, neither leaves a lock', async t => {
    const table = db.freshTable()
    const instances = [db.connect(), db.connect()].map(client => postgresStorage({ client, table }))
    // Their indexes are built CONCURRENTLY while the lock's transaction is open: it does not hold them up.
    await Promise.all(instances.map(storage => storage.init!()))
    const { rows: [layout] } = await server.query(`SELECT (SELECT version FROM "${table}_schema") AS version,
      (SELECT count(*)::int FROM pg_index WHERE NOT indisvalid AND indrelid = ANY (ARRAY[$1, $2]::regclass[])) AS invalid`, [`"${table}"`, `"${table}_events"`])
    t.same(layout, { version: POSTGRES_SCHEMA_VERSION, invalid: 0 })
    t.equal(await locksOf(table), 0, 'no advisory lock on the server')
    const order = storedOrder()
    await storeOrder(instances[0]!, order)
    t.same(await instances[1]!.get(order.id), order, 'one store')
  })

  t.test('an upgrade whose session PgBouncer moves to another server connection part way leaves no lock', async t => {
    const table = db.freshTable()
    const pool = db.connect() as pg.Pool
    const host = await db.session()
    // The pool as the storage sees it, its connections watched: once one has taken the lock, a host's
    // transaction takes the server connection PgBouncer freed last, so later statements run elsewhere.
    let moved = false
    const watched = {
      totalCount: 0,
      query: pool.query.bind(pool),
      connect: async () => {
        const connection = await pool.connect()
        return {
          query: async (text: string, params: unknown[]) => {
            const result = await connection.query(text, params)
            if (!moved && /advisory/.test(text) && result.rows[0]?.locked === true) {
              moved = true
              await host.query('BEGIN', [])
              await host.query('SELECT 1', [])
            }
            return result
          },
          release: (err?: Error) => connection.release(err)
        }
      }
    }
    await postgresStorage({ client: watched, table }).init!()
    await host.query('COMMIT', [])
    t.ok(moved)
    t.equal(await locksOf(table), 0, 'no advisory lock on the server')
  })

  t.test('the conformance suite passes', async t => {
    await t.resolves(runConformance(() => db.storage(), { transaction }))
  })

  t.test('an app serves, delivers, joins the host\'s transaction and restarts, and leaves no lock', async t => {
    const table = db.freshTable()
    const start = async (client: PostgresClient) => {
      const app = Fastify()
      t.teardown(() => app.close())
      await app.register(orderPlugin, { storage: postgresStorage({ client, table }) })
      return app
    }
    const app = await start(db.connect())
    const delivered: OrderEvent[] = []
    app.orders.subscribe('erp', async event => { delivered.push(event) }, { from: 'start', pollInterval: 20 })

    const made = [await createOrder(app, { customerId: 'cus_1' }), await createOrder(app, { customerId: 'cus_2', reference: 'cart_2' })]
    const moved = await post(app, 'updateOrderStatus', { id: made[0]!.id, status: 'paid' })
    t.equal(moved.status, 200)
    t.equal((await post(app, 'createOrder', orderBody({ customerId: 'cus_2', reference: 'cart_2' }))).body.code, 'ORDER_REFERENCE_TAKEN')
    const page = await post(app, 'getOrderList', { filter: { customerId: 'cus_1' } })
    t.same(page.body.items.map((order: { id: string, status: string }) => [order.id, order.status]), [[made[0]!.id, 'paid']])

    // The host's transactions, on a connection PgBouncer lends it for as long as each lasts.
    const host = await (db.client as pg.Pool).connect()
    t.teardown(() => host.release())
    const inHost = async (commit: boolean) => {
      await host.query('BEGIN')
      const order = await app.orders.withTransaction(host).create(orderBody({ customerId: 'cus_3', reference: commit ? 'kept' : 'dropped' }))
      await host.query(commit ? 'COMMIT' : 'ROLLBACK')
      return order
    }
    const kept = await inHost(true)
    await inHost(false)
    t.same((await app.orders.list({ filter: { customerId: 'cus_3' } })).items.map(order => order.id), [kept.id], 'the committed one only')
    await eventually('the subscription delivers every committed change', () => delivered.length === 4)
    t.same(delivered.map(event => [event.type, event.order.id]), [
      ['created', made[0]!.id], ['created', made[1]!.id], ['statusChanged', made[0]!.id], ['created', kept.id]
    ])

    // A restart on new connections: the orders are there, and the subscription resumes after its checkpoint.
    await app.close()
    const again = await start(db.connect())
    const resumed: OrderEvent[] = []
    again.orders.subscribe('erp', async event => { resumed.push(event) }, { pollInterval: 20 })
    const later = await createOrder(again, { customerId: 'cus_4' })
    await eventually('the new order is delivered', () => resumed.length === 1)
    await sleep(100)
    t.same(resumed.map(event => event.order.id), [later.id], 'only what came after the checkpoint')
    t.equal((await again.orders.list({ limit: 10 })).items.length, 4)
    t.same((await again.orders.list({ filter: { reference: 'dropped' } })).items, [], 'the rolled-back one never')
    t.equal(await locksOf(table), 0, 'no advisory lock on the server')
  })
}
