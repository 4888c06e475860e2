import { spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import { LOAD_CORE, onCore } from './cores.js'

/**
 * An OTLP/HTTP receiver that reads and discards, in its own process on the load generator's
 * core (its CPU is not the gateway's); its URL. It exits when its stdin closes, which happens
 * however this process goes: the bench stops targets with SIGKILL, which runs no exit handler,
 * and a sink left behind kept the bench's stderr open (a caller reading it to the end waited
 * forever) and its port bound.
 */
export async function startOtlpSink (): Promise<string> {
  const code = `process.stdin.on('end', () => process.exit(0)).resume(); require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()) }).listen(0, '127.0.0.1', function () { console.log(this.address().port) })`
  // Off the server's core: a child inherits the target's pinning, and the receiver's work (about
  // 4 us a call with every call sampled) then took the gateway's core, which a real collector does not.
  const sink = spawn(...onCore(LOAD_CORE, process.execPath, ['-e', code]), { stdio: ['pipe', 'pipe', 'inherit'] })
  process.once('exit', () => { sink.kill() })
  const port = await new Promise<string>(resolve => sink.stdout.once('data', chunk => { resolve(String(chunk).trim()) }))
  // Nothing of it keeps this process alive: a bench that is done exits, and the sink with it.
  sink.unref()
  // (Pipes to a child are sockets.)
  ;(sink.stdin as unknown as Socket).unref()
  ;(sink.stdout as unknown as Socket).unref()
  return `http://127.0.0.1:${port}`
}
