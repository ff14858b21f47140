// postgresStorage keeps changes after placement: a changed event and a change's claim in the replace's one statement, readChangeClaim, balance pages.
import t from 'tap'
import { testDatabase } from '../../postgres-helper.js'
import { changeStorageTests } from '../change-storage.js'

const db = await testDatabase(t)

changeStorageTests(t, { storage: () => db.storage({}, t), transaction: db.transaction })
