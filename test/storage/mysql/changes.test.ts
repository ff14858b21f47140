// mysqlStorage keeps changes after placement: a changed event and a change's claim in the replace's one transaction, readChangeClaim, balance pages.
import t from 'tap'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'
import { changeStorageTests } from '../change-storage.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  changeStorageTests(t, { storage: () => db.storage(), transaction: db.transaction })
}
