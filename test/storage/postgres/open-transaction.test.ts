// The check that withTransaction's client is inside a transaction: what the client says, else the database.
import t from 'tap'
import { checkOpenTransaction } from '../../../lib/storage/postgres/open-transaction.js'

/** A run that records its statements and answers as a database would, in a transaction block or not. */
function database (inTransaction: boolean, failure?: object) {
  const sent: string[] = []
  const run = async <Row>(text: string): Promise<Row[]> => {
    sent.push(text)
    if (failure !== undefined) throw failure
    if (!inTransaction && text.startsWith('SAVEPOINT')) throw Object.assign(new Error('SAVEPOINT can only be used in transaction blocks'), { code: '25P01' })
    return []
  }
  return { sent, run }
}

t.test('a pg client whose status is in a transaction, or in a failed one, is not asked', async t => {
  for (const status of ['T', 'E']) {
    const { sent, run } = database(true)
    await checkOpenTransaction({ getTransactionStatus: () => status }, run)
    t.same(sent, [], status)
  }
})

t.test('a pg client that says it is idle is asked, since its BEGIN may still be queued, every time', async t => {
  const client = { getTransactionStatus: () => 'I' }
  const queued = database(true)
  await checkOpenTransaction(client, queued.run)
  await checkOpenTransaction(client, queued.run)
  t.equal(queued.sent.filter(text => text.startsWith('SAVEPOINT')).length, 2, 'asked at each call')
  await t.rejects(checkOpenTransaction({ getTransactionStatus: () => null }, database(false).run), { code: 'ORDER_INVALID_OPTIONS', message: /run BEGIN on it first/ })
})

t.test('a PGlite that says it is in a transaction is not asked; one that says it is not is', async t => {
  const open = database(true)
  await checkOpenTransaction({ isInTransaction: () => true }, open.run)
  t.same(open.sent, [])
  await t.rejects(checkOpenTransaction({ isInTransaction: () => false }, database(false).run), { code: 'ORDER_INVALID_OPTIONS' })
})

t.test('a client that cannot say is asked once, and a failure other than "no transaction" passes through', async t => {
  const client = { query: async () => ({ rows: [] }) }
  const { sent, run } = database(true)
  await checkOpenTransaction(client, run)
  await checkOpenTransaction(client, run)
  t.equal(sent.length, 2, 'one savepoint and its release, for both calls')
  const lost = Object.assign(new Error('connection lost'), { code: '08006' })
  await t.rejects(checkOpenTransaction({ query: client.query }, database(true, lost).run), lost)
})
