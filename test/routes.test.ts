// The route tests on memory storage, the plugin's default. `npx tap test/routes/<file>` runs one file alone.
import { runRouteTests } from './route-tests.js'

await runRouteTests()
