// app.orders.withTransaction on MySQL: the order, its event and the host's writes commit or roll back together, on a mysql2 connection.
import Fastify from 'fastify'
import type { PoolConnection } from 'mysql2/promise'
import t, { type Test } from 'tap'
import { createdEvent, statusChangedEvent } from '../../../lib/feed/events.js'
import orderPlugin, { type Order } from '../../../lib/index.js'
import { claimOf, feedBeforeSentinel, ids, moved, orderOf, readFeed, storeOrder } from '../../../lib/storage/conformance/fixtures.js'
import { mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import { eventually, orderBody } from '../../helper.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)

  /** The plugin on a table of its own, a stock table of the host's beside it, and a log of the created listener. */
  async function shop (t: Test) {
    const table = db.freshTable()
    await db.client.query(`CREATE TABLE \`${table}_stock\` (sku VARCHAR(64) PRIMARY KEY, quantity INT NOT NULL)`)
    await db.client.query(`INSERT INTO \`${table}_stock\` VALUES ('A-1', 5)`)
    const app = Fastify()
    t.teardown(() => app.close())
    const storage = mysqlStorage({ client: db.client, table })
    await app.register(orderPlugin, { storage })
    await app.ready()
    const created: Order[] = []
    app.orders.on('created', order => { created.push(order) })
    const take = (connection: PoolConnection) => connection.query(`UPDATE \`${table}_stock\` SET quantity = quantity - 1 WHERE sku = 'A-1'`)
    const stock = async () => ((await db.client.query(`SELECT quantity FROM \`${table}_stock\``))[0] as Array<{ quantity: number }>)[0]!.quantity
    return { app, storage, created, take, stock }
  }

  t.test('an order made in the host\'s transaction commits with the host\'s writes, and its listener runs after the commit', async t => {
    const { app, storage, created, take, stock } = await shop(t)
    let order: Order | undefined
    await db.transaction(async connection => {
      await take(connection as PoolConnection)
      order = await app.orders.withTransaction(connection as PoolConnection).create(orderBody())
      const paid = await app.orders.withTransaction(connection as PoolConnection).updateStatus({ id: order.id, status: 'paid' })
      t.equal(paid.version, 2)
      t.equal(created.length, 0, 'no listener before the commit')
    }, true)
    await eventually('the listener ran', () => created.length === 1)
    t.equal(created[0]!.id, order!.id)
    t.equal(await stock(), 4)
    t.same(ids(await readFeed(storage, 2)).length, 2, 'both events listed')
    t.equal((await app.orders.list({ filter: { ids: [order!.id] } })).items[0]!.status, 'paid')
  })

  t.test('an order made in a transaction that rolls back leaves nothing, and no listener runs', async t => {
    const { app, storage, created, take, stock } = await shop(t)
    await db.transaction(async connection => {
      await take(connection as PoolConnection)
      await app.orders.withTransaction(connection as PoolConnection).create(orderBody())
    }, false)
    t.equal(await stock(), 5)
    t.same(await feedBeforeSentinel(storage), [])
    await new Promise(resolve => setTimeout(resolve, 50))
    t.equal(created.length, 0)
  })

  t.test('withTransaction refuses a pool, and anything that is not a connection, saying what to pass', async t => {
    const { app } = await shop(t)
    t.throws(() => app.orders.withTransaction(db.client), { code: 'ORDER_INVALID_OPTIONS', message: /not a pool: take one with pool.getConnection\(\)/ })
    t.throws(() => app.orders.withTransaction({} as never), { code: 'ORDER_INVALID_OPTIONS', message: /the mysql2\/promise connection the transaction runs on/ })
  })

  t.test('in the host\'s transaction, a create or a move that stores nothing leaves nothing behind', async t => {
    const storage = await db.storage()
    const taken = orderOf({ reference: 'cart_1' })
    await storeOrder(storage, taken)
    const first = orderOf()
    await storeOrder(storage, first)
    await db.transaction(async connection => {
      const joined = storage.joinTransaction(connection)
      t.same(await joined.create(orderOf({ reference: 'cart_1' }), createdEvent(orderOf()), claimOf('key-1')), { created: false, referenceTaken: true })
      const duplicate = orderOf()
      await t.rejects(joined.create(duplicate, { ...createdEvent(duplicate), id: (await readFeed(storage, 2))[0]!.id }, claimOf('key-2')), { errno: 1062 } as never)
      t.equal(await joined.get(duplicate.id), undefined, 'the order written before its event is removed')
      const unkeyed = orderOf()
      await t.rejects(joined.create(unkeyed, { ...createdEvent(unkeyed), id: (await readFeed(storage, 2))[1]!.id }), { errno: 1062 } as never)
      t.equal(await joined.get(unkeyed.id), undefined, 'with or without a claim')
      const stale = statusChangedEvent(moved(first, 'paid'), 'pending')
      // Stale in the host's snapshot too: the host's conflict, not a false a retry would read the snapshot again after.
      await t.rejects(joined.replace(stale.order, 2, stale), { code: 'ORDER_VERSION_CONFLICT' })
    }, true)
    t.equal((await storeOrder(storage, orderOf(), claimOf('key-1'))).created, true, 'the refused create\'s claim is gone')
    t.equal((await storeOrder(storage, orderOf(), claimOf('key-2'))).created, true, 'so is the failed create\'s')
    t.equal((await feedBeforeSentinel(storage)).length, 4, 'the events of the four orders stored, and no other')
  })

  t.test('a lost race inside the host\'s transaction is a version conflict for a move, and the host\'s to retry otherwise', async t => {
    const storage = await db.storage()
    const order = orderOf()
    await storeOrder(storage, order)
    const deadlock = async () => { throw Object.assign(new Error('Deadlock found'), { errno: 1213 } as never) }
    const deadlocked = (connection: PoolConnection) => Object.assign(Object.create(connection), { query: deadlock, execute: deadlock })
    await db.transaction(async connection => {
      const joined = storage.joinTransaction(deadlocked(connection as PoolConnection))
      const paid = statusChangedEvent(moved(order, 'paid'), 'pending')
      await t.rejects(joined.replace(paid.order, 1, paid), { code: 'ORDER_VERSION_CONFLICT' })
      await t.rejects(joined.create(orderOf(), createdEvent(orderOf())), { errno: 1213 } as never)
      const gone = async () => { throw new Error('gone') }
      const broken = storage.joinTransaction(Object.assign(Object.create(connection as object), { query: gone, execute: gone }))
      await t.rejects(broken.replace(paid.order, 1, paid), { message: 'gone' })
    }, false)
  })

  t.test('settled waits while the host\'s transaction runs, and passes on a failure to look', async t => {
    const storage = await db.storage()
    const order = orderOf()
    const event = createdEvent(order)
    let joined: ReturnType<typeof storage.joinTransaction> | undefined
    const open = await db.openTransaction(async connection => {
      joined = storage.joinTransaction(connection)
      await joined.create(order, event)
    })
    let settled: boolean | undefined
    const outcome = joined!.settled(event.id, new AbortController().signal).then(value => { settled = value })
    await new Promise(resolve => setTimeout(resolve, 100))
    t.equal(settled, undefined, 'not settled while the transaction runs')
    await open.commit()
    await outcome
    t.equal(settled, true)
    const down = async () => { throw new Error('down') }
    const failing = mysqlStorage({ client: { pool: db.client.pool, getConnection: () => db.client.getConnection(), query: down, execute: down } as never, table: 'whatever' })
    const connection = await db.client.getConnection()
    t.teardown(() => connection.release())
    await t.rejects(failing.joinTransaction(connection).settled(event.id, new AbortController().signal), { message: 'down' })
  })
}
