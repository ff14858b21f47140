// Runs npm scripts at once, for npm test's steps that do not depend on each other: each one's output is
// kept together and printed when it ends, with its time; `--live NAME` prints that one's output as it comes,
// and the others' once it has ended, so no line of one is cut by another's. Fails when any of them fails.
import { spawn } from 'node:child_process'

const args = process.argv.slice(2)
const live = new Set(args.flatMap((arg, index) => args[index - 1] === '--live' ? [arg] : []))
const steps = args.filter(arg => arg !== '--live')

// Under npm, its own CLI (npm_execpath) with this Node.js; otherwise the npm on the PATH.
const npm = process.env.npm_execpath
  ? [process.execPath, [process.env.npm_execpath]]
  : [process.platform === 'win32' ? 'npm.cmd' : 'npm', []]

/** Runs `npm run <step>`; resolves whether it passed. */
function run (step) {
  const start = Date.now()
  const shown = live.has(step)
  const child = spawn(npm[0], [...npm[1], 'run', step], {
    stdio: ['ignore', shown ? 'inherit' : 'pipe', shown ? 'inherit' : 'pipe'],
    shell: process.platform === 'win32' && !process.env.npm_execpath
  })
  const output = []
  child.stdout?.on('data', chunk => output.push(chunk))
  child.stderr?.on('data', chunk => output.push(chunk))
  return new Promise(resolve => {
    child.on('error', error => output.push(Buffer.from(`${error.message}\n`)))
    child.on('close', async code => {
      const seconds = Math.round((Date.now() - start) / 1000)
      output.push(Buffer.from(`# npm run ${step}: ${code === 0 ? 'passed' : 'FAILED'} in ${seconds} s\n`))
      if (!shown) await liveEnded
      process.stdout.write(Buffer.concat(output))
      resolve(code === 0)
    })
  })
}

let liveEnded = Promise.resolve()
const runs = steps.map(run)
liveEnded = Promise.all(runs.filter((_, index) => live.has(steps[index])))
const passed = await Promise.all(runs)
process.exitCode = passed.every(Boolean) ? 0 : 1
