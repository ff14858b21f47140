// The plugin as the benchmark loads it, and the storages it can run on: memory always, PostgreSQL and MySQL when their adapters are there.
import { existsSync } from 'node:fs'
import type { Pool } from 'mysql2/promise'
import type { OrderStorage } from '../lib/index.js'
import { dropTablesOf, openPool } from './mysql.js'

export type StorageName = 'memory' | 'pglite' | 'postgres' | 'mysql'

/**
 * The folder the plugin is loaded from: dist/ (what users run, built by bench/run.ts) unless
 * BENCH_LIB names another one. Loaded by path, so the benchmark type-checks without a build.
 */
export const libraryDir = new URL(process.env.BENCH_LIB ?? '../dist/', import.meta.url)

/** The package entry, as `import ... from 'fastify-order'` gives it. */
export async function loadPlugin (): Promise<typeof import('../lib/index.js')> {
  return import(new URL('index.js', libraryDir).href)
}

/** True when this checkout has the PostgreSQL adapter. */
export function hasPostgresAdapter (): boolean {
  return existsSync(new URL('../lib/storage/postgres/postgres-storage.ts', import.meta.url)) || existsSync(new URL('../lib/storage/postgres/index.ts', import.meta.url))
}

/** postgresStorage from the loaded build, wherever that release kept it. */
async function loadPostgresStorage (): Promise<PostgresStorage> {
  const entry = ['storage/postgres/postgres-storage.js', 'storage/postgres/index.js', 'storage/postgres.js'].map(path => new URL(path, libraryDir)).find(url => existsSync(url))!
  return ((await import(entry.href)) as { postgresStorage: PostgresStorage }).postgresStorage
}

type PostgresStorage = (options: { client: SqlClient, table?: string, prepare?: boolean }) => OrderStorage

/** A pg.Pool or a PGlite: both run a parameterized statement. */
export interface SqlClient {
  query: (text: string, params?: unknown[]) => Promise<{ rows: any[] }>
}

export interface OpenOptions {
  /** The name of the tables on a server (postgres and mysql). Default: fastify_order_bench. */
  table?: string
  /** Set on the pool's connections, so the server can tell this instance's connections apart. */
  applicationName?: string
  /** Another instance on the same tables: the first one to open them drops them, not this one. */
  shared?: boolean
}

// The benchmark's own tables on a server, dropped when it ends, so it never touches an app's orders.
const BENCH_TABLE = 'fastify_order_bench'

/** Drops every relation postgresStorage() creates for one table name. */
export async function dropPluginTables (client: SqlClient, table: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${['', '_idempotency_keys', '_events', '_subscriptions', '_finished', '_dead_letters', '_schema'].map(suffix => table + suffix).join(', ')}`)
  await client.query(`DROP FUNCTION IF EXISTS ${table}_epoch()`)
}

/** A database to run SQL on: an in-memory PGlite, or a pg.Pool at DATABASE_URL. */
export async function openClient (name: 'pglite' | 'postgres', applicationName = 'fastify-order-bench'): Promise<{ client: SqlClient, close: () => Promise<void> }> {
  if (name === 'pglite') {
    const pgliteModule = '@electric-sql/pglite'
    const { PGlite } = await import(pgliteModule)
    const client = new PGlite()
    return { client, close: () => client.close() }
  }
  const connectionString = process.env.DATABASE_URL
  if (connectionString === undefined) throw new Error('the postgres storage needs DATABASE_URL')
  const pgModule = 'pg'
  const { default: pg } = await import(pgModule)
  // Connections stay open between rounds, so no round pays for opening them (and their CPU time stays countable).
  const client = new pg.Pool({ connectionString, application_name: applicationName, idleTimeoutMillis: 0 })
  // A connection the server ends while idle is dropped from the pool; the next query opens another.
  client.on('error', () => {})
  return { client, close: () => client.end() }
}

/** The storage by name, and how to release what it holds (a pool, an embedded database, its tables). */
export async function openStorage (name: StorageName, options: OpenOptions = {}): Promise<{ storage: OrderStorage, client?: SqlClient, close: () => Promise<void> }> {
  if (name === 'memory') {
    const { memoryStorage } = await loadPlugin()
    return { storage: memoryStorage(), close: async () => {} }
  }
  if (name === 'mysql') return openMysqlStorage(options)
  const postgresStorage = await loadPostgresStorage()
  const { client, close } = await openClient(name, options.applicationName)
  if (name === 'pglite') return { storage: postgresStorage({ client }), client, close }
  const { table = BENCH_TABLE, shared = false } = options
  if (!shared) await dropPluginTables(client, table)
  return {
    // As the README sets it up with pg, no option: named statements, parsed and planned once per connection.
    storage: postgresStorage({ client, table }),
    client,
    close: async () => {
      if (!shared) await dropPluginTables(client, table)
      await close()
    }
  }
}

type MysqlStorage = (options: { client: Pool, table?: string }) => OrderStorage

/** mysqlStorage from the loaded build on a pool of its own, in the benchmark's tables (dropped before and after, unless shared). */
async function openMysqlStorage ({ table = BENCH_TABLE, shared = false }: OpenOptions): Promise<{ storage: OrderStorage, close: () => Promise<void> }> {
  const mysqlStorage = ((await import(new URL('storage/mysql/mysql-storage.js', libraryDir).href)) as { mysqlStorage: MysqlStorage }).mysqlStorage
  const { pool, close } = await openPool()
  if (!shared) await dropTablesOf(pool, table)
  return {
    // As the README sets it up: mysql.createPool(url), no option.
    storage: mysqlStorage({ client: pool, table }),
    close: async () => {
      if (!shared) await dropTablesOf(pool, table)
      await close()
    }
  }
}
