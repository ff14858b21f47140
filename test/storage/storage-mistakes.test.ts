// A client, a factory or a URL given where a storage goes: register answers what to pass instead.
import Fastify from 'fastify'
import pg from 'pg'
import t from 'tap'
import orderPlugin, { memoryStorage, type OrderPluginOptions } from '../../lib/index.js'
import { postgresStorage } from '../../lib/storage/postgres/postgres-storage.js'

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

t.test('an object that is neither a storage nor a client still names the missing method', async t => {
  await registerFails({ get () {} }, /storage\.create is not a function; every storage needs create, get, list, replace, purgeIdempotencyKeys/, 'a half storage')
})
