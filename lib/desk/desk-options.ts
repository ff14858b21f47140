// The `desk` option: checked at register, with its defaults.
import type { OptionChecker } from '../option-checks.js'
import type { OrderHooks } from '../http/routes.js'

/** The staff page: `true`, or where it is served, its title and the hooks of the host's login. */
export interface DeskOptions {
  /** Where the page is served, under `prefix`. Default: '/order/desk'. */
  path?: string
  /** The page's title and first heading. Default: 'Orders'. */
  title?: string
  /** `onRequest` / `preHandler` hooks on the page, its assets and the event stream (a staff login). */
  hooks?: OrderHooks
}

/** The `desk` option checked, with its defaults. */
export interface DeskConfig {
  path: string
  title: string
  hooks: OrderHooks | undefined
}

const NAMES = ['path', 'title', 'hooks']
// One or more segments of letters, digits and -._~, each after a slash, no trailing slash: the page's assets sit below it.
const PATH = /^(\/[A-Za-z0-9._~-]+)+$/

/** The `desk` option, or undefined while it is off. */
export function checkDesk (desk: unknown, check: OptionChecker, checkHooks: (hooks: unknown, name: string) => OrderHooks | undefined): DeskConfig | undefined {
  if (desk === undefined || desk === false) return undefined
  if (desk === true) return { path: '/order/desk', title: 'Orders', hooks: undefined }
  if (typeof desk !== 'object' || desk === null || Array.isArray(desk)) {
    throw check.invalid(`desk must be true or an object like { path: '/order/desk', title: 'Orders', hooks: { onRequest } }, got ${JSON.stringify(desk)}`)
  }
  for (const name of Object.keys(desk)) {
    if (!NAMES.includes(name)) throw check.invalid(`unknown option "desk.${name}"; the options of desk are ${NAMES.join(', ')}`)
  }
  const { path = '/order/desk', title = 'Orders', hooks } = desk as Record<string, unknown>
  if (typeof path !== 'string' || !PATH.test(path) || path.split('/').some(segment => segment === '.' || segment === '..')) {
    throw check.invalid(`desk.path must be a path like "/order/desk": segments of letters, digits and -._~, each after a "/", no trailing "/", got ${JSON.stringify(path)}`)
  }
  if (typeof title !== 'string' || title.trim() === '' || title.length > 100) {
    throw check.invalid(`desk.title must be a string of 1 to 100 characters, got ${JSON.stringify(title)}`)
  }
  return { path, title, hooks: checkHooks(hooks, 'desk.hooks') }
}
