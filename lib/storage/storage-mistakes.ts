// What a host passed instead of a storage, or instead of a storage's options, and what to pass: the first-five-minutes mistakes.

type Database = 'PostgreSQL' | 'MySQL'
type Adapter = 'postgresStorage' | 'mysqlStorage'

const ADAPTERS: Record<Database, { adapter: Adapter, call: string, pool: string }> = {
  PostgreSQL: { adapter: 'postgresStorage', call: "postgresStorage({ client: pool }) from 'fastify-order/postgres'", pool: 'new pg.Pool({ connectionString })' },
  MySQL: { adapter: 'mysqlStorage', call: "mysqlStorage({ client: pool }) from 'fastify-order/mysql'", pool: 'mysql.createPool(uri)' }
}
const POSTGRES = ADAPTERS.PostgreSQL.call
const MYSQL = ADAPTERS.MySQL.call

const has = (value: object, method: string) => typeof (value as Record<string, unknown>)[method] === 'function'

/** The database a client (pg, PGlite, mysql2) or a connection string is for, or undefined for anything else. */
function databaseOf (value: unknown): { database: Database, kind: 'client' | 'connection string' } | undefined {
  if (typeof value === 'string') {
    if (/^postgres(ql)?:/i.test(value)) return { database: 'PostgreSQL', kind: 'connection string' }
    if (/^(mysql|mariadb):/i.test(value)) return { database: 'MySQL', kind: 'connection string' }
    return undefined
  }
  if (typeof value !== 'object' || value === null || has(value, 'create')) return undefined
  // A mysql2 pool or connection also has query(), so it is told apart first: pg and PGlite have neither
  // getConnection() nor execute().
  if (has(value, 'getConnection') || has(value, 'execute')) return { database: 'MySQL', kind: 'client' }
  if (has(value, 'query')) return { database: 'PostgreSQL', kind: 'client' }
  return undefined
}

/**
 * Why `storage` is a client, a factory or a URL rather than a storage, saying what to pass instead;
 * undefined for anything else (storageProblem then says which method is missing).
 */
export function storageMistake (storage: unknown): string | undefined {
  const found = databaseOf(storage)
  if (found?.kind === 'connection string') return `storage is a connection string; pass a storage on a pool of it: ${ADAPTERS[found.database].call}, with pool = ${ADAPTERS[found.database].pool}`
  if (found?.database === 'MySQL') return `storage is a MySQL client, not a storage; pass ${MYSQL}`
  if (found !== undefined) return `storage is a database client, not a storage; pass ${POSTGRES} (or, for a mysql2 pool, ${MYSQL})`
  if (typeof storage === 'string') return 'storage is a string; pass a storage such as memoryStorage() or ' + POSTGRES
  if (typeof storage === 'function') {
    const { name } = storage
    if (name === 'memoryStorage') return 'storage is the memoryStorage function itself; call it: storage: memoryStorage()'
    if (name === 'postgresStorage' || name === 'mysqlStorage') return `storage is the ${name} function itself; call it with your pool: storage: ${name}({ client: pool })`
    return `storage is a function; pass the storage it makes, such as memoryStorage() or ${POSTGRES}`
  }
  return undefined
}

/**
 * Why the options given to `adapter` are a client or a connection string, in their place or as `client`,
 * rather than `{ client: pool }` of its own database, saying what to pass; undefined otherwise. Told
 * before any SQL: a mysql2 pool given to postgresStorage would otherwise fail on its first request.
 */
export function clientMistake (adapter: Adapter, options: unknown): string | undefined {
  const own = adapter === 'postgresStorage' ? 'PostgreSQL' : 'MySQL'
  const client = typeof options === 'object' && options !== null ? (options as { client?: unknown }).client : undefined
  for (const [value, place] of [[options, 'the options'], [client, 'client']] as const) {
    const found = databaseOf(value)
    if (found === undefined) continue
    const { database, kind } = found
    if (database !== own) return `${place} ${place === 'client' ? 'is' : 'are'} a ${database} ${kind}, not a ${own} one; use ${ADAPTERS[database].call}`
    if (kind === 'connection string') return `${place} ${place === 'client' ? 'is' : 'are'} a connection string; pass a pool of it: ${adapter}({ client: pool }), with pool = ${ADAPTERS[database].pool}`
    if (place === 'the options') return `the client goes in the options: pass ${adapter}({ client: pool }), not ${adapter}(pool)`
  }
  return undefined
}
