// How the MySQL storage talks to mysql2: values bound as bytes in prepared statements, transactions retried on a lost race, and text as columns hold it.
import { setTimeout as sleep } from 'node:timers/promises'

/** What the adapter needs of a `mysql2/promise` pool: statements, and connections lent for a transaction. */
export interface MysqlClient {
  query: (options: any, values?: any) => Promise<[any, any]>
  execute: (options: any, values?: any) => Promise<[any, any]>
  getConnection: () => Promise<MysqlConnection>
}

/** A connection of the pool (or the host's, inside its transaction). */
export interface MysqlConnection {
  query: (options: any, values?: any) => Promise<[any, any]>
  execute: (options: any, values?: any) => Promise<[any, any]>
  release?: () => void
  destroy?: () => void
}

/** What a write reports. */
export interface Written {
  affectedRows: number
  insertId: number
}

/** Runs one statement: rows for a SELECT, what it wrote for any other. */
export type Run = <Row = any>(sql: string, values?: unknown[]) => Promise<Row[]>
export type Write = (sql: string, values?: unknown[]) => Promise<Written>

/** One place statements are sent from: rows as objects, BIGINTs as strings, whatever the host's pool options say. */
export interface Session {
  run: Run
  write: Write
}

/**
 * A read's statement with the options that override the host's pool options this adapter reads rows
 * by. A write returns no rows, so it is sent as bare text: mysql2 copies an options object into a
 * command of its own on every call, which cost a create more of Node's time than its SQL.
 */
function readOf (sql: string) {
  return { sql, rowsAsArray: false, nestTables: false, typeCast: true, supportBigNumbers: true, bigNumberStrings: true, dateStrings: true }
}

/**
 * A value as a parameter the server takes as it is whatever the session: text as its UTF-8 bytes,
 * which mysql2 sends as a binary parameter (a string it would encode in the connection's charset, so
 * latin1 or cp1251 would turn a 4-byte character into `?`), never spliced into the statement, so no
 * `sql_mode` (NO_BACKSLASH_ESCAPES) reads it as SQL.
 */
function bytesOf (value: unknown): unknown {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value
}

/**
 * The statement and its parameters: an array (`IN (?)`) becomes one placeholder per value, its length
 * rounded up to a power of two by repeating its last value, so a statement has a few forms rather than
 * one per length (each form a prepared statement on every connection, which the server counts).
 */
function prepared (sql: string, values: unknown[]): [string, unknown[]] {
  if (!values.some(Array.isArray)) return [sql, values.map(bytesOf)]
  const bound: unknown[] = []
  let next = 0
  const text = sql.replace(/\?/g, () => {
    const value = values[next++]
    if (!Array.isArray(value)) {
      bound.push(bytesOf(value))
      return '?'
    }
    const width = 2 ** Math.ceil(Math.log2(value.length))
    for (let i = 0; i < width; i++) bound.push(bytesOf(value[Math.min(i, value.length - 1)]))
    return Array.from({ length: width }, () => '?').join(', ')
  })
  return [text, bound]
}

/** The callback API of mysql2 that its promise pool and connections wrap. */
interface CallbackSide {
  query: (options: any, ...rest: any[]) => void
  execute: (options: any, ...rest: any[]) => void
}

type Statements = Pick<MysqlConnection, 'query' | 'execute'>

/**
 * The callback pool or connection under a mysql2/promise one whose statements are the wrapper's own
 * (not a host's override of them), or undefined. The wrapper captures a stack trace on every statement
 * while the pool's `trace` option is on (its default), which cost a create more of Node's time than
 * anything else; the storage's errors carry their MySQL fields (errno, sqlMessage) either way.
 */
export function callbackSideOf (client: object): CallbackSide | undefined {
  const own = client as Statements & { connection?: unknown, pool?: unknown }
  const shared = Object.getPrototypeOf(client) as Partial<Statements> | null
  if (shared?.query !== own.query || shared.execute !== own.execute) return undefined
  const side = (own.connection ?? own.pool) as Partial<CallbackSide> | undefined
  return typeof side?.query === 'function' && typeof side.execute === 'function' ? side as CallbackSide : undefined
}

/** Statements sent through the callback API, as the promise wrapper sends them, without its stack trace. */
export function directStatements (side: CallbackSide): Statements {
  const send = (method: 'query' | 'execute', options: unknown, values: unknown) => new Promise<[any, any]>((resolve, reject) => {
    const done = (err: Error | null, result: unknown, fields: unknown) => err === null ? resolve([result, fields]) : reject(err)
    if (values === undefined) side[method](options, done)
    else side[method](options, values, done)
  })
  return { query: (options, values) => send('query', options, values), execute: (options, values) => send('execute', options, values) }
}

export function sessionOf (connection: Statements): Session {
  const side = callbackSideOf(connection)
  const statements = side === undefined ? connection : directStatements(side)
  // A statement with values is prepared (mysql2 keeps it per connection) and executed with them bound;
  // one without (a transaction's START and COMMIT, DDL, the sequencer's positions) is sent as it is.
  return {
    run: async <Row>(sql: string, values: unknown[] = []) => {
      const [text, bound] = prepared(sql, values)
      const [rows] = await (bound.length === 0 ? statements.query(readOf(text)) : statements.execute(readOf(text), bound))
      return rows as Row[]
    },
    write: async (sql, values = []) => {
      const [text, bound] = prepared(sql, values)
      const [result] = await (bound.length === 0 ? statements.query(text) : statements.execute(text, bound))
      return { affectedRows: Number(result.affectedRows), insertId: Number(result.insertId) }
    }
  }
}

/** SQL reading a utf8mb4 text column (`expression`) as its bytes: the server converts text to the connection's charset, which may not hold it. */
export function textBytes (expression: string): string {
  return `CAST(${expression} AS BINARY)`
}

/** The JSON a text column held, read through textBytes. */
export function parsedJson (bytes: Buffer): any {
  return JSON.parse(bytes.toString('utf8'))
}

/** A `mysql2/promise` pool: it lends connections and keeps the callback pool as `pool`. */
export function isPool (client: unknown): client is MysqlClient {
  const pool = client as Partial<MysqlClient> & { pool?: unknown } | null | undefined
  return typeof pool?.query === 'function' && typeof pool.execute === 'function' && typeof pool.getConnection === 'function' && typeof pool.pool === 'object' && pool.pool !== null
}

// InnoDB's answers to a lost race: a deadlock (the transaction was rolled back) and a lock wait timeout.
const DEADLOCK = 1213
const LOCK_WAIT_TIMEOUT = 1205

/** Whether `err` is InnoDB giving up a transaction or a statement for a lost race. */
export function lostRace (err: unknown): boolean {
  const errno = (err as { errno?: unknown } | null)?.errno
  return errno === DEADLOCK || errno === LOCK_WAIT_TIMEOUT
}

/** The name of the unique key that refused a duplicate, or undefined for any other error. */
export function duplicateKey (err: unknown): string | undefined {
  const { errno, sqlMessage } = Object(err) as { errno?: unknown, sqlMessage?: unknown }
  if (errno !== 1062) return undefined
  // "Duplicate entry '…' for key 'name'" (MySQL 8 says 'table.name').
  const key = /for key '([^']*)'$/.exec(String(sqlMessage))?.[1]
  return key?.slice(key.lastIndexOf('.') + 1)
}

/** How many times a transaction that lost a race is run again before the failure is the caller's. */
export const RACE_RETRIES = 5

/**
 * Runs `work` in a transaction of its own on a connection of `pool`, and commits it. A deadlock or a
 * lock wait timeout rolls it back and runs it again, a bounded number of times, after a short random
 * wait; any other failure rolls it back and is thrown. A connection lost halfway is destroyed, so the
 * server rolls back whatever it held.
 */
export async function inTransaction<T> (pool: MysqlClient, work: (session: Session) => Promise<T>, readCommitted = false): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const connection = await pool.getConnection()
    const session = sessionOf(connection)
    let broken = false
    try {
      if (readCommitted) await session.write('SET TRANSACTION ISOLATION LEVEL READ COMMITTED')
      await session.write('START TRANSACTION')
      const result = await work(session)
      await session.write('COMMIT')
      return result
    } catch (err) {
      // A connection that cannot even roll back is not given back to the pool.
      broken = await session.write('ROLLBACK').then(() => false, () => true)
      if (!lostRace(err) || attempt >= RACE_RETRIES) throw err
    } finally {
      if (broken) connection.destroy!()
      else connection.release!()
    }
    await sleep(Math.floor(Math.random() * 10 * (attempt + 1)))
  }
}

/**
 * A string as a binary column holds it. utf8mb4 cannot hold lone surrogates, which a client may send
 * (in a customer id, say), and mysql2 would turn each into U+FFFD, making two ids one; JSON string
 * escaping removes them and NUL alike, is injective, so equality is kept, and leaves ordinary ids
 * unchanged. Only strings are taken: an id of another type is refused, never coerced into one that
 * names another row.
 */
export function columnText (value: string): string {
  if (typeof value !== 'string') throw new TypeError(`fastify-order: expected a string id, got ${typeof value}`)
  return JSON.stringify(value).slice(1, -1)
}

export function quote (identifier: string): string {
  return `\`${identifier}\``
}
