// Run by tap before any test file (.taprc `before`): the PGlite data directory every PostgreSQL test
// starts from is made here once, not by several test processes at once.
import { preparedDataDir } from './pglite.js'

await preparedDataDir()
