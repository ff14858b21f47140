// A database made by release 0.1 upgrades in place: every order, key, event and checkpoint intact, on PGlite and on the server.
import { readFileSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import orderPlugin, { type OrderEvent } from '../../../lib/index.js'
import {
  POSTGRES_SCHEMA_VERSION, postgresSchemaSql, postgresStorage, upgradePostgresSchema, type PostgresClient
} from '../../../lib/storage/postgres/postgres-storage.js'
import { eventually, orderBody } from '../../helper.js'
import { dropTables, testDatabase } from '../../postgres-helper.js'
import { signBackfill } from '../../../lib/storage/postgres/layout/version-7.js'
import { tablesOf } from '../../../lib/storage/postgres/tables.js'
import { changed } from '../change-storage.js'

const db = await testDatabase(t)
const fixtures = new URL('../../fixtures/release-0.1/', import.meta.url)
// Polled often, under a lease a busy machine never lets lapse: one instance delivers every event, so
// "exactly once, in order" holds across the two (a lapsed lease hands the event in flight over again).
const quick = { pollInterval: 20, leaseTtl: 10_000 }

/**
 * Release 0.1's tables under the name `table`, loaded from the pg_dump the fixture holds. Its events
 * were written by a server at transaction ids near 1 000 000: on PGlite, and on a younger server,
 * loading it is also a restore into a cluster whose transaction ids start lower.
 */
async function loadRelease01 (client: PostgresClient & { exec?: (sql: string) => Promise<unknown> }, table: string): Promise<void> {
  const dump = readFileSync(new URL('postgres.sql', fixtures), 'utf8').replaceAll('fastify_orders', table)
  // The dump empties search_path for its session; the storage resolves names through the usual one.
  if (client.exec !== undefined) await client.exec(`${dump}\nRESET ALL;`)
  else await client.query(`${dump}\nRESET ALL;`, undefined as never)
}

/** What release 0.1 stored, read with plain SQL before the upgrade. */
async function snapshotOf (client: PostgresClient, table: string) {
  const rows = async (text: string) => (await client.query(text, [])).rows
  return {
    orders: (await rows(`SELECT document::text FROM "${table}" ORDER BY created_at, id`)).map(row => JSON.parse(row.document)),
    keys: await rows(`SELECT key, fingerprint::text, order_id, expires_at FROM "${table}_idempotency_keys" ORDER BY key`),
    events: (await rows(`SELECT payload::text FROM "${table}_events" ORDER BY tx, seq`)).map(row => JSON.parse(row.payload) as OrderEvent),
    checkpoints: await rows(`SELECT name, last_event_id::text FROM "${table}_subscriptions" ORDER BY name`)
  }
}

/** Runs one statement of postgresSchemaSql as a DBA would: a batched backfill again until it returns no row. */
async function runStatement (statement: string): Promise<void> {
  while ((await db.client.query(statement, [])).rows.length > 0 && statement.startsWith('-- Run again until it returns no row.'));
}

/** Every event the feed lists from the start. */
async function wholeFeed (app: { orders: { listEvents: (query: { after?: string, limit?: number }) => Promise<{ items: OrderEvent[] }> } }) {
  const events: OrderEvent[] = []
  for (;;) {
    const { items } = await app.orders.listEvents({ after: events.at(-1)?.id, limit: 1000 })
    if (items.length === 0) return events
    events.push(...items)
  }
}

/** Upgrades a release 0.1 database through the plugin, then checks that nothing was lost or reordered. */
async function assertUpgrades (t: Test, client: PostgresClient, table: string, second?: PostgresClient) {
  const before = await snapshotOf(client, table)
  t.equal(before.orders.length, 45)
  t.equal(before.events.length, 58)
  const erp = before.checkpoints.find(row => row.name === 'erp')!.last_event_id
  const owed = before.events.slice(before.events.findIndex(event => event.id === erp) + 1)
  t.equal(owed.length, 5, 'the fixture checkpointed "erp" after event 53')

  // Two instances start at once: one upgrades, the other waits for it and finds the work done.
  const apps = [client, second ?? client].map(() => Fastify())
  for (const app of apps) t.teardown(() => app.close())
  const received = apps.map(() => [] as OrderEvent[])
  await Promise.all(apps.map(async (app, i) => {
    await app.register(orderPlugin, { storage: postgresStorage({ client: i === 0 ? client : second ?? client, table }) })
    await app.ready()
  }))
  const [app] = apps as [ReturnType<typeof Fastify>]
  t.same((await client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])

  const after = await snapshotOf(client, table)
  t.same(after.orders, before.orders.map((order, i) => ({ ...order, number: i + 1 })), 'every order, as it was, numbered in creation order')
  t.same(after.keys, before.keys, 'every idempotency key')
  t.same(after.checkpoints, before.checkpoints, 'every checkpoint')
  apps.forEach((app, i) => app.orders.subscribe('erp', async event => { received[i]!.push(event) }, quick))
  const page = await app.orders.list({ limit: 100, order: 'asc' })
  t.same(page.items.map((order: { id: string }) => order.id), before.orders.map(order => order.id), 'listed in creation order')
  t.same(await wholeFeed(app), before.events, 'the feed lists every event once, in its order')

  // New changes come after every restored event.
  const created = []
  for (let i = 0; i < 3; i++) created.push(await app.orders.create(orderBody({ customerId: `cus_new_${i}` })))
  t.same(created.map(order => order.number), [46, 47, 48], 'new orders are numbered after every upgraded one')
  await app.orders.updateStatus({ id: before.orders[0]!.id, status: 'cancelled' })
  await eventually('the feed lists the four new events', async () => (await wholeFeed(app)).length === 62)
  const feed = await wholeFeed(app)
  t.same(feed.slice(0, 58), before.events, 'restored events first')
  t.same(feed.slice(58).map(event => [event.type, event.order.id]), [
    ['created', created[0]!.id], ['created', created[1]!.id], ['created', created[2]!.id], ['statusChanged', before.orders[0]!.id]
  ], 'then the new ones, in the order they were made')
  t.same((await app.orders.listEvents({ after: before.events[57]!.id })).items, feed.slice(58), 'a restored event still names its place')

  // The subscription resumes exactly after its checkpoint: what it was owed, then the new events.
  await eventually('"erp" catches up', () => received.flat().length >= 9)
  t.same(received.flat().map(event => event.id), [...owed, ...feed.slice(58)].map(event => event.id), 'exactly the owed events, once, in order')
}

t.test('the example\'s ./data of release 0.1 opens with this release, upgraded in place', async t => {
  const lite = await PGlite.create({ loadDataDir: new Blob([readFileSync(new URL('pglite-data.tgz', fixtures))]) })
  t.teardown(() => lite.close())
  await assertUpgrades(t, lite, 'fastify_orders')
  t.same((await lite.query('SELECT epoch FROM fastify_orders_schema')).rows, [{ epoch: 1 }], 'the same cluster: no new epoch')
})

t.test(`a release 0.1 database upgrades in place with two instances starting at once (${db.server ? 'server' : 'PGlite'})`, async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  await assertUpgrades(t, db.client, table, db.connect())
})

t.test(`a database of layout version 3 upgrades to stores in place: nothing changes, a taken reference stays taken (${db.server ? 'server' : 'PGlite'})`, async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  for (const statement of postgresSchemaSql({ table, from: 1 }).filter(step => step.version <= 3).flatMap(step => step.statements)) await runStatement(statement)
  // Version 3 wrote references beside the document: the oldest order has one.
  const { rows: [oldest] } = await db.client.query(`SELECT id, customer_id FROM "${table}" ORDER BY created_at, id LIMIT 1`, [])
  await db.client.query(`UPDATE "${table}" SET reference = 'cart_1', document = (rtrim(document::text, '}') || ',"reference":"cart_1"}')::json WHERE id = $1`, [oldest.id])
  const before = await snapshotOf(db.client, table)
  const erp = before.checkpoints.find(row => row.name === 'erp')!.last_event_id
  const owed = before.events.slice(before.events.findIndex(event => event.id === erp) + 1)

  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  await app.ready()
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
  t.same(await snapshotOf(db.client, table), before, 'every order, key, event and checkpoint as it was')
  const received: OrderEvent[] = []
  app.orders.subscribe('erp', async event => { received.push(event) }, quick)
  t.ok(before.orders.every(order => !('store' in order) && order.statusHistory.every((change: object) => !('by' in change))), 'orders keep no store, their entries no by')
  t.same((await db.client.query(`SELECT count(*)::int AS stored FROM "${table}" WHERE store IS NOT NULL`, [])).rows, [{ stored: 0 }])
  t.same((await db.client.query(`SELECT to_regclass('"${table}_customer_reference_idx"') IS NULL AS dropped`, [])).rows, [{ dropped: true }], 'the old reference index is gone')

  const customer = { customerId: oldest.customer_id, reference: 'cart_1' }
  await t.rejects(app.orders.create(orderBody(customer)), { code: 'ORDER_REFERENCE_TAKEN' }, 'a taken reference stays taken')
  const eu = await app.orders.create(orderBody({ ...customer, store: 'eu' }))
  t.equal(eu.store, 'eu', 'the customer may use the reference in a store')
  await t.rejects(app.orders.create(orderBody(customer), { scope: { store: 'eu' } }), { code: 'ORDER_REFERENCE_TAKEN' }, 'once in each store')
  t.same((await app.orders.list({ filter: customer })).items.map(order => order.id), [eu.id, oldest.id])
  t.same((await app.orders.list({ filter: { reference: 'cart_1' } }, { scope: { store: 'eu' } })).items.map(order => order.id), [eu.id])
  await eventually('"erp" catches up', () => received.length >= owed.length + 1)
  t.same(received.map(event => event.id), [...owed.map(event => event.id), received.at(-1)!.id], 'the subscription resumes after its checkpoint')
  t.equal(received.at(-1)!.order.id, eu.id)
})

t.test(`a database of layout version 5 gets the index of a store's references, built concurrently, and its pages use it (${db.server ? 'server' : 'PGlite'})`, async t => {
  const table = db.freshTable()
  for (const step of postgresSchemaSql({ table }).filter(step => step.version <= 5)) {
    for (const statement of step.statements) await runStatement(statement)
  }
  const [step6] = postgresSchemaSql({ table, from: 5 })
  t.match(step6, { version: 6, statements: [/^CREATE INDEX CONCURRENTLY IF NOT EXISTS "\w+_store_reference_created_idx" ON "\w+" \(store, reference, created_at, id\)/] })
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  await app.ready()
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
  t.same((await db.client.query('SELECT i.indisvalid AS valid FROM pg_index AS i WHERE i.indexrelid = to_regclass($1)', [`"${table}_store_reference_created_idx"`])).rows, [{ valid: true }])
  const eu = await app.orders.create(orderBody({ reference: 'cart_1', store: 'eu' }))
  await app.orders.create(orderBody({ reference: 'cart_1', store: 'us' }))
  t.same((await app.orders.list({ filter: { reference: 'cart_1' } }, { scope: { store: 'eu' } })).items.map(order => order.id), [eu.id])
})

t.test('a database upgraded by a newer release is refused before anything is written', async t => {
  const table = db.freshTable()
  await postgresStorage({ client: db.client, table }).init!()
  await db.client.query(`UPDATE "${table}_schema" SET version = $1::int`, [POSTGRES_SCHEMA_VERSION + 1])
  const statements: string[] = []
  const client: PostgresClient = { query: (text, params) => { statements.push(text); return db.client.query(text, params) } }
  await t.rejects(postgresStorage({ client, table }).init!(), {
    code: 'ORDER_SCHEMA_NEWER',
    message: new RegExp(`version ${POSTGRES_SCHEMA_VERSION + 1}, newer than version ${POSTGRES_SCHEMA_VERSION}`)
  })
  t.ok(statements.every(text => /^\s*SELECT/.test(text)), 'it only read', { statements })
  const app = Fastify()
  t.teardown(() => app.close())
  await t.rejects(async () => { await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) }) }, { code: 'ORDER_SCHEMA_NEWER' }, 'register fails')
  await t.rejects(upgradePostgresSchema({ client: db.client, table }), { code: 'ORDER_SCHEMA_NEWER' }, 'and so does an upgrade by hand')
})

t.test('a DBA upgrades with the exported SQL; the app then starts without DDL', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  const steps = postgresSchemaSql({ table, from: 1 })
  t.same(steps.map(step => step.version), Array.from({ length: POSTGRES_SCHEMA_VERSION - 1 }, (_, index) => index + 2), 'every step after release 0.1\'s')
  t.ok(steps.every(step => step.summary.length > 0))
  for (const statement of steps.flatMap(step => step.statements)) await runStatement(statement)
  const statements: string[] = []
  const client: PostgresClient = { query: (text, params) => { statements.push(text); return db.client.query(text, params) } }
  await postgresStorage({ client, table }).init!()
  t.ok(statements.every(text => /^\s*(SELECT|UPDATE)/.test(text) || text === signBackfill(tablesOf(table))), 'reads, an UPDATE of the epoch row, and the signs of orders an earlier release stored: no DDL', { statements })
  t.equal(postgresSchemaSql().length, POSTGRES_SCHEMA_VERSION, 'a new database runs every step')
  t.match(postgresSchemaSql()[0]!.statements[0], /CREATE TABLE IF NOT EXISTS "fastify_orders"/)
})

t.test('upgradePostgresSchema brings the tables up to date, as a deploy step would, and is safe to run again', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  await upgradePostgresSchema({ client: db.connect(), table })
  await upgradePostgresSchema({ client: db.client, table })
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
  t.equal((await snapshotOf(db.client, table)).events.length, 58)
  t.throws(() => postgresSchemaSql({ table: 'no such table' }), { code: 'ORDER_INVALID_OPTIONS' })
})

t.test('a storage whose names another storage or table holds fails at init, naming the clash', async t => {
  const table = db.freshTable()
  await postgresStorage({ client: db.client, table }).init!()
  // "<table>_customer" would share the index name "<table>_customer_created_idx".
  const customer = `${table}_customer`
  t.teardown(() => dropTables(db.client, customer))
  await t.rejects(postgresStorage({ client: db.client, table: customer }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`"${customer}_created_idx" already exists`)
  })
  // "<table>_events" is the first storage's event table.
  await t.rejects(postgresStorage({ client: db.client, table: `${table}_events` }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`a table "${table}_events" exists but is not the orders table of a storage`)
  })
  // Made by a release that skipped a taken name: the second storage finds its index on another table.
  const other = db.freshTable()
  const shadow = `${other}_customer`
  t.teardown(() => dropTables(db.client, shadow))
  await postgresStorage({ client: db.client, table: other }).init!()
  await db.client.query(`DROP INDEX "${other}_customer_created_idx", "${other}_customer_status_created_idx", "${other}_customer_balance_created_idx"`, [])
  await postgresStorage({ client: db.client, table: shadow }).init!()
  await t.rejects(postgresStorage({ client: db.client, table: other }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`"${other}_customer_created_idx" is an index on "${shadow}"`)
  })
  // A table replaced by something else is named too.
  const viewed = db.freshTable()
  await postgresStorage({ client: db.client, table: viewed }).init!()
  await db.client.query(`DROP TABLE "${viewed}_subscriptions"`, [])
  await db.client.query(`CREATE VIEW "${viewed}_subscriptions" AS SELECT 1 AS name`, [])
  t.teardown(() => db.client.query(`DROP VIEW "${viewed}_subscriptions"`, []))
  await t.rejects(postgresStorage({ client: db.client, table: viewed }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`"${viewed}_subscriptions" is a relation of kind "v", where the storage needs a table`)
  })
  // So is a sequence replaced by something else.
  const sequenced = db.freshTable()
  await postgresStorage({ client: db.client, table: sequenced }).init!()
  await db.client.query(`ALTER TABLE "${sequenced}" ALTER COLUMN number DROP DEFAULT`, [])
  await db.client.query(`DROP SEQUENCE "${sequenced}_number_seq"`, [])
  await db.client.query(`CREATE TABLE "${sequenced}_number_seq" (n int)`, [])
  t.teardown(() => db.client.query(`DROP TABLE "${sequenced}_number_seq"`, []))
  await t.rejects(postgresStorage({ client: db.client, table: sequenced }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`"${sequenced}_number_seq" is a relation of kind "r", where the storage needs a sequence`)
  })
  // An index dropped by hand is named too.
  await db.client.query(`DROP INDEX "${table}_status_created_idx"`, [])
  await t.rejects(postgresStorage({ client: db.client, table }).init!(), {
    code: 'ORDER_INVALID_OPTIONS', message: new RegExp(`"${table}_status_created_idx" is missing`)
  })
  t.equal((await db.client.query(`SELECT to_regclass('"${table}_events_events"') AS events`, [])).rows[0].events, null, 'and nothing was created')
})

/**
 * A pool lending connections of the test database, each one's statements and release recorded. A
 * connection's transaction statements are answered without running them, so that on PGlite (one
 * session) the lock's transaction does not take in the steps; `tryLock` answers the transaction's try-lock.
 */
function recordingPool (max: number | undefined, tryLock: () => boolean | undefined = () => undefined) {
  const connections: Array<{ statements: string[], released?: unknown }> = []
  const pool = {
    totalCount: 0,
    // pg's pool says its size in options.max; a pool that does not say is taken to have room for two.
    options: max === undefined ? undefined : { max },
    query: db.client.query.bind(db.client),
    connect: async () => {
      const connection: { statements: string[], released?: unknown } = { statements: [] }
      connections.push(connection)
      return {
        query: async (text: string, params: unknown[]) => {
          connection.statements.push(text)
          if (/^(BEGIN|SET LOCAL|ROLLBACK)/.test(text)) return { rows: [] }
          const answer = /pg_try_advisory_xact_lock/.test(text) ? tryLock() : undefined
          return answer === undefined ? db.client.query(text, params) : { rows: [{ locked: answer }] }
        },
        release: (err?: Error) => { connection.released = err ?? true }
      }
    }
  }
  return { pool, connections }
}

t.test('with a pg.Pool, the upgrade runs on a connection of its own while another holds the lock in a transaction; both go back', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  // Another instance holds the lock at the first try.
  let tries = 0
  const { pool, connections } = recordingPool(undefined, () => ++tries === 1 ? false : undefined)
  await postgresStorage({ client: pool, table }).init!()
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
  const [session, refused, holder, ...more] = connections
  t.same(more, [], 'three connections: the steps\' one, and the lock\'s at each try')
  const lockTransaction = [/^BEGIN ISOLATION LEVEL READ COMMITTED$/, /^SET LOCAL idle_in_transaction_session_timeout = 0$/, /^SELECT pg_try_advisory_xact_lock\(-?\d+\) AS locked$/, /^ROLLBACK$/]
  for (const lock of [refused!, holder!]) {
    t.match(lock.statements, lockTransaction, 'the lock is tried in a transaction, which only ends')
    t.equal(lock.released, true, 'and its connection goes back')
  }
  t.ok(session!.statements.some(text => text.includes('CONCURRENTLY')), 'the steps run on the session')
  t.notOk(session!.statements.some(text => /advisory/.test(text)), 'which takes no lock')
  t.equal(session!.released, true)
})

t.test('with a pg.Pool, an upgrade that fails closes the lock\'s connection, ending its transaction', async t => {
  const table = db.freshTable()
  await db.client.query(`CREATE TABLE "${table}_events" (id int)`, [])
  const { pool, connections } = recordingPool(10)
  await t.rejects(postgresStorage({ client: pool, table }).init!(), { code: 'ORDER_INVALID_OPTIONS' })
  const [session, holder] = connections
  t.match(holder!.released, { code: 'ORDER_INVALID_OPTIONS' }, 'closed, not given back')
  t.equal(session!.released, true)
})

t.test('with a pg.Pool of one connection, the upgrade runs and locks on that one', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  const { pool, connections } = recordingPool(1)
  await postgresStorage({ client: pool, table }).init!()
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
  t.equal(connections.length, 1, 'a second connection would wait for the first for ever')
  t.ok(connections[0]!.statements.some(text => /pg_try_advisory_lock/.test(text)) && connections[0]!.statements.some(text => /pg_advisory_unlock/.test(text)))
  t.equal(connections[0]!.released, true)
})

t.test('an instance that finds the upgrade lock taken waits, then finds the work done', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  let refusals = 0
  // Another instance holds the lock: this one's try-lock fails until that one has upgraded.
  const waiting: PostgresClient = {
    query: async (text, params) => {
      if (text.includes('pg_try_advisory_lock')) {
        refusals++
        // Meanwhile the other instance applies the steps (as a DBA's migration would).
        if (refusals === 1) {
          for (const step of postgresSchemaSql({ table, from: 1 })) {
            for (const statement of step.statements) await db.client.query(statement, [])
          }
        }
        return { rows: [{ locked: false }] }
      }
      return db.client.query(text, params)
    }
  }
  await upgradePostgresSchema({ client: waiting, table })
  t.equal(refusals, 1, 'it tried once, waited, and found the layout current')
  t.same((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows, [{ version: POSTGRES_SCHEMA_VERSION }])
})

t.test('an upgrade cut short part way through a step resumes where it stopped', async t => {
  const table = db.freshTable()
  await loadRelease01(db.client, table)
  const [step] = postgresSchemaSql({ table, from: 1 })
  // The crash came after the version table was made, before its row.
  await db.client.query(step!.statements[0]!, [])
  const before = await snapshotOf(db.client, table)
  await postgresStorage({ client: db.client, table }).init!()
  t.same((await db.client.query(`SELECT version, epoch FROM "${table}_schema"`, [])).rows.map(row => row.version), [POSTGRES_SCHEMA_VERSION])
  const after = await snapshotOf(db.client, table)
  t.same(after, { ...before, orders: before.orders.map((order, i) => ({ ...order, number: i + 1 })) }, 'nothing lost')
})

t.test('orders stored before numbers existed get them in creation order, over several batches', async t => {
  const table = db.freshTable()
  // The layout of version 2, with 2,500 orders: more than two batches of the backfill.
  for (const step of postgresSchemaSql({ table }).filter(step => step.version <= 2)) {
    for (const statement of step.statements) await db.client.query(statement, [])
  }
  await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, document)
    SELECT 'ord_' || lpad(i::text, 5, '0'), 'cus_' || (i % 7), 'pending', to_char(timestamp '2026-01-01' + (2500 - i) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1,
      json_build_object('id', 'ord_' || lpad(i::text, 5, '0'))
    FROM generate_series(1, 2500) AS i`, [])
  await upgradePostgresSchema({ client: db.client, table })
  const { rows } = await db.client.query(`SELECT id, number::int AS number, document::text AS document FROM "${table}" ORDER BY created_at, id`, [])
  t.same(rows.map(row => row.number), rows.map((_, i) => i + 1), 'numbers 1 to 2,500 in creation order, the newest id first here')
  t.ok(rows.every(row => JSON.parse(row.document).number === row.number), 'each document carries its number')
  t.same((await db.client.query('SELECT is_nullable FROM information_schema.columns WHERE table_name = $1 AND column_name = \'number\'', [table])).rows, [{ is_nullable: 'NO' }])
})

t.test('a database whose number sequence did not come along (a logical-replication move) numbers on after its orders', async t => {
  const table = db.freshTable()
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  const numbers = []
  for (let i = 0; i < 3; i++) numbers.push((await app.orders.create(orderBody())).number)
  await app.close()
  // Logical replication copies rows, not sequences: on the new server the sequence starts afresh.
  await db.client.query(`ALTER SEQUENCE "${table}_number_seq" RESTART`, [])
  const moved = Fastify()
  t.teardown(() => moved.close())
  await moved.register(orderPlugin, { storage: postgresStorage({ client: db.client, table }) })
  const next = await moved.orders.create(orderBody())
  t.same(numbers, [1, 2, 3])
  t.equal(next.number, 4, 'the next number follows the stored ones')
})

t.test(`a database of layout version 6 upgrades to balances in place: orders signed from their total over several batches, balance pages and change claims work (${db.server ? 'server' : 'PGlite'})`, async t => {
  const table = db.freshTable()
  for (const step of postgresSchemaSql({ table }).filter(step => step.version <= 6)) {
    for (const statement of step.statements) await runStatement(statement)
  }
  const [step7] = postgresSchemaSql({ table, from: 6 })
  t.match(step7, { version: 7, statements: [/^ALTER TABLE "\w+" ADD COLUMN IF NOT EXISTS balance_sign smallint$/] })
  t.ok(step7!.statements.filter(statement => statement.includes('INDEX')).every(statement => statement.startsWith('CREATE INDEX CONCURRENTLY IF NOT EXISTS')), 'every index built concurrently')
  // 2,500 orders as release 0.2 stores them, every tenth free: more than two batches of the backfill.
  const insertOrders = (from: number, to: number) => db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, document)
    SELECT id, customer_id, 'pending', created_at, 1, json_build_object('id', id, 'customerId', customer_id, 'status', 'pending', 'createdAt', created_at, 'total', total)
    FROM (SELECT 'ord_' || lpad(i::text, 5, '0') AS id, 'cus_' || (i % 7) AS customer_id, CASE WHEN i % 10 = 0 THEN 0 ELSE 2500 END AS total,
      to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at FROM generate_series($1::int, $2::int) AS i) AS made`, [from, to])
  await insertOrders(1, 2500)
  const storage = postgresStorage({ client: db.client, table })
  await storage.init!()
  const signs = async () => (await db.client.query(`SELECT balance_sign AS sign, count(*)::int AS orders FROM "${table}" GROUP BY balance_sign ORDER BY balance_sign`, [])).rows
  t.same(await signs(), [{ sign: 0, orders: 250 }, { sign: 1, orders: 2250 }], 'every order signed from its total')
  const settled = await storage.list({ balance: 'settled', order: 'desc', limit: 3 })
  t.same(settled.map(order => order.id), ['ord_02500', 'ord_02490', 'ord_02480'], 'the settled, newest first')
  t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 3 })), [], 'none owed')

  // An instance of release 0.2, still running, stores an order after the upgrade: signed at the next start.
  await insertOrders(2501, 2510)
  await postgresStorage({ client: db.client, table }).init!()
  t.same(await signs(), [{ sign: 0, orders: 251 }, { sign: 1, orders: 2259 }], 'signed at the next start')

  // The documents of this test hold only an id, a customer, a status, a creation time, a total and a number.
  const [order] = await storage.list({ customerId: 'cus_1', balance: 'due', order: 'asc', limit: 1 })
  const { after, event } = changed({ ...order!, version: 1, updatedAt: '2026-02-01T00:00:00.000Z' }, { paid: 3000, balance: -500 })
  t.equal(await storage.replace(after, 1, event, { key: 'change:1', fingerprint: 'f', expiresAt: '2026-02-02T00:00:00.000Z' }), true)
  t.same(await storage.readChangeClaim('change:1', after.updatedAt), { fingerprint: 'f', order: after }, 'a change\'s claim keeps its answer')
  t.same((await storage.list({ balance: 'owed', order: 'asc', limit: 3 })).map(owed => owed.id), [order!.id], 'the changed order is owed')
})
