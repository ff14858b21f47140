// The feed's own tests (test/feed/), all in this one process. `npx tap <file>` runs one alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('feed/', import.meta.url))
