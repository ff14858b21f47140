// The route tests on memory storage, the plugin's default. `npx tap test/routes/<file>` runs one file alone.
import { runFolder } from './run-folder.js'

await runFolder(new URL('routes/', import.meta.url))
