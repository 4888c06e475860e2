/**
 * Idle memory: the RSS of a freshly started gateway against a bare Fastify +
 * fastify-type-provider-zod process serving one route, side by side, rounds alternating.
 * Each server is started, sent one request, left idle for a second, then measured and stopped.
 * `npm run bench:memory [rounds]` (build first: it runs the compiled gateway).
 *
 * The gateway is started exactly as production starts it, read from where production reads it:
 * the `start` script of package.json (`npm start`: ./tools, .ts modules) and the Dockerfile's
 * CMD with its TOOLS_DIR (the image: the compiled tools), node flags included.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { median } from './lib/stats.js'

interface Subject { readonly label: string, readonly args: readonly string[], readonly env: Readonly<Record<string, string | undefined>>, readonly path: string, readonly body: unknown }

/** `npm start` as package.json has it: `node`, then what node is given. */
function npmStartArgs (): string[] {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
  const [command, ...args] = scripts.start!.trim().split(/\s+/)
  if (command !== 'node') throw new Error(`the start script does not run node directly: ${scripts.start}`)
  return args
}

/**
 * The image's CMD (exec form) and its environment (every `ENV` of the final stage but the
 * listen address), the image's /app being this checkout.
 */
function imageStart (): { args: string[], env: Record<string, string> } {
  const dockerfile = readFileSync('Dockerfile', 'utf8')
  const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  const [command, ...args] = JSON.parse(/^CMD (\[.*\])\s*$/m.exec(final)![1]!) as string[]
  if (command !== 'node') throw new Error(`the image's CMD does not run node directly: ${command}`)
  const env: Record<string, string> = {}
  for (const [, line] of final.matchAll(/^ENV (.+)$/gm)) {
    for (const [, name, value] of line!.matchAll(/(\w+)=(\S+)/g)) env[name!] = value!.replace(/^\/app\//, '')
  }
  delete env.HOST
  delete env.PORT
  return { args, env }
}

const image = imageStart()
const npmStart = npmStartArgs()
const toolCall = { path: '/tools/time_now', body: {} }
const SUBJECTS: readonly Subject[] = [
  { label: 'bare Fastify + type-provider-zod, one route', args: ['bench/targets/bare-fastify.mjs', '0'], env: {}, path: '/echo', body: { text: 'hi' } },
  { label: `the image: node ${image.args.join(' ')}, ${Object.entries(image.env).map(([name, value]) => `${name}=${value}`).join(' ')} (compiled tools)`, args: image.args, env: image.env, ...toolCall },
  { label: `npm start: node ${npmStart.join(' ')} (./tools, .ts)`, args: npmStart, env: { TOOLS_DIR: undefined }, ...toolCall },
]

async function measure (subject: Subject): Promise<number> {
  const child = spawn(process.execPath, subject.args, { env: { ...process.env, ...subject.env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      out += String(chunk)
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out)
      if (match !== null) resolve(match[1]!)
    })
    child.once('exit', code => { reject(new Error(`${subject.label} exited ${code}`)) })
  })
  const response = await fetch(address + subject.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(subject.body) })
  if (response.status !== 200) throw new Error(`${subject.label}: ${response.status}`)
  await sleep(Number(process.env.IDLE_MS ?? 1_000))
  const rss = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  return rss
}

const rounds = Number(process.argv[2] ?? 5)
const samples = new Map<Subject, number[]>(SUBJECTS.map(subject => [subject, []]))
for (let round = 0; round < rounds; round++) {
  // Rotate the order: a process started right after another may find the page cache warmer.
  for (let i = 0; i < SUBJECTS.length; i++) {
    const subject = SUBJECTS[(round + i) % SUBJECTS.length]!
    samples.get(subject)!.push(await measure(subject))
  }
}
const baseline = median(samples.get(SUBJECTS[0]!)!)
console.log(`| process | idle RSS MiB, median of ${rounds} | vs bare Fastify |\n|---|---|---|`)
for (const [subject, values] of samples) {
  const rss = median(values)
  console.log(`| ${subject.label} | ${rss.toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}) | ${(rss / baseline).toFixed(2)}x |`)
}
