// postgresStorage passes the storage conformance suite, on PGlite and on the server of DATABASE_URL.
import t from 'tap'
import { conformanceCases } from '../../../lib/conformance/index.js'
import type { PostgresClient } from '../../../lib/storage/postgres/index.js'
import { testDatabase } from '../../postgres-helper.js'

const db = await testDatabase(t)

for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async () => {
    await conformanceCase.run(await db.storage())
  })
}

// With prepare, statements go out as pg's { name, text, values }: on a server through pg itself, which
// prepares each once per connection; on PGlite through a client that runs the text, as pg would.
const preparing: PostgresClient = db.server
  ? db.client
  : { query: (config: any, params?: unknown[]) => typeof config === 'string' ? db.client.query(config, params!) : db.client.query(config.text, config.values) }
for (const conformanceCase of conformanceCases) {
  t.test(`postgresStorage with prepare (${db.server ? 'server' : 'PGlite'}): ${conformanceCase.name}`, async () => {
    await conformanceCase.run(await db.storage({ client: preparing, prepare: true }))
  })
}
