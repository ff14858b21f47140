// mysqlStorage keeps changes after placement: a changed event and a change's claim in the replace's one transaction, readChangeClaim, balance pages.
import t from 'tap'
import { mysqlUrl, testMysql } from '../../mysql-helper.js'
import { claimOf, orderOf, readFeed, storeOrder } from '../../../lib/storage/conformance/fixtures.js'
import { tablesOf } from '../../../lib/storage/mysql/tables.js'
import { changed, changeStorageTests } from '../change-storage.js'

if (mysqlUrl === '') t.plan(0, 'MYSQL_URL is not set: no MariaDB or MySQL server to test on')
else {
  const db = testMysql(t)
  changeStorageTests(t, { storage: () => db.storage(), transaction: db.transaction })

  t.test('a change whose claim cannot be written fails, and stores nothing', async t => {
    const table = db.freshTable()
    const storage = await db.storage({ table })
    const order = orderOf()
    await storeOrder(storage, order)
    const { keys } = tablesOf(table)
    // The keys table as a release before changes has it: no answer column.
    await db.client.query(`ALTER TABLE ${keys} DROP COLUMN answer`)
    const { after, event } = changed(order, { paid: 1000, balance: 1500 })
    await t.rejects(storage.replace(after, 1, event, claimOf('change:key-1')), { errno: 1054 } as never)
    t.same(await storage.get(order.id), order)
    t.same((await readFeed(storage, 1)).map(listed => listed.type), ['created'])
  })
}
