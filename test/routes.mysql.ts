// The route tests on MySQL: the MariaDB or MySQL server of MYSQL_URL, a fresh table per test.
// In the tap run, or alone with `npm run test:mysql`; without MYSQL_URL it says in one line that it skipped and why.
import t from 'tap'
import { runFolder } from './run-folder.js'

if ((process.env.MYSQL_URL ?? '') === '') {
  t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server for the route tests')
} else {
  process.env.FASTIFY_ORDER_TEST_STORAGE = 'mysql'
  await runFolder(new URL('routes/', import.meta.url))
}
