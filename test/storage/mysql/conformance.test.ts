// mysqlStorage passes the storage conformance suite, every case, on the server of MYSQL_URL.
import t from 'tap'
import { conformanceCases, runConformanceCase } from '../../../lib/storage/conformance/run-conformance.js'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  for (const conformanceCase of conformanceCases) {
    t.test(`mysqlStorage: ${conformanceCase.name}`, async t => {
      t.equal(await runConformanceCase(conformanceCase, () => db.storage(), { transaction: db.transaction }), undefined, 'passed, not skipped')
    })
  }
}
