// mysqlStorage under a host's pool and session settings: no charset or sql_mode lets client text cross into SQL or be stored changed, and what cannot be served is refused.
import Fastify, { type FastifyInstance } from 'fastify'
import mysql, { type Pool } from 'mysql2/promise'
import t, { type Test } from 'tap'
import orderPlugin from '../../../lib/index.js'
import { mysqlStorage } from '../../../lib/storage/mysql/mysql-storage.js'
import { orderBody } from '../../helper.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  // One table for every setting (each uses customers of its own), its layout made once on a plain pool.
  const table = db.freshTable()
  await mysqlStorage({ client: db.client, table }).init()

  /** A pool with `options`, whose every new connection first runs `session` (a host's `connection` hook). */
  function hostPool (t: Test, options: mysql.PoolOptions, session: string[] = []): Pool {
    const pool = mysql.createPool({ uri: mysqlUrl, connectionLimit: 2, ...options })
    pool.pool.on('connection', connection => { for (const statement of session) connection.query(statement) })
    t.teardown(() => pool.end())
    return pool
  }

  /** The plugin on `pool`, each request scoped to the customer its x-customer header names. */
  async function shopOn (t: Test, pool: Pool): Promise<FastifyInstance> {
    const app = Fastify()
    t.teardown(() => app.close())
    await app.register(orderPlugin, {
      storage: mysqlStorage({ client: pool, table }),
      authorize: request => ({ customerId: decodeURIComponent(String(request.headers['x-customer'])) })
    })
    await app.ready()
    return app
  }

  async function as (app: FastifyInstance, customerId: string, operation: string, payload: object) {
    const response = await app.inject({ method: 'POST', url: `/order/${operation}`, payload, headers: { 'x-customer': encodeURIComponent(customerId) } })
    return { status: response.statusCode, body: response.json() }
  }

  /** Every row of the table for these customers, read on the plain pool: what was really stored. */
  async function stored (customers: string[]) {
    const [rows] = await db.client.query<mysql.RowDataPacket[]>(
      `SELECT CAST(customer_id AS BINARY) AS customer, CAST(reference AS BINARY) AS reference FROM \`${table}\` WHERE customer_id IN (?) ORDER BY number`,
      [customers.map(customer => Buffer.from(JSON.stringify(customer).slice(1, -1)))])
    return rows.map(row => [JSON.parse(`"${String(row.customer)}"`), row.reference === null ? null : String(row.reference)])
  }

  /** The injections and 4-byte customers, through an app on `pool`: each customer sees exactly their own orders, stored as sent. */
  async function servesExactly (t: Test, pool: Pool, label: string) {
    const app = await shopOn(t, pool)
    const [alice, bob, grinning, beaming] = ['alice', 'bob', '😀', '😁'].map(name => `${name}-${label}`) as [string, string, string, string]
    const bobs = await as(app, bob, 'createOrder', orderBody({ customerId: bob }))
    t.equal(bobs.status, 201)
    const own = await as(app, alice, 'createOrder', orderBody({ customerId: alice, reference: 'a-1' }))
    t.equal(own.status, 201)

    const quoted = await as(app, alice, 'getOrderList', { filter: { reference: '\'OR(1)#' } })
    t.same([quoted.status, quoted.body.items], [200, []], 'a reference with a quote finds no order of another customer')
    const latin = await as(app, alice, 'getOrderList', { filter: { ids: ['xħ) OR 1=1#'] } })
    t.same([latin.status, latin.body.items], [200, []], 'an id with ħ (a quote in latin1) finds nothing')

    const reference = 'x\',0,0,0x7b7d),(0x6964,0x626f62,0x70,DEFAULT,NULL,0,1,0x7b7d)#'
    const injected = await as(app, alice, 'createOrder', orderBody({ customerId: alice, reference, metadata: { note: '😀 \' \\ " ħ' } }))
    t.equal(injected.status, 201)
    const bobsList = await as(app, bob, 'getOrderList', {})
    t.same([bobsList.status, bobsList.body.items.map((order: { id: string }) => order.id)], [200, [bobs.body.id]], 'bob has his one order, no other was written')
    const alicesList = await as(app, alice, 'getOrderList', { filter: { reference } })
    t.same(alicesList.body.items.map((order: { id: string, reference: string, metadata: object }) => [order.id, order.reference, order.metadata]),
      [[injected.body.id, reference, { note: '😀 \' \\ " ħ' }]], 'the reference and the metadata read back exactly')

    const smiles = [await as(app, grinning, 'createOrder', orderBody({ customerId: grinning })), await as(app, beaming, 'createOrder', orderBody({ customerId: beaming }))]
    for (const [i, customer] of [grinning, beaming].entries()) {
      const list = await as(app, customer, 'getOrderList', {})
      t.same(list.body.items.map((order: { id: string, customerId: string }) => [order.id, order.customerId]), [[smiles[i]!.body.id, customer]], `${customer} sees only their own order`)
    }
    t.same(await stored([alice, bob, grinning, beaming]), [[bob, null], [alice, 'a-1'], [alice, reference], [grinning, null], [beaming, null]], 'stored as sent, nothing more')
    t.equal((await app.orders.listEvents({ limit: 1000 })).items.filter(event => [alice, bob, grinning, beaming].includes(event.order.customerId)).length, 5, 'one event per order, read back')
  }

  const served: Array<[string, mysql.PoolOptions, string[]]> = [
    ['latin1', { charset: 'LATIN1_SWEDISH_CI' }, []],
    ['cp1251', { charset: 'CP1251_GENERAL_CI' }, []],
    ['utf8mb3', { charset: 'UTF8_GENERAL_CI' }, []],
    ['no-backslash-escapes', {}, ['SET SESSION sql_mode = CONCAT(@@sql_mode, \',NO_BACKSLASH_ESCAPES\')']],
    ['ansi-quotes', {}, ['SET SESSION sql_mode = CONCAT(@@sql_mode, \',ANSI_QUOTES\')']],
    ['read-committed', {}, ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED']],
    ['repeatable-read', {}, ['SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ']],
    ['serializable', {}, ['SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE']]
  ]
  for (const [label, options, session] of served) {
    t.test(`on a pool with ${label}, no client text crosses into SQL or is stored changed`, t => servesExactly(t, hostPool(t, options, session), label))
  }

  const refused: Array<[string, string, RegExp]> = [
    ['autocommit=0', 'SET SESSION autocommit = 0', /autocommit=0.*leave autocommit on/],
    ['EMPTY_STRING_IS_NULL', 'SET SESSION sql_mode = CONCAT(@@sql_mode, \',EMPTY_STRING_IS_NULL\')', /EMPTY_STRING_IS_NULL.*remove it from sql_mode/],
    ['READ UNCOMMITTED', 'SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED', /READ-UNCOMMITTED.*use READ-COMMITTED, REPEATABLE-READ/]
  ]
  for (const [label, statement, message] of refused) {
    t.test(`register refuses a pool whose sessions have ${label}, saying what to change`, async t => {
      const app = Fastify()
      t.teardown(() => app.close())
      await t.rejects(async () => {
        await app.register(orderPlugin, { storage: mysqlStorage({ client: hostPool(t, {}, [statement]), table }) })
      }, { code: 'ORDER_INVALID_OPTIONS', message })
    })
  }

  t.test('a new connection a host\'s hook sets up with autocommit=0 after register runs nothing of the storage, whose calls then fail', async t => {
    let legacy = false
    const pool = hostPool(t, { connectionLimit: 1, idleTimeout: 100, maxIdle: 0 })
    pool.pool.on('connection', connection => { if (legacy) connection.query('SET SESSION autocommit = 0') })
    const app = await shopOn(t, pool)
    const customer = 'carol-hook'
    t.equal((await as(app, customer, 'createOrder', orderBody({ customerId: customer }))).status, 201)
    legacy = true
    // The pool's one connection is closed, so the next call opens a new one.
    ;(await pool.getConnection()).destroy()
    for (let i = 0; i < 2; i++) {
      const refusedCreate = await as(app, customer, 'createOrder', orderBody({ customerId: customer }))
      t.same([refusedCreate.status, refusedCreate.body.code], [503, 'ORDER_STORAGE_UNAVAILABLE'])
    }
    t.equal((await stored([customer])).length, 1, 'nothing of the refused creates was stored')
  })
}
