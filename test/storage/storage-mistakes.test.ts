// A client, a factory or a URL given where a storage or a storage's options go: the answer says what to pass instead.
import Fastify from 'fastify'
import mysql from 'mysql2/promise'
import pg from 'pg'
import t from 'tap'
import orderPlugin, { memoryStorage, type OrderPluginOptions } from '../../lib/index.js'
import { mysqlStorage } from '../../lib/storage/mysql/mysql-storage.js'
import { postgresStorage } from '../../lib/storage/postgres/postgres-storage.js'
import { freshPGlite } from '../pglite.js'

async function registerFails (storage: unknown, message: RegExp, name: string) {
  const app = Fastify()
  app.register(orderPlugin, { storage } as OrderPluginOptions)
  await t.rejects(async () => { await app.ready() }, { code: 'ORDER_INVALID_OPTIONS', message }, name)
  await app.close()
}

t.test('a pg pool, an uncalled factory or a connection string as the storage says to pass postgresStorage({ client: pool })', async t => {
  // A pool connects only when it runs a statement: this one never does.
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
  t.teardown(() => pool.end())
  await registerFails(pool, /storage is a database client, not a storage; pass postgresStorage\(\{ client: pool \}\) from 'fastify-order\/postgres'/, 'a pg.Pool')
  await registerFails(postgresStorage, /storage is the postgresStorage function itself; call it with your pool: storage: postgresStorage\(\{ client: pool \}\)/, 'postgresStorage, not called')
  await registerFails('postgres://postgres@127.0.0.1:5432/shop', /storage is a connection string; pass a storage on a pool of it: postgresStorage\(\{ client: pool \}\)/, 'a PostgreSQL URL')
  await registerFails('postgresql://postgres@127.0.0.1/shop', /postgresStorage\(\{ client: pool \}\)/, 'a postgresql URL')
})

t.test('a mysql2 pool, a MySQL URL or an uncalled mysqlStorage says to pass mysqlStorage({ client: pool })', async t => {
  // What a mysql2 pool has: getConnection and execute beside query.
  const mysqlPool = { query () {}, execute () {}, getConnection () {}, end () {} }
  await registerFails(mysqlPool, /storage is a MySQL client, not a storage; pass mysqlStorage\(\{ client: pool \}\) from 'fastify-order\/mysql'/, 'a mysql2 pool')
  await registerFails('mysql://root@127.0.0.1:3306/shop', /mysqlStorage\(\{ client: pool \}\)/, 'a MySQL URL')
  await registerFails(function mysqlStorage () {}, /storage is the mysqlStorage function itself; call it with your pool: storage: mysqlStorage\(\{ client: pool \}\)/, 'mysqlStorage, not called')
})

t.test('memoryStorage or another function given uncalled says to call it', async t => {
  await registerFails(memoryStorage, /storage is the memoryStorage function itself; call it: storage: memoryStorage\(\)/, 'memoryStorage, not called')
  await registerFails(() => memoryStorage(), /storage is a function; pass the storage it makes/, 'a factory of the host')
})

t.test('postgresStorage given the pool itself says to pass it as the client option', async t => {
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
  t.teardown(() => pool.end())
  t.throws(() => postgresStorage(pool as never), {
    code: 'ORDER_INVALID_OPTIONS',
    message: 'fastify-order: postgresStorage: the client goes in the options: pass postgresStorage({ client: pool }), not postgresStorage(pool)'
  })
})

t.test('each SQL storage given its client without { client } says to pass { client: pool }, the other database\'s client or URL names the storage to use, before any SQL', async t => {
  // Pools connect only when they run a statement: these never do, so any SQL sent would fail at once.
  const pgPool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
  t.teardown(() => pgPool.end())
  const pgClient = new pg.Client({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
  const mysqlPool = mysql.createPool({ uri: 'mysql://nobody@127.0.0.1:1/none' })
  t.teardown(() => mysqlPool.end())
  const pglite = await freshPGlite()
  t.teardown(() => pglite.close())
  const refused = (make: () => unknown, message: string, name: string) =>
    t.throws(make, { code: 'ORDER_INVALID_OPTIONS', message: `fastify-order: ${message}` }, name)

  refused(() => mysqlStorage(mysqlPool as never), 'mysqlStorage: the client goes in the options: pass mysqlStorage({ client: pool }), not mysqlStorage(pool)', 'a mysql2 pool alone')
  refused(() => postgresStorage(pglite as never), 'postgresStorage: the client goes in the options: pass postgresStorage({ client: pool }), not postgresStorage(pool)', 'a PGlite alone')
  const usePostgres = "use postgresStorage({ client: pool }) from 'fastify-order/postgres'"
  const useMysql = "use mysqlStorage({ client: pool }) from 'fastify-order/mysql'"
  for (const [name, client] of [['a pg.Pool', pgPool], ['a pg.Client', pgClient], ['a PGlite', pglite]] as const) {
    refused(() => mysqlStorage({ client } as never), `mysqlStorage: client is a PostgreSQL client, not a MySQL one; ${usePostgres}`, `${name} given to mysqlStorage`)
    refused(() => mysqlStorage(client as never), `mysqlStorage: the options are a PostgreSQL client, not a MySQL one; ${usePostgres}`, `${name} alone given to mysqlStorage`)
  }
  for (const [name, client] of [['a mysql2 pool', mysqlPool], ['a mysql2 connection-like client', { query () {}, execute () {}, beginTransaction () {} }]] as const) {
    refused(() => postgresStorage({ client } as never), `postgresStorage: client is a MySQL client, not a PostgreSQL one; ${useMysql}`, `${name} given to postgresStorage`)
  }
  refused(() => postgresStorage(mysqlPool as never), `postgresStorage: the options are a MySQL client, not a PostgreSQL one; ${useMysql}`, 'a mysql2 pool alone given to postgresStorage')

  refused(() => postgresStorage({ client: 'postgres://postgres@127.0.0.1/shop' } as never), 'postgresStorage: client is a connection string; pass a pool of it: postgresStorage({ client: pool }), with pool = new pg.Pool({ connectionString })', 'a PostgreSQL URL as client')
  refused(() => postgresStorage('postgresql://postgres@127.0.0.1/shop' as never), 'postgresStorage: the options are a connection string; pass a pool of it: postgresStorage({ client: pool }), with pool = new pg.Pool({ connectionString })', 'a PostgreSQL URL alone')
  refused(() => mysqlStorage({ client: 'mysql://root@127.0.0.1:3306/shop' } as never), 'mysqlStorage: client is a connection string; pass a pool of it: mysqlStorage({ client: pool }), with pool = mysql.createPool(uri)', 'a MySQL URL as client')
  refused(() => mysqlStorage('mariadb://root@127.0.0.1/shop' as never), 'mysqlStorage: the options are a connection string; pass a pool of it: mysqlStorage({ client: pool }), with pool = mysql.createPool(uri)', 'a MariaDB URL alone')
  refused(() => mysqlStorage({ client: 'postgres://postgres@127.0.0.1/shop' } as never), `mysqlStorage: client is a PostgreSQL connection string, not a MySQL one; ${usePostgres}`, 'a PostgreSQL URL given to mysqlStorage')
  refused(() => postgresStorage('mysql://root@127.0.0.1/shop' as never), `postgresStorage: the options are a MySQL connection string, not a PostgreSQL one; ${useMysql}`, 'a MySQL URL given to postgresStorage')
  t.equal(await pglite.query('select 1 as one').then(({ rows }) => rows.length), 1, 'the PGlite was left as it was')
})

t.test('an object that is neither a storage nor a client still names the missing method', async t => {
  await registerFails({ get () {} }, /storage\.create is not a function; every storage needs create, get, list, replace, purgeIdempotencyKeys/, 'a half storage')
})
