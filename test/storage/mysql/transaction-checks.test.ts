// withTransaction on a mysql2 connection needs an open transaction, checked once per transaction; guards run inside the host's transaction.
import Fastify from 'fastify'
import type { PoolConnection, RowDataPacket } from 'mysql2/promise'
import t, { type Test } from 'tap'
import orderPlugin, { defaultWorkflow, type TransitionGuard } from '../../../lib/index.js'
import { mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import { orderBody } from '../../helper.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)

  async function appWith (t: Test, guards: Record<string, TransitionGuard> = {}) {
    const table = db.freshTable()
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, { storage: mysqlStorage({ client: db.client, table }), workflow: { ...defaultWorkflow, guards } })
    await app.ready()
    return { app, table }
  }

  /** A connection of the pool, given back when `t` ends, and the statements sent through `watched`, the same connection. */
  async function hostConnection (t: Test) {
    const connection = await db.client.getConnection()
    t.teardown(() => connection.release())
    const sent: string[] = []
    const watched: PoolConnection = Object.assign(Object.create(connection), {
      query: (options: string | { sql: string }, values?: unknown) => {
        sent.push(typeof options === 'string' ? options : options.sql)
        return connection.query(options as never, values as never)
      },
      execute: (options: string | { sql: string }, values?: unknown) => {
        sent.push(typeof options === 'string' ? options : options.sql)
        return connection.execute(options as never, values as never)
      }
    })
    return { connection, watched, sent }
  }

  const listed = async (app: Awaited<ReturnType<typeof appWith>>['app']) => (await app.orders.list()).items.map(({ id, status }) => [id, status])

  t.test('withTransaction on a connection with no transaction open is ORDER_INVALID_OPTIONS saying to call beginTransaction() first, and stores nothing', async t => {
    const { app } = await appWith(t)
    const order = await app.orders.create(orderBody())
    const { connection } = await hostConnection(t)
    const orders = app.orders.withTransaction(connection)
    await t.rejects(orders.create(orderBody({ reference: 'cart_1' })), { code: 'ORDER_INVALID_OPTIONS', message: /call await connection\.beginTransaction\(\) on it first/ })
    await t.rejects(orders.updateStatus({ id: order.id, status: 'paid' }), { code: 'ORDER_INVALID_OPTIONS' })
    await t.rejects(orders.list(), { code: 'ORDER_INVALID_OPTIONS' })
    t.same(await listed(app), [[order.id, 'pending']], 'no order made, none moved')
  })

  t.test('the open transaction is checked once per transaction, not once per call, and again in the next one', async t => {
    const { app } = await appWith(t)
    const { connection, watched, sent } = await hostConnection(t)
    await connection.beginTransaction()
    const orders = app.orders.withTransaction(watched)
    const order = await orders.create(orderBody({ reference: 'cart_1' }))
    await orders.updateStatus({ id: order.id, status: 'paid' })
    await orders.list()
    t.equal(sent.filter(sql => sql === 'DO 0').length, 1, 'one check for three calls')
    await connection.commit()
    // The same connection, back in autocommit mode: the next transaction's withTransaction looks again.
    await t.rejects(app.orders.withTransaction(watched).updateStatus({ id: order.id, status: 'shipped' }), { code: 'ORDER_INVALID_OPTIONS' })
    t.same(await listed(app), [[order.id, 'paid']], 'the first transaction committed, the refused move stored nothing')
  })

  t.test('a session with autocommit off is inside a transaction: its calls commit with the host\'s COMMIT, not before', async t => {
    const { app } = await appWith(t)
    const { connection } = await hostConnection(t)
    await connection.query('SET autocommit = 0')
    t.teardown(() => connection.query('SET autocommit = 1'))
    const order = await app.orders.withTransaction(connection).create(orderBody())
    t.same(await listed(app), [], 'not committed yet')
    await connection.query('COMMIT')
    t.same(await listed(app), [[order.id, 'pending']])
  })

  t.test('a connection wrapper whose answers carry no status flags is not refused', async t => {
    const { app } = await appWith(t)
    const { connection } = await hostConnection(t)
    await connection.beginTransaction()
    const wrapper: PoolConnection = Object.assign(Object.create(connection), {
      query: async (options: unknown, values?: unknown) => options === 'DO 0' ? [{}, undefined] : connection.query(options as never, values as never)
    })
    const order = await app.orders.withTransaction(wrapper).create(orderBody())
    await connection.commit()
    t.same(await listed(app), [[order.id, 'pending']])
  })

  t.test('a guard runs inside the host\'s transaction: it reads the host\'s own uncommitted rows', async t => {
    let host: PoolConnection | undefined
    const seen: number[] = []
    const { app, table } = await appWith(t, {
      shipped: async ({ order }) => {
        const [rows] = await host!.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${table}_parcels\` WHERE order_id = ?`, [order.id])
        const parcels = Number(rows[0]!.n)
        seen.push(parcels)
        return parcels > 0 || 'an order ships once it has a parcel'
      }
    })
    await db.client.query(`CREATE TABLE \`${table}_parcels\` (order_id VARCHAR(128) NOT NULL) ENGINE=InnoDB`)
    const order = await app.orders.create(orderBody())
    await app.orders.updateStatus({ id: order.id, status: 'paid' })
    await db.transaction(async connection => {
      host = connection as PoolConnection
      const orders = app.orders.withTransaction(host)
      await t.rejects(orders.updateStatus({ id: order.id, status: 'shipped' }), { code: 'ORDER_TRANSITION_REFUSED', message: 'an order ships once it has a parcel' })
      await host.query(`INSERT INTO \`${table}_parcels\` VALUES (?)`, [order.id])
      t.equal((await orders.updateStatus({ id: order.id, status: 'shipped' })).status, 'shipped', 'the refusal left the transaction usable')
    }, true)
    t.same(seen, [0, 1], 'the guard saw the row the transaction wrote before it committed')
    t.equal((await app.orders.list({ filter: { ids: [order.id] } })).items[0]!.version, 3, 'one move stored')
  })

  t.test('a guard that throws inside the host\'s transaction passes its error through and stores nothing', async t => {
    const { app } = await appWith(t, { paid: () => { throw Object.assign(new Error('payment required'), { statusCode: 402 }) } })
    const order = await app.orders.create(orderBody())
    await t.rejects(db.transaction(async connection => { await app.orders.withTransaction(connection as PoolConnection).updateStatus({ id: order.id, status: 'paid' }) }, true),
      { message: 'payment required', statusCode: 402 })
    t.equal((await app.orders.list()).items[0]!.version, 1)
  })

  t.test('a move in the host\'s transaction whose order another writer moved while its guard decided is a version conflict, never a move the guard did not see', async t => {
    let release: () => void = () => {}
    const decided: number[] = []
    const { app } = await appWith(t, {
      shipped: async ({ order }) => {
        decided.push(order.version)
        if (decided.length === 1) await new Promise<void>(resolve => { release = resolve })
        return true
      }
    })
    const order = await app.orders.create(orderBody())
    await app.orders.updateStatus({ id: order.id, status: 'paid' })
    await t.rejects(db.transaction(async connection => {
      const moving = app.orders.withTransaction(connection as PoolConnection).updateStatus({ id: order.id, status: 'shipped' })
      while (decided.length === 0) await new Promise(resolve => setTimeout(resolve, 5))
      await app.orders.updateStatus({ id: order.id, status: 'cancelled' })
      release()
      await moving
    }, true), { code: 'ORDER_VERSION_CONFLICT' })
    const [stored] = (await app.orders.list()).items
    t.same([stored!.status, stored!.version], ['cancelled', 3], 'only the other writer\'s move stored')
    // The host's snapshot still shows version 2: deciding again on it could never store the move.
    t.same(decided, [2], 'the guard decided once, on the version it saw, and the conflict was the host\'s at once')
  })
}
