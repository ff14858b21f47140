// postgresStorage passes the storage conformance suite, on PGlite and on the server of DATABASE_URL.
import type { PGlite, Transaction } from '@electric-sql/pglite'
import type pg from 'pg'
import t from 'tap'
import { conformanceCases, runConformance, runConformanceCase, type TransactionRunner } from '../../../lib/conformance/run-conformance.js'
import type { PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

/** A transaction on the test database, as a host opens one: BEGIN ... COMMIT on a pooled client, or PGlite's transaction(). */
const transaction: TransactionRunner = async (work, commit) => {
  if (!db.server) {
    await (db.client as PGlite).transaction(async (tx: Transaction) => {
      await work(tx)
      if (!commit) await tx.rollback()
    })
    return
  }
  const client = await (db.client as pg.Pool).connect()
  try {
    await client.query('BEGIN')
    await work(client)
    await client.query(commit ? 'COMMIT' : 'ROLLBACK')
  } finally {
    client.release()
  }
}

for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async t => {
    t.equal(await runConformanceCase(conformanceCase, () => db.storage(), { transaction }), undefined, 'passed, not skipped')
  })
}

t.test('runConformance asks for a transaction runner when the storage can join a transaction', async t => {
  const names = conformanceCases.map(({ name }) => name).filter(name => !name.startsWith('joinTransaction: '))
  await t.rejects(runConformance(() => db.storage(), { skip: names }), {
    errors: [{ message: /give runConformance a transaction option/ }, { message: /give runConformance a transaction option/ }]
  })
  await runConformance(() => db.storage(), { skip: names, transaction })
})

// The other way of sending statements: on a server, where pg's pool gets named statements by default,
// unnamed ones (prepare: false); on PGlite, named ones, through a client that runs the text as pg would.
const preparing: PostgresClient = { query: (config: any, params?: unknown[]) => typeof config === 'string' ? db.client.query(config, params!) : db.client.query(config.text, config.values) }
const otherWay = db.server ? { prepare: false } : { client: preparing, prepare: true }
for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage with prepare: ${otherWay.prepare} (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async t => {
    t.equal(await runConformanceCase(conformanceCase, () => db.storage(otherWay), { transaction }), undefined, 'passed, not skipped')
  })
}
