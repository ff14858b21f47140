// postgresStorage passes the storage conformance suite, on PGlite and on the server of DATABASE_URL.
import t from 'tap'
import { conformanceCases, runConformance, runConformanceCase } from '../../../lib/storage/conformance/run-conformance.js'
import type { PostgresClient } from '../../../lib/storage/postgres/postgres-storage.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

const { transaction } = db

for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async t => {
    t.equal(await runConformanceCase(conformanceCase, () => db.storage({}, t), { transaction }), undefined, 'passed, not skipped')
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
// unnamed ones (prepare: false), every case; on PGlite, named ones, through a client that runs the text
// as pg would. There a statement's name changes nothing the database does, so the first case of each
// capability that stores and reads shows the storage names its statements and still reads what it wrote; the whole suite runs
// that way on the server (CI), where a named statement is a different path through the database.
const preparing: PostgresClient = { query: (config: any, params?: unknown[]) => typeof config === 'string' ? db.client.query(config, params!) : db.client.query(config.text, config.values) }
const otherWay = db.server ? { prepare: false } : { client: preparing, prepare: true }
const working = conformanceCases.filter(({ name }) => !name.endsWith('methods exist'))
const firstOfEach = working.filter((conformanceCase, index) => working.findIndex(({ capability }) => capability === conformanceCase.capability) === index)
for (const conformanceCase of db.server ? conformanceCases : firstOfEach) {
  t.test(`postgresStorage with prepare: ${otherWay.prepare} (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async t => {
    t.equal(await runConformanceCase(conformanceCase, () => db.storage(otherWay, t), { transaction }), undefined, 'passed, not skipped')
  })
}
