// The session settings the MySQL storage serves, checked at init and on each new connection of the pool; what it cannot serve is refused saying what to change.
import { codes } from '../../errors.js'
import { optionChecker } from '../../option-checks.js'
import { callbackSideOf, directStatements, type MysqlClient, type MysqlConnection } from './client.js'

const check = optionChecker('mysqlStorage: ', codes.ORDER_INVALID_OPTIONS)

// Both servers answer this; the isolation level is tx_isolation on MariaDB, transaction_isolation on MySQL 8.
const SETTINGS = 'SHOW SESSION VARIABLES WHERE Variable_name IN (\'autocommit\', \'sql_mode\', \'tx_isolation\', \'transaction_isolation\')'

/**
 * What is wrong with a session of these settings, or undefined when the storage serves it. Values are
 * bound as bytes (client.ts), so the charset, NO_BACKSLASH_ESCAPES and ANSI_QUOTES change nothing; these
 * three would change what is stored or read.
 */
function refusalOf (settings: Map<string, string>): Error | undefined {
  const problems: string[] = []
  if (settings.get('autocommit') === 'OFF') {
    problems.push('its sessions run with autocommit=0, under which each single statement of the storage would stay in a transaction nobody commits: ' +
      'leave autocommit on (the server\'s default) for this pool, or give the storage a pool of its own')
  }
  if (String(settings.get('sql_mode')).split(',').includes('EMPTY_STRING_IS_NULL')) {
    problems.push('its sql_mode has EMPTY_STRING_IS_NULL, which would store the empty store of an order without one as NULL: remove it from sql_mode for this pool')
  }
  const isolation = settings.get('transaction_isolation') ?? settings.get('tx_isolation')
  if (isolation === 'READ-UNCOMMITTED') {
    problems.push('its transaction isolation is READ-UNCOMMITTED, under which a page could list an order whose transaction then rolls back: ' +
      'use READ-COMMITTED, REPEATABLE-READ (the default) or SERIALIZABLE')
  }
  return problems.length === 0 ? undefined : check.invalid(`the pool cannot be served: ${problems.join('; ')}`)
}

const settingsOf = (rows: Array<{ Variable_name: string, Value: string }>) => new Map(rows.map(row => [row.Variable_name.toLowerCase(), row.Value]))

/** Throws ORDER_INVALID_OPTIONS, saying what to change, when a session of the pool has settings the storage cannot serve. */
export async function checkSession (connection: Pick<MysqlConnection, 'query'>): Promise<void> {
  const [rows] = await connection.query({ sql: SETTINGS })
  const refusal = refusalOf(settingsOf(rows))
  if (refusal !== undefined) throw refusal
}

/** A connection as the callback pool announces it. */
interface NewConnection {
  query: (sql: string, callback: (err: Error | null, rows: Array<{ Variable_name: string, Value: string }>) => void) => void
  destroy: () => void
}

/** The refusal of each pool watched, once one of its new connections had settings the storage cannot serve. */
const refusals = new WeakMap<object, { refusal?: Error }>()

/**
 * The pool as the storage uses it: every new connection is checked before it runs anything of the
 * storage (the check is the first statement queued on it after the host's own `connection` hooks that
 * were registered before the plugin); one that cannot be served is destroyed, so nothing runs under
 * its settings, and from then on every call of the storage fails saying why (a 503 whose logged cause
 * says what to change).
 */
export function watchedPool (client: MysqlClient): MysqlClient {
  // isPool made sure of it: the callback pool, which announces its new connections.
  const { pool } = client as MysqlClient & { pool: { on: (event: 'connection', listener: (connection: NewConnection) => void) => void } }
  let watch = refusals.get(pool)
  if (watch === undefined) {
    const state: { refusal?: Error } = {}
    watch = state
    refusals.set(pool, state)
    pool.on('connection', connection => {
      // A check that fails (the connection died) finds nothing to refuse: the connection's own calls fail.
      connection.query(SETTINGS, (_err, rows = []) => {
        const refusal = refusalOf(settingsOf(rows))
        if (refusal === undefined) return
        // Not ORDER_INVALID_OPTIONS, which register alone throws: past it, a call that cannot be made is the storage unavailable.
        state.refusal = new Error(`a new connection of the pool was closed unused: ${refusal.message}`, { cause: refusal })
        connection.destroy()
      })
    })
  }
  const state = watch
  // A call that failed because its connection was destroyed as refused fails with the refusal.
  const served = async <T>(call: () => Promise<T>): Promise<T> => {
    if (state.refusal !== undefined) throw state.refusal
    try {
      return await call()
    } catch (err) {
      throw state.refusal ?? err
    }
  }
  // The pool's single statements through its callback API when they are the promise pool's own (client.ts).
  const side = callbackSideOf(client)
  const statements = side === undefined ? client : directStatements(side)
  return {
    query: (options, values) => served(() => statements.query(options, values)),
    execute: (options, values) => served(() => statements.execute(options, values)),
    getConnection: () => served(() => client.getConnection())
  }
}
