// An index build cancelled midway leaves an invalid index, which PostgreSQL neither enforces nor reads: init builds it again, so a taken reference stays taken.
import pg from 'pg'
import t from 'tap'
import { postgresSchemaSql, postgresStorage, POSTGRES_SCHEMA_VERSION, type PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import { buildApp, orderBody, post } from '../../helper.js'
import { testDatabase, type TestDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

async function validity (table: string): Promise<Array<{ name: string, valid: boolean }>> {
  const { rows } = await db.client.query(`SELECT c.relname::text AS name, i.indisvalid AND i.indisready AS valid
    FROM pg_index AS i JOIN pg_class AS c ON c.oid = i.indexrelid
    WHERE i.indrelid IN ('"${table}"'::regclass, '"${table}_events"'::regclass, '"${table}_idempotency_keys"'::regclass)
    ORDER BY 1`, [])
  return rows
}

/**
 * On a server: a transaction that holds an old snapshot (a report, a stuck job) makes CREATE INDEX
 * CONCURRENTLY wait, and a statement_timeout (a deploy's, a pod's) cancels it: the index stays,
 * invalid. PGlite runs no statement timeout, so there the catalog is left as such a build leaves it.
 */
async function interruptBuild (database: TestDatabase, index: string, build: string): Promise<void> {
  if (!database.server) {
    await database.client.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${index}"'::regclass`, [])
    return
  }
  const holder = await database.session()
  await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ', [])
  await holder.query('SELECT 1', [])
  const builder = await database.session()
  await builder.query(`DROP INDEX "${index}"`, [])
  await builder.query("SET statement_timeout = '300ms'", [])
  await t.rejects(builder.query(build, []), /statement timeout/, 'the build is cancelled')
  await holder.query('COMMIT', [])
}

t.test('an interrupted build of the reference index is rebuilt at start: the same customer cannot take a reference twice', async t => {
  const table = db.freshTable()
  const first = postgresStorage({ client: db.client, table })
  const app = await buildApp(t, { storage: first })
  t.equal((await post(app, 'createOrder', orderBody({ reference: 'cart_1' }))).status, 201)
  const index = `${table}_customer_reference_store_idx`
  const build = postgresSchemaSql({ table }).flatMap(step => step.statements).find(statement => statement.includes(`"${index}" ON`))!
  await interruptBuild(db, index, build)
  t.same((await validity(table)).find(({ name }) => name === index), { name: index, valid: false }, 'left invalid')

  // The next start, as after a redeploy.
  const storage = postgresStorage({ client: db.client, table })
  await storage.init()
  t.ok((await validity(table)).every(({ valid }) => valid), 'every index valid again')
  const restarted = await buildApp(t, { storage })
  const again = await post(restarted, 'createOrder', orderBody({ reference: 'cart_1' }))
  t.equal(again.status, 409)
  t.equal(again.body.code, 'ORDER_REFERENCE_TAKEN')
  t.equal((await restarted.orders.list({ filter: { reference: 'cart_1' } })).items.length, 1, 'one order, found through the index')
})

t.test('an invalid index on a storage whose role may not build it stops the start, naming the index', async t => {
  const table = db.freshTable()
  await postgresStorage({ client: db.client, table }).init()
  await db.client.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${table}_number_idx"'::regclass`, [])
  // A client that may not run DDL, as an app role that only reads and writes rows.
  const readWrite: PostgresClient = {
    query: async (text, params) => {
      if (/^\s*(DROP|CREATE) INDEX/.test(text)) throw Object.assign(new Error(`must be owner of table ${table}`), { code: '42501' })
      return db.client.query(text, params)
    }
  }
  await t.rejects(postgresStorage({ client: readWrite, table }).init(), {
    code: 'ORDER_INVALID_OPTIONS',
    message: new RegExp(`index "${table}_number_idx" was left invalid by an interrupted build and could not be built again \\(must be owner`)
  })
  await postgresStorage({ client: db.client, table }).init()
  t.ok((await validity(table)).every(({ valid }) => valid), 'a role that may build it repairs it')
})

t.test('an upgrade whose index build is cancelled does not count as done; the next start finishes it with valid indexes', async t => {
  const table = db.freshTable()
  // The layout of version 2, with orders a 0.1 instance wrote.
  for (const { statements } of postgresSchemaSql({ table }).filter(step => step.version <= 2)) {
    for (const statement of statements) await db.client.query(statement, [])
  }
  await db.client.query(`INSERT INTO "${table}" (id, customer_id, status, created_at, version, document)
    SELECT 'ord_' || i, 'cus_1', 'pending', '2026-01-0' || i || 'T00:00:00.000Z', 1, ('{"id":"ord_' || i || '"}')::json FROM generate_series(1, 3) AS i`, [])
  if (db.server) {
    // An old snapshot held elsewhere makes the first index build of the step wait; the timeout cancels it.
    const holder = await db.session()
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ', [])
    await holder.query('SELECT 1', [])
    const timed = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: '-c statement_timeout=300' })
    t.teardown(() => timed.end())
    await t.rejects(postgresStorage({ client: timed, table }).init(), /statement timeout/)
    await holder.query('COMMIT', [])
  } else {
    // PGlite runs no statement timeout: the build fails after its catalog entry, as a cancelled one does.
    const cancelling: PostgresClient = {
      query: async (text, params) => {
        const result = await db.client.query(text, params)
        if (text.includes(`CONCURRENTLY IF NOT EXISTS "${table}_number_idx"`)) {
          await db.client.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${table}_number_idx"'::regclass`, [])
          throw new Error('canceling statement due to statement timeout')
        }
        return result
      }
    }
    await t.rejects(postgresStorage({ client: cancelling, table }).init(), /statement timeout/)
  }
  t.equal((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows[0].version, 2, 'the step is not recorded')
  t.ok((await validity(table)).some(({ valid }) => !valid), 'an index is left invalid')

  await postgresStorage({ client: db.client, table }).init()
  t.equal((await db.client.query(`SELECT version FROM "${table}_schema"`, [])).rows[0].version, POSTGRES_SCHEMA_VERSION)
  t.ok((await validity(table)).every(({ valid }) => valid), 'every index valid')
  const numbers = (await db.client.query(`SELECT number FROM "${table}" ORDER BY created_at`, [])).rows.map(row => Number(row.number))
  t.same(numbers, [1, 2, 3], 'the orders numbered once each')
})
