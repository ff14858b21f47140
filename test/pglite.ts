// Embedded PostgreSQL for the tests: each PGlite starts from one data directory made by initdb once, not per process.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'

/** The installed PGlite's version, which names its prepared data directory: another version makes its own. */
function pgliteVersion (): string {
  let folder = dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')))
  for (;;) {
    try {
      const { name, version } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: string, version: string }
      if (name === '@electric-sql/pglite') return version
    } catch {}
    if (dirname(folder) === folder) return 'unknown'
    folder = dirname(folder)
  }
}

const datadirFile = fileURLToPath(new URL(`../node_modules/.cache/fastify-order/pglite-${pgliteVersion()}-datadir.tar`, import.meta.url))
let preparing: Promise<Blob> | undefined

/**
 * The data directory of a PGlite fresh from initdb, as a tarball: made once (initdb takes seconds, much more on
 * a busy machine), kept under node_modules/.cache, so every later PGlite of every test process loads it in a
 * fraction of that. Loading it gives what PGlite.create() gives: the same empty cluster, at the same transaction id.
 */
export async function preparedDataDir (): Promise<Blob> {
  preparing ??= (async () => {
    try {
      return new Blob([readFileSync(datadirFile)])
    } catch {}
    const lite = await PGlite.create()
    const tarball = await lite.dumpDataDir('none')
    await lite.close()
    mkdirSync(dirname(datadirFile), { recursive: true })
    // Written aside, then renamed: processes preparing at once each leave a whole file, never half of one.
    const aside = `${datadirFile}.${process.pid}`
    writeFileSync(aside, Buffer.from(await tarball.arrayBuffer()))
    renameSync(aside, datadirFile)
    return tarball
  })()
  return preparing
}

/** A new, empty embedded PostgreSQL, as PGlite.create(options) makes one, started from the prepared data directory. */
export async function freshPGlite (options: PGliteOptions = {}): Promise<PGlite> {
  return PGlite.create({ ...options, loadDataDir: await preparedDataDir() })
}
