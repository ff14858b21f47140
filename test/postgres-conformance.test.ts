// postgresStorage passes the storage conformance suite, on PGlite and on the server of DATABASE_URL.
import t from 'tap'
import { conformanceCases } from '../lib/conformance.js'
import { testDatabase } from './postgres-helper.js'

const db = await testDatabase(t)

for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async () => {
    await conformanceCase.run(await db.storage())
  })
}
