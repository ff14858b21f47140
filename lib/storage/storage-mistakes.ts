// What a host passed as `storage` instead of a storage, and what to pass: the first-five-minutes mistakes.

const POSTGRES = "postgresStorage({ client: pool }) from 'fastify-order/postgres'"
const MYSQL = "mysqlStorage({ client: pool }) from 'fastify-order/mysql'"

const has = (value: object, method: string) => typeof (value as Record<string, unknown>)[method] === 'function'

/**
 * Why `storage` is a client, a factory or a URL rather than a storage, saying what to pass instead;
 * undefined for anything else (storageProblem then says which method is missing).
 */
export function storageMistake (storage: unknown): string | undefined {
  if (typeof storage === 'string') {
    if (/^postgres(ql)?:/i.test(storage)) return `storage is a connection string; pass a storage on a pool of it: ${POSTGRES}, with pool = new pg.Pool({ connectionString })`
    if (/^(mysql|mariadb):/i.test(storage)) return `storage is a connection string; pass a storage on a pool of it: ${MYSQL}, with pool = mysql.createPool(uri)`
    return 'storage is a string; pass a storage such as memoryStorage() or ' + POSTGRES
  }
  if (typeof storage === 'function') {
    const { name } = storage
    if (name === 'memoryStorage') return 'storage is the memoryStorage function itself; call it: storage: memoryStorage()'
    if (name === 'postgresStorage' || name === 'mysqlStorage') return `storage is the ${name} function itself; call it with your pool: storage: ${name}({ client: pool })`
    return `storage is a function; pass the storage it makes, such as memoryStorage() or ${POSTGRES}`
  }
  if (typeof storage !== 'object' || storage === null || has(storage, 'create')) return undefined
  // A mysql2 pool also has query(), so it is told apart first.
  if (has(storage, 'getConnection') && has(storage, 'execute')) return `storage is a MySQL client, not a storage; pass ${MYSQL}`
  if (has(storage, 'query')) return `storage is a database client, not a storage; pass ${POSTGRES} (or, for a mysql2 pool, ${MYSQL})`
  return undefined
}
