// One headless Chromium for every browser test of the desk, started at the first use and closed when the process's tests end.
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import tap, { type Test } from 'tap'
import { chromium, type Browser, type Page } from 'playwright-core'
import { AxeBuilder } from '@axe-core/playwright'

// Debian's package (.ci/run installs it when missing); CHROMIUM_PATH names another build.
const executablePath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(path => path !== undefined && existsSync(path))
export const skip = executablePath === undefined ? 'Chromium is not installed: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH' : false

/** What the tests read of a page's globals, in functions run in the page (the tests compile without the DOM's types). */
export interface InPage {
  pwned: boolean
  innerWidth: number
  document: { activeElement: unknown, documentElement: { scrollWidth: number } }
  sessionStorage: Record<string, string>
  localStorage: Record<string, string>
}

let browser: Promise<Browser> | undefined

/** The errors thrown in each page's scripts, which a test checks at its end. */
export const pageErrors = new WeakMap<Page, string[]>()

function shared (): Promise<Browser> {
  if (browser === undefined) {
    // Running as root (CI containers) needs --no-sandbox.
    browser = chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] })
    const started = browser
    tap.teardown(async () => { await (await started).close() })
  }
  return browser
}

/** The address the app listens at, after listening on a free port of 127.0.0.1. */
export async function listening (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

/** A new tab of the shared browser (a context of its own: its own session storage), closed when `t` ends. */
export async function newPage (t: Test, viewport = { width: 1000, height: 800 }): Promise<Page> {
  const context = await (await shared()).newContext({ viewport })
  t.teardown(() => context.close())
  const page = await context.newPage()
  // Anything that would run from data sets this; the tests check it stays unset.
  await page.addInitScript(() => { (globalThis as unknown as InPage).pwned = false })
  const errors: string[] = []
  page.on('pageerror', error => errors.push(error.message))
  pageErrors.set(page, errors)
  return page
}

/** The serious and critical accessibility violations axe-core finds on the page as it is. */
export async function violations (page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze()
  return violations.filter(violation => violation.impact === 'serious' || violation.impact === 'critical')
    .map(violation => `${violation.id}: ${violation.nodes.map(node => node.target.join(' ')).join(', ')}`)
}

// The README's screenshots: taken on every run, written into docs/ when DESK_SCREENSHOTS=1 asks for them
// (`npm run screenshots`), else beside the run, so that a test run leaves the checkout as it was.
const shots = process.env.DESK_SCREENSHOTS === '1' ? new URL('../../docs/', import.meta.url).pathname : mkdtempSync(join(tmpdir(), 'desk-screenshots-'))

/** Where the screenshot named `name` (desk-list.png, desk-order.png) goes. */
export const screenshotPath = (name: string) => join(shots, name)
