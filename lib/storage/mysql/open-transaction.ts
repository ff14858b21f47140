// withTransaction's connection must be inside a transaction: in autocommit mode without one, each statement would commit on its own.
import { codes } from '../../errors.js'
import type { MysqlConnection } from './client.js'

const NO_TRANSACTION = 'withTransaction needs a transaction open on its connection: call await connection.beginTransaction() on it first, then the calls, then commit(); without it each call would commit on its own, apart from your writes'

// Status flags of the protocol's OK packet, the same in MySQL and MariaDB: SERVER_STATUS_IN_TRANS is set
// from BEGIN (or START TRANSACTION, beginTransaction()) on, SERVER_STATUS_AUTOCOMMIT while autocommit is on.
const IN_TRANSACTION = 1
const AUTOCOMMIT = 2

/**
 * Throws ORDER_INVALID_OPTIONS unless `connection` is inside a transaction, as the server's answer to
 * a statement that does nothing says: an explicit transaction is open, or autocommit is off (so nothing
 * commits until the host does). MySQL 8 has no `@@in_transaction`, but both servers send these flags
 * with every answer. A connection whose answer carries no status (a wrapper of the host's) is not refused.
 */
export async function checkOpenTransaction (connection: Pick<MysqlConnection, 'query'>): Promise<void> {
  const [answer] = await connection.query('DO 0')
  const status = (answer as { serverStatus?: unknown }).serverStatus
  if (typeof status === 'number' && (status & IN_TRANSACTION) === 0 && (status & AUTOCOMMIT) !== 0) {
    throw new codes.ORDER_INVALID_OPTIONS(NO_TRANSACTION)
  }
}
