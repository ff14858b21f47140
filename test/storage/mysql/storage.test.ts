// mysqlStorage's own promises: its options, exact values whatever MySQL's collations and time zones say, and lost races retried.
import Fastify from 'fastify'
import mysql, { type Pool, type PoolConnection } from 'mysql2/promise'
import t from 'tap'
import { createdEvent } from '../../../lib/feed/events.js'
import { orderPlugin } from '../../../lib/index.js'
import { FAR_FUTURE, claimOf, ids, moved, orderOf, readFeed, replaceOrder, storeEvent, storeOrder } from '../../../lib/storage/conformance/fixtures.js'
import { mysqlStorage, type MysqlClient } from '../../../lib/storage/mysql/mysql-storage.js'
import { sequenceEvents } from '../../../lib/storage/mysql/sql/sequence-events.js'
import { tablesOf } from '../../../lib/storage/mysql/tables.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)

  t.test('options are checked like postgresStorage\'s, each message saying what to pass', async t => {
    t.throws(() => mysqlStorage({ client: db.client, prepare: true } as never), { code: 'ORDER_INVALID_OPTIONS', message: /unknown option "prepare"; the options are client, table/ })
    t.throws(() => mysqlStorage(undefined as never), { code: 'ORDER_INVALID_OPTIONS', message: /options must be an object like \{ client: pool \}/ })
    const connection = await db.client.getConnection()
    t.teardown(() => connection.release())
    const callbackPool = mysql.createPool({ uri: mysqlUrl })
    t.teardown(() => callbackPool.end())
    for (const client of [undefined, {}, connection, callbackPool.pool]) {
      t.throws(() => mysqlStorage({ client: client as never }), { code: 'ORDER_INVALID_OPTIONS', message: /client must be a mysql2\/promise pool: mysql\.createPool/ })
    }
    for (const table of ['', '1orders', 'orders-eu', 'a'.repeat(41), 7]) {
      t.throws(() => mysqlStorage({ client: db.client, table: table as never }), { code: 'ORDER_INVALID_OPTIONS', message: /table must be 1 to 40 letters/ })
    }
  })

  t.test('ids, references, stores and keys compare as the bytes they are: case and trailing spaces count', async t => {
    const storage = await db.storage()
    const orders = [
      orderOf({ customerId: 'a', reference: 'REF-1', store: 'eu' }),
      orderOf({ customerId: 'a ', reference: 'REF-1', store: 'eu' }),
      orderOf({ customerId: 'a', reference: 'ref-1', store: 'eu' }),
      orderOf({ customerId: 'a', reference: 'REF-1 ', store: 'eu' }),
      orderOf({ customerId: 'a', reference: 'REF-1', store: 'EU' }),
      orderOf({ customerId: 'A', reference: 'REF-1', store: 'eu' })
    ]
    for (const order of orders) t.equal((await storeOrder(storage, order)).created, true, `${JSON.stringify([order.customerId, order.reference, order.store])} is another order`)
    t.same(ids(await storage.list({ customerId: 'a', order: 'asc', limit: 10 })).sort(), ids([orders[0]!, orders[2]!, orders[3]!, orders[4]!]).sort())
    t.same(ids(await storage.list({ reference: 'REF-1', customerId: 'a', store: 'eu', order: 'asc', limit: 10 })), [orders[0]!.id])
    t.same(ids(await storage.list({ store: 'EU', order: 'asc', limit: 10 })), [orders[4]!.id])
    t.same(await storage.list({ customerId: 'A ', order: 'asc', limit: 10 }), [])
    // Idempotency keys too: two keys that a case-insensitive, padding collation would call one.
    const keyed = [orderOf(), orderOf(), orderOf()]
    for (const [i, key] of ['Key-1', 'key-1', 'Key-1 '].entries()) {
      t.equal((await storeOrder(storage, keyed[i]!, claimOf(key))).created, true, `key ${JSON.stringify(key)} is a key of its own`)
    }
  })

  t.test('strings MySQL cannot store as they are are kept all the same: NUL, lone surrogates, emoji', async t => {
    const storage = await db.storage()
    const odd = ['cus \u0000', 'cus \ud800', 'cus \udfff', 'cus \ufffd', 'cus 😀']
    const orders = odd.map(customerId => orderOf({ customerId, metadata: { note: customerId }, items: [{ sku: customerId, quantity: 1, unitPrice: 1 }], total: 1 }))
    for (const order of orders) await storeOrder(storage, order)
    for (const order of orders) {
      t.same(await storage.get(order.id), order, 'read back as written')
      t.same(ids(await storage.list({ customerId: order.customerId, order: 'asc', limit: 10 })), [order.id], 'a lone surrogate is not U+FFFD')
    }
    for (const key of ['k \ud800', 'k \udfff', 'k \ufffd']) t.equal((await storeOrder(storage, orderOf(), claimOf(key))).created, true, 'each key a key of its own')
  })

  t.test('timestamps keep milliseconds and read back in UTC whatever the session\'s time zone', async t => {
    const pool = db.connect()
    pool.pool.on('connection', connection => { connection.query('SET time_zone = \'+09:30\'') })
    const storage = mysqlStorage({ client: pool, table: db.freshTable() })
    await storage.init()
    const order = orderOf({ createdAt: '2026-03-29T01:30:00.001Z', updatedAt: '2026-03-29T01:30:00.001Z' })
    await storeOrder(storage, order)
    t.same(await storage.get(order.id), order)
    t.same(ids(await storage.list({ createdFrom: '2026-03-29T01:30:00.001Z', createdTo: '2026-03-29T01:30:00.002Z', order: 'asc', limit: 5 })), [order.id])
    // Leases are timed by the database's UTC clock: a lease of a minute is held, one of 1 ms lapses.
    t.equal((await storage.lease({ name: 'tz', holder: 'h1', ttl: 60_000, from: 'start' })).held, true)
    t.equal((await storage.lease({ name: 'tz', holder: 'h2', ttl: 60_000, from: 'start' })).held, false)
    t.equal((await storage.lease({ name: 'tz2', holder: 'h1', ttl: 1, from: 'start' })).held, true)
    await new Promise(resolve => setTimeout(resolve, 20))
    t.equal((await storage.lease({ name: 'tz2', holder: 'h2', ttl: 60_000, from: 'start' })).held, true)
  })

  /**
   * `pool` as a storage's client whose connections send each statement (queried or executed) through `query`,
   * given the pool's own connection to send it on (`send`); `also` gives a connection other methods of its own.
   */
  function throughQuery (pool: Pool, query: (connection: PoolConnection, options: { sql: string }, values: unknown) => Promise<unknown>,
    also: (connection: PoolConnection) => object = () => ({})): MysqlClient {
    return {
      pool: pool.pool,
      query: pool.query.bind(pool),
      execute: pool.execute.bind(pool),
      async getConnection () {
        const connection = await pool.getConnection()
        // A write's statement comes as bare text, a read's as options.
        const through = (options: string | { sql: string }, values?: unknown) => query(connection, typeof options === 'string' ? { sql: options } : options, values)
        return Object.assign(Object.create(connection), { ...also(connection), query: through, execute: through })
      }
    } as never
  }
  // The storage executes a statement with values (prepared) and queries one without.
  const send = (connection: PoolConnection, options: { sql: string }, values: unknown) =>
    values === undefined ? connection.query(options as never) : connection.execute(options as never, values as never)

  /** A pool whose connections fail `times` statements that match `pattern` with `error`, then behave. */
  function failing (pattern: RegExp, times: number, error: () => object): MysqlClient & { failures: () => number } {
    let failures = 0
    const client = throughQuery(db.client, async (connection, options, values) => {
      if (pattern.test(options.sql) && failures < times) {
        failures++
        // What InnoDB does to the loser of a deadlock: the whole transaction is rolled back.
        await connection.query('ROLLBACK')
        throw Object.assign(new Error('simulated'), error())
      }
      return send(connection, options, values)
    })
    return Object.assign(client, { failures: () => failures })
  }
  const deadlock = () => ({ errno: 1213, code: 'ER_LOCK_DEADLOCK' })

  t.test('a deadlock or a lock wait timeout is retried a bounded number of times, then the storage is unavailable', async t => {
    const table = db.freshTable()
    await mysqlStorage({ client: db.client, table }).init()
    const retried = failing(/INSERT INTO `[^`]*_events`/, 3, deadlock)
    const storage = mysqlStorage({ client: retried, table })
    const order = orderOf()
    t.equal((await storeOrder(storage, order)).created, true, 'created after three deadlocks')
    t.equal(retried.failures(), 3)
    const claiming = failing(/INSERT INTO `[^`]*_idempotency_keys`/, 1, deadlock)
    t.equal((await storeOrder(mysqlStorage({ client: claiming, table }), orderOf(), claimOf('key-retried'))).created, true, 'a claim too')
    t.same(await storage.get(order.id), order)
    const timeouts = failing(/^UPDATE `[^`]*` SET customer_id/, 2, () => ({ errno: 1205, code: 'ER_LOCK_WAIT_TIMEOUT' }))
    t.equal(await replaceOrder(mysqlStorage({ client: timeouts, table }), moved(order, 'paid'), 1), true, 'replaced after two lock wait timeouts')
    t.equal((await readFeed(storage, 3)).length, 3, 'one event per change, none of the rolled-back attempts')

    const forever = failing(/INSERT INTO `[^`]*_events`/, Infinity, deadlock)
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, { storage: mysqlStorage({ client: forever, table }) })
    const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 1 }] } })
    t.equal(response.statusCode, 503)
    t.equal(response.json().code, 'ORDER_STORAGE_UNAVAILABLE')
    t.equal(forever.failures(), 6, 'the first attempt and five retries')
    t.equal((await storage.list({ order: 'asc', limit: 10 })).length, 2, 'nothing half-written')
  })

  t.test('an order the database refuses for another reason than a taken reference fails the create, with its claim undone', async t => {
    const table = db.freshTable()
    await mysqlStorage({ client: db.client, table }).init()
    const refusing = failing(/^INSERT INTO `[^`]*` \(id, customer_id/, 1, () => ({ errno: 1114, code: 'ER_RECORD_FILE_FULL' }))
    await t.rejects(storeOrder(mysqlStorage({ client: refusing, table }), orderOf(), claimOf('key-refused')), { code: 'ER_RECORD_FILE_FULL' })
    const storage = mysqlStorage({ client: db.client, table })
    t.same(await storage.list({ order: 'asc', limit: 10 }), [], 'no order')
    const retried = orderOf()
    t.equal((await storeOrder(storage, retried, claimOf('key-refused'))).created, true, 'the key is free for the retry')
  })

  t.test('a connection lost halfway is 503 with nothing written, and is not given back to the pool', async t => {
    const table = db.freshTable()
    await mysqlStorage({ client: db.client, table }).init()
    let destroyed = 0
    const losing = throughQuery(db.connect(), async (connection, options, values) => {
      if (/INSERT INTO `[^`]*_events`/.test(options.sql)) (connection.connection as unknown as { stream: { destroy: () => void } }).stream.destroy()
      return send(connection, options, values)
    }, connection => ({ destroy: () => { destroyed++; connection.destroy() } }))
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, { storage: mysqlStorage({ client: losing, table }) })
    const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: { customerId: 'cus_1', currency: 'EUR', items: [{ sku: 'A', quantity: 1, unitPrice: 1 }] } })
    t.equal(response.statusCode, 503)
    t.equal(destroyed, 1, 'the connection is destroyed')
    const storage = mysqlStorage({ client: db.client, table })
    t.same(await storage.list({ order: 'asc', limit: 10 }), [], 'the server rolled the order back')
  })

  t.test('readers at once share the sequencer\'s runs, and each sees what committed before it asked', async t => {
    const storage = await db.storage()
    const events = Array.from({ length: 6 }, () => createdEvent(orderOf()))
    for (const event of events.slice(0, 3)) await storeEvent(storage, event)
    const first = await Promise.all([storage.listEvents({ limit: 10 }), storage.listEvents({ limit: 10 }), storage.listEvents({ limit: 10 })])
    for (const page of first) t.same(ids(page!), ids(events.slice(0, 3)))
    for (const event of events.slice(3)) await storeEvent(storage, event)
    const again = await Promise.all([storage.listEvents({ limit: 10 }), storage.readSubscription('none', 10), storage.listEvents({ after: events[2]!.id, limit: 10 })])
    t.same(ids(again[0]!), ids(events))
    t.same(ids(again[2]!), ids(events.slice(3)))
  })

  t.test('a subscription whose dead letters remain once its row is gone is still known, with no lag', async t => {
    const table = db.freshTable()
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    const event = createdEvent(orderOf())
    await storeEvent(storage, event)
    await readFeed(storage, 1)
    await storage.lease({ name: 'gone', holder: 'h1', ttl: 60_000, from: 'start' })
    await storage.recordOutcomes('gone', 'h1', { finished: [], delivered: [], deadLetters: [{ eventId: event.id, attempts: 1, error: 'x', at: event.at }] })
    t.equal(await storage.redeliver('gone', []), 0, 'no ids, no dead letter')
    await db.client.query(`DELETE FROM \`${table}_subscriptions\` WHERE name = 'gone'`)
    t.same(await storage.inspectSubscription('gone', 10), { lagEvents: 0, oldestAt: null, deadLetters: 1 })
  })

  t.test('a create that finds a live claim whose order is not there says the key is in progress', async t => {
    const table = db.freshTable()
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    const first = orderOf()
    await storeOrder(storage, first, claimOf('k'))
    /** A pool whose connections run `meanwhile` once, on another connection, before the claim is read. */
    const racing = (meanwhile: string) => throughQuery(db.client, async (connection, options, values) => {
      if (/LOCK IN SHARE MODE/.test(options.sql)) await db.client.query(meanwhile)
      return send(connection, options, values)
    })
    t.same(await storeOrder(mysqlStorage({ client: racing(`DELETE FROM \`${table}\` WHERE id = '${first.id}'`), table }), orderOf(), claimOf('k')),
      { created: false, inProgress: true }, 'the claim is live, its order is not there')
    t.equal((await storeOrder(storage, orderOf({ createdAt: FAR_FUTURE }), claimOf('k'))).created, true, 'once expired, the key is taken over')
  })

  t.test('readers of several instances at once position every event once, in insert order', async t => {
    const table = db.freshTable()
    const instances = [mysqlStorage({ client: db.client, table }), mysqlStorage({ client: db.connect(), table }), mysqlStorage({ client: db.connect(), table })]
    await instances[0]!.init()
    const events = Array.from({ length: 30 }, () => createdEvent(orderOf()))
    for (const event of events) await storeEvent(instances[0]!, event)
    const pages = await Promise.all(instances.flatMap(storage => [storage.listEvents({ limit: 100 }), storage.listEvents({ limit: 100 }), storage.listEvents({ limit: 100 })]))
    for (const page of pages) t.same(ids(page!), ids(events))
  })

  t.test('a reader that waited while another instance positioned the events finds them positioned, and positions nothing again', async t => {
    const table = db.freshTable()
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    const event = createdEvent(orderOf())
    await storeEvent(storage, event)
    // Another instance's sequencer at work: it holds the sequencer's row.
    const other = await db.client.getConnection()
    t.teardown(() => other.release())
    await other.beginTransaction()
    await other.query(`SELECT position FROM \`${table}_sequencer\` WHERE id = 1 FOR UPDATE`)
    // The reader has seen the event unpositioned; once it asks for the sequencer's row, the other
    // instance positions the event and commits, whether or not the reader's lock has reached the server.
    let asked!: () => void
    const askedForTheRow = new Promise<void>(resolve => { asked = resolve })
    const reader = throughQuery(db.connect(), async (connection, options, values) => {
      const sent = send(connection, options, values)
      if (/_sequencer` WHERE id = 1 FOR UPDATE/.test(options.sql)) asked()
      return sent
    })
    const reading = sequenceEvents(tablesOf(table), reader)()
    await askedForTheRow
    await other.query(`UPDATE \`${table}_events\` SET position = 1 WHERE position IS NULL`)
    await other.query(`UPDATE \`${table}_sequencer\` SET position = 1 WHERE id = 1`)
    await other.commit()
    await reading
    const [rows] = await db.client.query<mysql.RowDataPacket[]>(`SELECT CAST(id AS CHAR) AS id, position FROM \`${table}_events\``)
    t.same(rows.map(row => [row.id, Number(row.position)]), [[event.id, 1]])
    const [[sequencer]] = await db.client.query<mysql.RowDataPacket[]>(`SELECT position FROM \`${table}_sequencer\``)
    t.equal(Number(sequencer!.position), 1, 'the last position given is still the other instance\'s')
    t.same(ids((await storage.listEvents({ limit: 10 }))!), [event.id])
  })

  t.test('the sequencer positions a backlog batch by batch, in insert order, with no gap', async t => {
    const table = db.freshTable()
    const storage = mysqlStorage({ client: db.client, table })
    await storage.init()
    const events = Array.from({ length: 5 }, () => createdEvent(orderOf()))
    for (const event of events) await storeEvent(storage, event)
    await sequenceEvents(tablesOf(table), db.client, 2)()
    const [rows] = await db.client.query<mysql.RowDataPacket[]>(`SELECT CAST(id AS CHAR) AS id, position FROM \`${table}_events\` ORDER BY seq`)
    t.same(rows.map(row => [row.id, Number(row.position)]), events.map((event, i) => [event.id, i + 1]))
  })
}
