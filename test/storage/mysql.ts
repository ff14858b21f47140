// The tests of mysqlStorage (test/storage/mysql/), all in this one process, on the MariaDB or MySQL server
// of MYSQL_URL; without one it says in one line that it skipped and why. `npx tap <file>` runs one alone.
import t from 'tap'
import { mysqlUrl } from '../mysql-helper.js'
import { runFolder } from '../run-folder.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else await runFolder(new URL('mysql/', import.meta.url))
