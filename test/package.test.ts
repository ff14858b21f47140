// The published package: what the tarball holds and where its exports point.
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')

function sourcesIn (folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter(file => file.endsWith('.ts'))
    .map(file => `${folder}/${file.replaceAll('\\', '/')}`)
}

// npm test builds first; a run of this file alone builds when dist/ is missing.
t.before(async () => {
  if (!existsSync(join(root, 'dist', 'index.js'))) await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root })
  if (!existsSync(join(root, 'dist', 'desk-page', 'desk.js'))) await run(process.execPath, ['scripts/build-desk.js'], { cwd: root })
})

t.test('the tarball holds the compiled library, its declarations and maps, the sources they map to, README, the guides and LICENSE', async t => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root })
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
  const files = pack!.files.map(file => file.path).sort()

  // The guides and the changelog the README links, so its links work in the installed package too.
  // The desk's page, built from desk-src/ (whose sources stay out: the page is served as built).
  const expected = ['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json', ...readdirSync('docs').map(name => `docs/${name}`), 'dist/desk-page/desk.css', 'dist/desk-page/desk.js']
  for (const source of sourcesIn('lib')) {
    const compiled = `dist/${relative('lib', source).replaceAll('\\', '/').replace(/\.ts$/, '')}`
    // Declaration maps and source maps point at lib/, so "go to definition" lands in the TypeScript source.
    expected.push(source, `${compiled}.js`, `${compiled}.js.map`, `${compiled}.d.ts`, `${compiled}.d.ts.map`)
  }
  t.same(files, expected.sort())
})

t.test('every entry in exports points at a file the tarball holds', async t => {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types: string, default: string }>
  }
  t.same(Object.keys(exports['.'] as object), ['types', 'default'], 'types come first')
  for (const [entry, target] of Object.entries(exports)) {
    if (typeof target === 'string') {
      t.ok(existsSync(join(root, target)), `${entry} exists`)
      continue
    }
    const source = target.default.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts')
    // An entry is published once its source is in lib/ (fastify-order/postgres and /conformance come with theirs).
    if (!existsSync(join(root, source))) continue
    t.ok(existsSync(join(root, target.types)), `${entry} has declarations`)
    t.ok(existsSync(join(root, target.default)), `${entry} has JavaScript`)
  }
})
