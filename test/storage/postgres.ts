// The tests of postgresStorage (test/storage/postgres/), all in this one process, on one database: the
// server of DATABASE_URL, else one PGlite, each file on tables of its own. `npx tap <file>` runs one alone.
import { runFolder } from '../run-folder.js'

await runFolder(new URL('postgres/', import.meta.url))
