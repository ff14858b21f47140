// app.orders.withTransaction: the order, its event and the host's writes commit or roll back together, on PGlite and on the server.
import { setTimeout as sleep } from 'node:timers/promises'
import type { PGlite, Transaction } from '@electric-sql/pglite'
import Fastify from 'fastify'
import pg from 'pg'
import t, { type Test } from 'tap'
import orderPlugin, { memoryStorage, type Order, type OrderEvent, type TransactionClient } from '../../../lib/index.js'
import { postgresStorage } from '../../../lib/storage/postgres/postgres-storage.js'
import { eventually, orderBody } from '../../helper.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

/** A host's own connection pool on the server; on PGlite, the one database. */
function hostPool (t: Test, max: number): pg.Pool | undefined {
  if (!db.server) return undefined
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max })
  t.teardown(() => pool.end())
  return pool
}

/**
 * Runs `work` in a transaction the host opens, then commits it, or rolls it back when `work` says so
 * (or throws): BEGIN ... COMMIT on a pooled pg client, `db.transaction` on PGlite.
 */
async function inTransaction<T> (pool: pg.Pool | undefined, work: (client: TransactionClient) => Promise<{ value: T, commit: boolean }>): Promise<T> {
  if (pool === undefined) {
    return (db.client as PGlite).transaction(async (tx: Transaction) => {
      const { value, commit } = await work(tx)
      if (!commit) await tx.rollback()
      return value
    })
  }
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { value, commit } = await work(client)
    await client.query(commit ? 'COMMIT' : 'ROLLBACK')
    return value
  } catch (err) {
    await client.query('ROLLBACK')
    throw err
  } finally {
    client.release()
  }
}

/** The plugin on a table of its own, a stock table of the host's beside it, and a log of the created listener. */
async function shop (t: Test, units: number) {
  const table = db.freshTable()
  const stock = `${table}_stock`
  await db.client.query(`CREATE TABLE "${stock}" (sku text PRIMARY KEY, quantity int NOT NULL)`, [])
  await db.client.query(`INSERT INTO "${stock}" VALUES ('A-1', $1::int)`, [units])
  t.teardown(() => db.client.query(`DROP TABLE IF EXISTS "${stock}"`, []))
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  await app.ready()
  const created: Order[] = []
  app.orders.on('created', order => { created.push(order) })
  /** Takes a unit and creates its order in one transaction; no order when the stock is gone. */
  const checkout = (client: TransactionClient, customerId: string) => async () => {
    const taken = await client.query(`UPDATE "${stock}" SET quantity = quantity - 1 WHERE sku = 'A-1' AND quantity > 0 RETURNING sku`, [])
    if (taken.rows.length === 0) return { value: undefined, commit: false }
    return { value: await app.orders.withTransaction(client).create(orderBody({ customerId })), commit: true }
  }
  const quantity = async () => (await db.client.query(`SELECT quantity FROM "${stock}"`, [])).rows[0].quantity as number
  const feed = async () => {
    const events: OrderEvent[] = []
    for (;;) {
      const { items } = await app.orders.listEvents({ after: events.at(-1)?.id, limit: 1000 })
      if (items.length === 0) return events
      events.push(...items)
    }
  }
  return { app, created, checkout, quantity, feed }
}

t.test('a checkout: the order, its event and the stock change commit together; the listener runs after the commit', async t => {
  const pool = hostPool(t, 2)
  const { app, created, checkout, quantity, feed } = await shop(t, 3)
  let seenInside: number | undefined
  const order = await inTransaction(pool, async client => {
    const result = await checkout(client, 'cus_1')()
    t.equal((await app.orders.withTransaction(client).get(result.value!.id)).id, result.value!.id, 'the transaction reads its own order')
    await sleep(50)
    seenInside = created.length
    // On PGlite the app's own client waits for the transaction: PGlite runs one at a time.
    if (db.server) t.same((await app.orders.list({ filter: { number: result.value!.number } })).items, [], 'others do not see the order before the commit')
    return result
  })
  t.equal(seenInside, 0, 'no listener before the commit')
  t.equal(order!.number, 1)
  t.equal(await quantity(), 2, 'the stock change committed')
  t.same((await app.orders.list({ filter: { number: order!.number } })).items.map(({ id }) => id), [order!.id], 'the order committed')
  await eventually('the listener runs once the transaction has committed', () => created.length === 1)
  t.equal(created[0]!.id, order!.id)
  await eventually('the event is listed', async () => (await feed()).length === 1)
  t.same((await feed()).map(event => [event.type, event.order.id, event.order.number]), [['created', order!.id, 1]])
})

t.test('a rolled-back checkout leaves no order, no event, no listener call and no delivery', async t => {
  const pool = hostPool(t, 2)
  const { app, created, checkout, quantity, feed } = await shop(t, 3)
  const delivered: OrderEvent[] = []
  app.orders.subscribe('shipping', async event => { delivered.push(event) }, { from: 'start', pollInterval: 20 })
  const rolledBack = await inTransaction(pool, async client => ({ value: (await checkout(client, 'cus_1')()).value, commit: false }))
  t.equal(await quantity(), 3, 'the stock change rolled back')
  t.same((await app.orders.list({ filter: { number: rolledBack!.number } })).items, [], 'no order')
  // A later checkout commits: the feed and the subscription have it, and only it.
  const committed = await inTransaction(pool, async client => checkout(client, 'cus_2')())
  await eventually('the committed order is delivered', () => delivered.length === 1)
  await sleep(100)
  t.same(delivered.map(event => event.order.id), [committed!.id], 'only the committed event is delivered')
  t.same((await feed()).map(event => event.order.id), [committed!.id], 'only the committed event is listed')
  t.same(created.map(order => order.id), [committed!.id], 'the listener ran for the committed order only')
})

t.test(`concurrent checkouts for the last units: exactly one order and one event per unit (${db.server ? 'server, 200 for 50' : 'PGlite, 20 for 5'})`, async t => {
  const [attempts, units] = db.server ? [200, 50] : [20, 5]
  const pool = hostPool(t, 20)
  const { app, created, checkout, quantity, feed } = await shop(t, units)
  const orders = await Promise.all(Array.from({ length: attempts }, (_, i) => inTransaction(pool, async client => checkout(client, `cus_${i}`)())))
  const made = orders.filter(order => order !== undefined)
  t.equal(made.length, units, 'one order per unit')
  t.equal(await quantity(), 0, 'every unit taken once')
  t.equal(new Set(made.map(order => order.number)).size, units, 'distinct numbers')
  const listed = (await app.orders.list({ limit: 100 })).items
  t.same(listed.map(order => order.id).sort(), made.map(order => order.id).sort(), 'the stored orders are exactly those of the committed checkouts')
  await eventually('every event is listed', async () => (await feed()).length === units)
  t.same((await feed()).map(event => event.order.id).sort(), made.map(order => order.id).sort(), 'one created event each, none for a rolled-back checkout')
  await eventually('every listener ran', () => created.length === units)
})

t.test('inside a transaction, a stale move is a 409 and a taken reference leaves the transaction usable', async t => {
  const pool = hostPool(t, 2)
  const { app, quantity } = await shop(t, 3)
  const order = await app.orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_1' }))
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  const second = await inTransaction(pool, async client => {
    const orders = app.orders.withTransaction(client)
    await t.rejects(orders.updateStatus({ id: order.id, status: 'cancelled', expectedVersion: 1 }), { code: 'ORDER_VERSION_CONFLICT' })
    await t.rejects(orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_1' })), { code: 'ORDER_REFERENCE_TAKEN' })
    const moved = await orders.updateStatus({ id: order.id, status: 'shipped' })
    t.same(moved.statusHistory.map(({ status }) => status), ['pending', 'paid', 'shipped'])
    return { value: await orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_2' })), commit: true }
  })
  t.equal(second.reference, 'cart_2')
  t.equal((await app.orders.list({ filter: { reference: 'cart_2' } })).items[0]!.id, second.id, 'the transaction went on and committed')
  t.equal((await app.orders.list({ filter: { number: order.number } })).items[0]!.status, 'shipped')
  t.equal(await quantity(), 3)
})

t.test('statements on the host\'s transaction client go unnamed, though the storage names its own', async t => {
  const pool = hostPool(t, 2)
  /** `client` as pg's clients are (they take named statements), each call recorded as named or not. */
  const pgLike = (client: TransactionClient, calls: boolean[]) => ({
    connectionParameters: {},
    query: (config: any, params?: unknown[]) => {
      calls.push(typeof config !== 'string')
      return typeof config === 'string' ? client.query(config, params!) : client.query(config.text, config.values)
    }
  })
  const own: boolean[] = []
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: pgLike(db.client, own), table: db.freshTable() }) })
  await app.orders.create(orderBody())
  t.ok(own.includes(true), 'the storage names its own statements')
  const host: boolean[] = []
  await inTransaction(pool, async client => {
    const orders = app.orders.withTransaction(pgLike(client, host))
    const order = await orders.create(orderBody({ reference: 'cart_1' }))
    await orders.updateStatus({ id: order.id, status: 'paid' })
    await orders.list()
    return { value: undefined, commit: true }
  })
  t.ok(host.length > 0 && !host.includes(true), 'none on the host\'s: a lost one would abort its transaction', { host })
})

t.test('listeners wait while the transaction is still running, and run once it commits', async t => {
  const { app, created, checkout } = await shop(t, 3)
  let order: Order | undefined
  const open = await db.openTransaction(async client => { order = (await checkout(client, 'cus_1')()).value })
  await sleep(100)
  t.same(created, [], 'no listener while the transaction runs')
  await open.commit()
  await eventually('the listener runs once the transaction has committed', () => created.length === 1)
  t.equal(created[0]!.id, order!.id)
  t.equal((await app.orders.list({ filter: { number: order!.number } })).items.length, 1)
})

t.test('a change rolled back to a savepoint is a rollback: no order, no listener, though the transaction commits', async t => {
  const pool = hostPool(t, 2)
  const { app, created, checkout, quantity } = await shop(t, 3)
  const undone = await inTransaction(pool, async client => {
    await client.query('SAVEPOINT before_order', [])
    const { value } = await checkout(client, 'cus_1')()
    await client.query('ROLLBACK TO SAVEPOINT before_order', [])
    return { value, commit: true }
  })
  await sleep(200)
  t.same(created, [], 'no listener')
  t.same((await app.orders.list({ filter: { number: undone!.number } })).items, [], 'no order')
  t.equal(await quantity(), 3)
})

t.test('a storage error inside the host\'s transaction is 503 ORDER_STORAGE_UNAVAILABLE', async t => {
  const pool = hostPool(t, 2)
  const { app } = await shop(t, 3)
  const order = await app.orders.create(orderBody())
  await inTransaction(pool, async client => {
    // A move whose write fails for another reason than a lost race.
    const failing = { query: async (text: string, params: unknown[]) => text.startsWith('WITH updated AS (') ? Promise.reject(Object.assign(new Error('disk full'), { code: '53100' })) : client.query(text, params) }
    await t.rejects(app.orders.withTransaction(failing).updateStatus({ id: order.id, status: 'paid' }), { code: 'ORDER_STORAGE_UNAVAILABLE' })
    await t.rejects(client.query('SELECT 1 / 0', []), 'the host\'s own statement fails, which aborts the transaction')
    await t.rejects(app.orders.withTransaction(client).create(orderBody()), { code: 'ORDER_STORAGE_UNAVAILABLE' })
    await t.rejects(app.orders.withTransaction(client).list(), { code: 'ORDER_STORAGE_UNAVAILABLE' })
    return { value: undefined, commit: false }
  })
  t.same((await app.orders.list()).items, [order], 'nothing more')
})

t.test('closing the app while a transaction is open does not wait for it, and its listener never runs', async t => {
  const { app, created, checkout } = await shop(t, 3)
  if (db.server) {
    const pool = hostPool(t, 1)!
    const client = await pool.connect()
    t.teardown(() => client.release())
    await client.query('BEGIN')
    await checkout(client, 'cus_1')()
    await app.close()
    await client.query('COMMIT')
  } else {
    let closed: () => void
    const whenClosed = new Promise<void>(resolve => { closed = resolve })
    const transaction = (db.client as PGlite).transaction(async (tx: Transaction) => {
      await checkout(tx, 'cus_1')()
      await whenClosed
    })
    await sleep(20)
    await app.close()
    closed!()
    await transaction
  }
  await sleep(100)
  t.same(created, [], 'no listener after close')
})

t.test('withTransaction is refused where no transaction can be joined', async t => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: memoryStorage() })
  t.throws(() => app.orders.withTransaction({ query: async () => ({ rows: [] }) }), {
    code: 'ORDER_INVALID_OPTIONS', message: /postgresStorage can, memoryStorage cannot/
  })
  const table = db.freshTable()
  const postgres = Fastify()
  t.teardown(() => postgres.close())
  await postgres.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  t.throws(() => postgres.orders.withTransaction({} as TransactionClient), { code: 'ORDER_INVALID_OPTIONS', message: /query\(text, params\)/ })
  // A pool is not a transaction: each statement would run, and commit, on whichever connection is free.
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:9/none' })
  t.teardown(() => pool.end())
  t.throws(() => postgres.orders.withTransaction(pool), { code: 'ORDER_INVALID_OPTIONS', message: /not a pool: take one with pool.connect\(\), run BEGIN on it/ })
})

t.test('calls made at once on one transaction never undo each other, nor the host\'s own statements beside them', async t => {
  const pool = hostPool(t, 2)
  const { app } = await shop(t, 3)
  const taken = await app.orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_1' }))
  const audit = `${db.freshTable()}_audit`
  await db.client.query(`CREATE TABLE "${audit}" (note text)`, [])
  t.teardown(() => db.client.query(`DROP TABLE IF EXISTS "${audit}"`, []))
  const [refused, second, inserted] = await inTransaction(pool, async client => {
    const orders = app.orders.withTransaction(client)
    const settled = await Promise.allSettled([
      orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_1' })),
      orders.create(orderBody({ customerId: 'cus_2' })),
      client.query(`INSERT INTO "${audit}" VALUES ('checkout')`, [])
    ])
    return { value: settled, commit: true }
  })
  t.match(refused, { status: 'rejected', reason: { code: 'ORDER_REFERENCE_TAKEN' } })
  t.equal(second.status, 'fulfilled')
  t.equal(inserted.status, 'fulfilled')
  const stored = (await app.orders.list({ order: 'asc' })).items.map(({ id }) => id)
  t.same(stored, [taken.id, (second as PromiseFulfilledResult<Order>).value.id], 'the sibling\'s order exists after COMMIT')
  t.same((await db.client.query(`SELECT note FROM "${audit}"`, [])).rows, [{ note: 'checkout' }], 'and the host\'s own insert')
})

t.test('a taken reference inside the transaction stores nothing, not even its idempotency claim', async t => {
  const pool = hostPool(t, 2)
  const { app } = await shop(t, 3)
  await app.orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_1' }))
  await inTransaction(pool, async client => {
    await t.rejects(app.orders.withTransaction(client).create(orderBody({ customerId: 'cus_1', reference: 'cart_1' }), { idempotencyKey: 'retry-1' }), { code: 'ORDER_REFERENCE_TAKEN' })
    return { value: undefined, commit: true }
  })
  const fresh = await app.orders.create(orderBody({ customerId: 'cus_1', reference: 'cart_2' }), { idempotencyKey: 'retry-1' })
  t.equal(fresh.reference, 'cart_2', 'the key was never claimed')
})

t.test('under REPEATABLE READ, a move that loses a race is 409 ORDER_VERSION_CONFLICT, never 503', async t => {
  const { app } = await shop(t, 3)
  const order = await app.orders.create(orderBody())
  if (!db.server) {
    // PGlite runs one connection, so no race is lost there: its transaction answers as PostgreSQL does when one is.
    await (db.client as PGlite).transaction(async (tx: Transaction) => {
      const losing = {
        query: async (text: string, params: unknown[]) => {
          if (text.startsWith('WITH updated AS (')) throw Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' })
          return tx.query(text, params)
        }
      }
      await t.rejects(app.orders.withTransaction(losing).updateStatus({ id: order.id, status: 'cancelled' }), { code: 'ORDER_VERSION_CONFLICT', statusCode: 409 })
      await tx.rollback()
    })
    return
  }
  const client = await hostPool(t, 2)!.connect()
  t.teardown(() => client.release())
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
  const orders = app.orders.withTransaction(client)
  t.equal((await orders.list({ filter: { ids: [order.id] } })).items[0]!.status, 'pending', 'the snapshot is taken')
  await app.orders.updateStatus({ id: order.id, status: 'paid' })
  await t.rejects(orders.updateStatus({ id: order.id, status: 'cancelled' }), { code: 'ORDER_VERSION_CONFLICT', statusCode: 409 })
  await client.query('ROLLBACK')
  t.equal((await app.orders.list({ filter: { ids: [order.id] } })).items[0]!.statusHistory.length, 2, 'paid, and nothing else')
})

t.test('the outcome of a transaction is looked up once, however many changes it made, and not after close', async t => {
  const table = db.freshTable()
  const looks: string[] = []
  const counting = {
    query: async (text: string, params: unknown[]) => {
      if (text.includes('pg_xact_status')) looks.push(text)
      return db.client.query(text, params)
    }
  }
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: counting, table }) })
  const created: string[] = []
  app.orders.on('created', order => { created.push(order.id) })
  // Five changes in a transaction that stays open a while: one lookout polls it, not five.
  const open = await db.openTransaction(async client => {
    for (let i = 0; i < 5; i++) await app.orders.withTransaction(client).create(orderBody())
  })
  await sleep(300)
  await open.commit()
  await eventually('the listeners of the five orders run', () => created.length === 5)
  // One lookout, waiting 5, 10, 20 … ms between looks, looks about 7 times in 300 ms; five would look 35 times.
  t.ok(looks.length <= 10, `${looks.length} looks at the transaction's status for five changes`)
  looks.length = 0
  const still = await db.openTransaction(async client => { await app.orders.withTransaction(client).create(orderBody()) })
  await sleep(30)
  await app.close()
  const after = looks.length
  await sleep(100)
  t.equal(looks.length, after, 'no look after close')
  await still.commit()
})
