// Installed from its folder, as someone trying it before a release does: npm runs `prepare`, which builds dist/.
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }

// npm, then tsc on every file of lib/: a while on a busy machine.
t.setTimeout(180_000)

t.test('npm install <folder> builds the package, and a fresh host imports it, registers it and creates an order', async t => {
  const folder = mkdtempSync(join(tmpdir(), 'fastify-order-install-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))

  // The package's folder as a clone holds it after `npm install`: the sources, no dist/ (a build of the
  // checkout must not stand in for the one under test), the dependencies (the checkout's, linked).
  const source = join(folder, 'fastify-order')
  mkdirSync(source)
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'lib', 'desk-src', 'scripts', 'README.md', 'LICENSE']) {
    cpSync(join(root, entry), join(source, entry), { recursive: true })
  }
  symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'), 'dir')

  const host = join(folder, 'host')
  mkdirSync(host)
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host', private: true, type: 'module', dependencies: { fastify: manifest.devDependencies.fastify } }))
  writeFileSync(join(host, 'app.js'), [
    "import Fastify from 'fastify'",
    "import orderPlugin from 'fastify-order'",
    'const app = Fastify()',
    'await app.register(orderPlugin, { desk: true })',
    "const response = await app.inject({ method: 'POST', url: '/order/createOrder', payload: { customerId: 'cus_42', currency: 'EUR', items: [{ sku: 'A-1', quantity: 2, unitPrice: 1250 }] } })",
    "const desk = await app.inject({ method: 'GET', url: '/order/desk' })",
    'console.log(JSON.stringify({ status: response.statusCode, order: response.json(), desk: desk.statusCode }))',
    'await app.close()'
  ].join('\n'))

  // npm's own settings of an outer `npm test` (its prefix, its scripts) are not the host's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
  // The registry is asked only for what the cache lacks (fastify and the plugin's dependencies are there after npm ci).
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts=false', '../fastify-order'], { cwd: host, env })
  t.ok(existsSync(join(source, 'dist', 'index.js')), 'prepare built dist/')

  const { stdout } = await run(process.execPath, ['app.js'], { cwd: host, env })
  const { status, order, desk } = JSON.parse(stdout) as { status: number, order: { total: number, status: string }, desk: number }
  t.equal(status, 201)
  t.equal(desk, 200, 'the desk\'s page was built into the package')
  t.match(order, { total: 2500, status: 'pending' })
})
