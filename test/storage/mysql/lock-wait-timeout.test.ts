// A lock wait timeout (1205) inside the host's transaction on MySQL: it undoes only its statement, so the plugin undoes the rest of the call, and a host that commits after it commits nothing of the call.
import Fastify from 'fastify'
import type { PoolConnection, RowDataPacket } from 'mysql2/promise'
import t, { type Test } from 'tap'
import orderPlugin from '../../../lib/index.js'
import { mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import { orderBody } from '../../helper.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  // A pool of its own: its connections wait 1 s for a lock, then give up the statement (not the transaction).
  const hosts = db.connect()

  async function shop (t: Test) {
    const table = db.freshTable()
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, { storage: mysqlStorage({ client: db.client, table }) })
    await app.ready()
    const count = async (suffix: string) => ((await db.client.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${table}${suffix}\``))[0][0]!.n as number)
    return { app, table, count }
  }

  /** Runs `work` in a host's transaction whose lock waits time out after 1 s, then commits it whatever `work` threw; what it threw. */
  async function committedAfter (work: (connection: PoolConnection) => Promise<unknown>): Promise<unknown> {
    const connection = await hosts.getConnection()
    try {
      await connection.query('SET SESSION innodb_lock_wait_timeout = 1')
      await connection.beginTransaction()
      const failure = await work(connection).then(() => undefined, (err: unknown) => err)
      await connection.commit()
      return failure
    } finally {
      connection.destroy()
    }
  }

  /** Holds `sql`'s locks on another connection until the returned function is called. */
  async function holding (sql: string) {
    const connection = await db.client.getConnection()
    await connection.beginTransaction()
    await connection.query(sql)
    return async () => {
      await connection.rollback()
      connection.release()
    }
  }

  t.test('a move that times out on the order\'s lock in the host\'s transaction is a version conflict, and the host\'s commit stores none of it', async t => {
    const { app, table } = await shop(t)
    const order = await app.orders.create(orderBody())
    const release = await holding(`SELECT id FROM \`${table}\` FOR UPDATE`)
    const failure = await committedAfter(connection => app.orders.withTransaction(connection).updateStatus({ id: order.id, status: 'paid' }))
    await release()
    t.match(failure, { code: 'ORDER_VERSION_CONFLICT' })
    t.same((await app.orders.listEvents()).items.map(event => event.type), ['created'], 'no statusChanged event in the feed')
    const [stored] = (await app.orders.list()).items
    t.same([stored!.status, stored!.version], ['pending', 1])
    const paid = await app.orders.updateStatus({ id: order.id, status: 'paid' })
    t.same((await app.orders.listEvents()).items.map(event => [event.type, event.order.version]), [['created', 1], ['statusChanged', 2]], 'the real move is the one v2')
    t.equal(paid.version, 2)
  })

  t.test('a create that times out in the host\'s transaction leaves no idempotency claim and no event, so a retry with its key creates the order', async t => {
    const { app, count } = await shop(t)
    // Another writer's uncommitted order with the same customer and reference: the create's insert waits on it.
    const blocker = await db.client.getConnection()
    await blocker.beginTransaction()
    await app.orders.withTransaction(blocker).create(orderBody({ reference: 'cart_1' }))
    const failure = await committedAfter(connection => app.orders.withTransaction(connection).create(orderBody({ reference: 'cart_1' }), { idempotencyKey: 'key-1' }))
    await blocker.rollback()
    blocker.release()
    t.match(failure, { code: 'ORDER_STORAGE_UNAVAILABLE' })
    t.equal(await count('_idempotency_keys'), 0, 'no claim of the key')
    t.same([await count(''), (await app.orders.listEvents()).items.length], [0, 0], 'no order, no event')
    const retried = await app.orders.create(orderBody({ reference: 'cart_1' }), { idempotencyKey: 'key-1' })
    t.equal(retried.reference, 'cart_1', 'the retry creates the order')
    t.same([await count(''), await count('_idempotency_keys')], [1, 1])
  })
}
