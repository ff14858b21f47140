// The tests of the storage interface and its conformance suite (test/storage/) and of memoryStorage
// (test/storage/memory/), all in this one process. The SQL storages have runners of their own beside
// them: test/adapter.postgres.ts and test/adapter.mysql.ts. `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('storage/', import.meta.url), new URL('storage/memory/', import.meta.url))
