// Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  hitCount?: number
}

/** The `count` functions with the most self time, as rows [percent of busy time, name, file:line]. */
export function topSelfTime (file: string, count: number): string[][] {
  const { nodes } = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] }
  const hits = new Map<string, { name: string, where: string, hits: number }>()
  let busy = 0
  for (const { callFrame, hitCount = 0 } of nodes) {
    if (callFrame.functionName === '(idle)' || hitCount === 0) continue
    busy += hitCount
    const where = callFrame.url === ''
      ? ''
      : `${callFrame.url.startsWith('file://') ? relative(process.cwd(), new URL(callFrame.url).pathname) : callFrame.url}:${callFrame.lineNumber + 1}`
    const key = `${callFrame.functionName} ${where}`
    const entry = hits.get(key) ?? { name: callFrame.functionName || '(anonymous)', where, hits: 0 }
    entry.hits += hitCount
    hits.set(key, entry)
  }
  return [...hits.values()]
    .sort((a, b) => b.hits - a.hits)
    .slice(0, count)
    .map(({ name, where, hits }) => [(100 * hits / busy).toFixed(1), name, where])
}
