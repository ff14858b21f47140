// The route tests on PostgreSQL: the server of DATABASE_URL, else PGlite, one database for all and a
// fresh table per test. `npm run test:postgres`.
import { runFolder } from './run-folder.js'

process.env.FASTIFY_ORDER_TEST_STORAGE = 'postgres'
await runFolder(new URL('routes/', import.meta.url))
