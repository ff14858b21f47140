// The tests of the MySQL adapter, mysqlStorage (test/storage/mysql/), all in this one process, on the MariaDB
// or MySQL server of MYSQL_URL; without one it says in one line that it skipped and why. Named like
// test/adapter.postgres.ts, so it starts among the first files. `npx tap <file>` runs one file alone.
import t from 'tap'
import { mysqlUrl } from './mysql-helper.js'
import { runFolder } from './run-folder.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else await runFolder(new URL('storage/mysql/', import.meta.url))
