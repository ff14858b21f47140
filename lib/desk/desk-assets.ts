// The desk's page as built by `npm run build` (scripts/build-desk.js): read once at register and served from memory.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { codes } from '../errors.js'

/** One file of the page, named by its content so a browser may keep it for good. */
export interface DeskAsset {
  name: string
  type: string
  body: Buffer
}

export interface DeskAssets {
  script: DeskAsset
  style: DeskAsset
}

/** Where the build puts the page: dist/desk-page/ at the package's root, from lib/desk/ as from dist/desk/. */
export const BUILT_PAGE = new URL('../../dist/desk-page/', import.meta.url)

function assetOf (folder: URL, file: string, type: string): DeskAsset {
  let body: Buffer
  try {
    body = readFileSync(new URL(file, folder))
  } catch {
    throw new codes.ORDER_INVALID_OPTIONS(`desk: the page is not built (no ${new URL(file, folder).pathname}); run npm run build, which builds it into the package, or turn the desk off`)
  }
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 12)
  const [stem, extension] = file.split('.') as [string, string]
  return { name: `${stem}.${hash}.${extension}`, type, body }
}

/** The script and style of the page in `folder`; register fails, saying what to run, when they are absent. */
export function loadDeskAssets (folder: URL = BUILT_PAGE): DeskAssets {
  return {
    script: assetOf(folder, 'desk.js', 'text/javascript; charset=utf-8'),
    style: assetOf(folder, 'desk.css', 'text/css; charset=utf-8')
  }
}
