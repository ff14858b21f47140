// The tests of the storage interface and its conformance suite (test/storage/) and of memoryStorage
// (test/storage/memory/), all in this one process. The SQL storages have runners of their own beside
// them: test/adapter.postgres.ts and test/adapter.mysql.ts. `npx tap <file>` runs one alone.
import t from 'tap'
import { runFolder } from './run-folder.js'

// Four tests at a time: each is on memory storages of its own, and most of their time is the conformance
// suite waiting on its timers (a lease lapsing, a feed polled), which one after another took 20 s, not 7.
t.jobs = 4
await runFolder(new URL('storage/', import.meta.url), new URL('storage/memory/', import.meta.url))
