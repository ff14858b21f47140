// withTransaction needs an open transaction, checked once per transaction; guards run inside the host's transaction.
import type { PGlite, Transaction } from '@electric-sql/pglite'
import Fastify from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import orderPlugin, { defaultWorkflow, type TransactionClient, type TransitionGuard } from '../../../lib/index.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import { orderBody } from '../../helper.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

/** A host's own pool on the server; on PGlite, the one database. */
function hostPool (t: Test): pg.Pool | undefined {
  if (!db.server) return undefined
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 })
  t.teardown(() => pool.end())
  return pool
}

/** Runs `work` on a client of the host's: in a transaction it opened (BEGIN … COMMIT or PGlite's), or, with `begin` false, on a client with none. */
async function onHostClient<T> (pool: pg.Pool | undefined, begin: boolean, work: (client: TransactionClient) => Promise<T>): Promise<T> {
  if (pool === undefined) {
    if (!begin) return work(db.client as PGlite)
    return (db.client as PGlite).transaction(async (tx: Transaction) => work(tx))
  }
  const client = await pool.connect()
  try {
    if (begin) await client.query('BEGIN')
    const value = await work(client)
    if (begin) await client.query('COMMIT')
    return value
  } catch (err) {
    if (begin) await client.query('ROLLBACK')
    throw err
  } finally {
    client.release()
  }
}

async function appWith (t: Test, guards: Record<string, TransitionGuard> = {}) {
  const table = db.freshTable()
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }), workflow: { ...defaultWorkflow, guards } })
  await app.ready()
  return { app, table }
}

t.test('withTransaction on a client with no transaction open is ORDER_INVALID_OPTIONS saying to run BEGIN first, and stores nothing', async t => {
  const { app } = await appWith(t)
  const order = await app.orders.create(orderBody())
  await onHostClient(hostPool(t), false, async client => {
    const orders = app.orders.withTransaction(client)
    await t.rejects(orders.create(orderBody({ reference: 'cart_1' })), { code: 'ORDER_INVALID_OPTIONS', message: /run BEGIN on it first/ })
    await t.rejects(orders.updateStatus({ id: order.id, status: 'paid' }), { code: 'ORDER_INVALID_OPTIONS' })
    await t.rejects(orders.list(), { code: 'ORDER_INVALID_OPTIONS' })
  })
  t.same((await app.orders.list()).items.map(({ id, status }) => [id, status]), [[order.id, 'pending']], 'no order made, none moved')
})

t.test('the open transaction is checked once per transaction, not once per call, on a client that cannot say', async t => {
  const { app } = await appWith(t)
  for (const round of [1, 2]) {
    const statements: string[] = []
    await onHostClient(hostPool(t), true, async client => {
      // A client that tells nothing of its transaction, as a wrapper of the host's would.
      const plain = { query: (text: string, params: unknown[]) => { statements.push(text); return client.query(text, params) } }
      const orders = app.orders.withTransaction(plain)
      const order = await orders.create(orderBody({ reference: `cart_${round}` }))
      await orders.updateStatus({ id: order.id, status: 'paid' })
      await app.orders.withTransaction(plain).list()
    })
    t.equal(statements.filter(text => text.startsWith('SAVEPOINT')).length, 1, `transaction ${round}: one check for three calls`)
  }
})

t.test('a pg client that says it is in a transaction is not asked', { skip: !db.server && 'a pg client needs the server' }, async t => {
  const { app } = await appWith(t)
  const pool = hostPool(t)!
  const client = await pool.connect()
  t.teardown(() => client.release())
  const sent: string[] = []
  const query = client.query.bind(client)
  client.query = ((text: string, params: unknown[]) => { sent.push(String(text)); return query(text, params) }) as never
  await client.query('BEGIN')
  await app.orders.withTransaction(client).create(orderBody())
  await client.query('ROLLBACK')
  t.notOk(sent.some(text => text.startsWith('SAVEPOINT')), 'its transaction status said so')
})

t.test('a guard runs inside the host\'s transaction: it reads the host\'s own uncommitted rows', async t => {
  let host: TransactionClient | undefined
  const seen: number[] = []
  const { app, table } = await appWith(t, {
    shipped: async ({ order }) => {
      const { rows } = await host!.query(`SELECT count(*)::int AS n FROM "${table}_parcels" WHERE order_id = $1`, [order.id])
      const parcels = (rows[0] as { n: number }).n
      seen.push(parcels)
      return parcels > 0 || 'an order ships once it has a parcel'
    }
  })
  await db.client.query(`CREATE TABLE "${table}_parcels" (order_id text NOT NULL)`, [])
  t.teardown(() => db.client.query(`DROP TABLE IF EXISTS "${table}_parcels"`, []))
  const order = await app.orders.create(orderBody())
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const pool = hostPool(t)
  await onHostClient(pool, true, async client => {
    host = client
    const orders = app.orders.withTransaction(client)
    await t.rejects(orders.updateStatus({ id: order.id, status: 'shipped' }), { code: 'ORDER_TRANSITION_REFUSED', message: 'an order ships once it has a parcel' })
    await client.query(`INSERT INTO "${table}_parcels" VALUES ($1)`, [order.id])
    t.equal((await orders.updateStatus({ id: order.id, status: 'shipped' })).status, 'shipped', 'the refusal left the transaction usable')
  })
  t.same(seen, [0, 1], 'the guard saw the row the transaction wrote before it committed')
  t.equal((await app.orders.list({ filter: { ids: [order.id] } })).items[0]!.version, 3, 'one move stored')
})

t.test('a guard that throws inside the host\'s transaction passes its error through and stores nothing', async t => {
  const { app } = await appWith(t, { paid: () => { throw Object.assign(new Error('payment required'), { statusCode: 402 }) } })
  const order = await app.orders.create(orderBody())
  await t.rejects(onHostClient(hostPool(t), true, async client => app.orders.withTransaction(client).updateStatus({ id: order.id, status: 'paid' })),
    { message: 'payment required', statusCode: 402 })
  t.equal((await app.orders.list()).items[0]!.version, 1)
})
