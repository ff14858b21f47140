// The tests of the PostgreSQL adapter, postgresStorage (test/storage/postgres/), all in this one process, on
// one database: the server of DATABASE_URL, else one PGlite, each file on tables of its own. tap starts its
// files in the order of their names, and this one, the longest, first: `adapter.*` sorts before the rest, so
// the shorter files fill the time it takes rather than leaving it to run alone at the end.
// `npx tap <file>` runs one file of the folder alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('storage/postgres/', import.meta.url))
