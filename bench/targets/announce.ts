/**
 * How a target tells the bench which port it got, and answers its memory questions. Run by
 * hand (no IPC channel), it prints the URL instead, and SIGINT exits cleanly so a
 * `node --cpu-prof` run still writes its profile.
 */
export function announce (port: number): void {
  process.once('SIGINT', () => { process.exit(0) })
  process.once('SIGTERM', () => { process.exit(0) })
  if (process.send === undefined) {
    console.log(`listening on http://127.0.0.1:${port}`)
    return
  }
  process.on('message', message => {
    if (message !== 'memory') return
    // Heap after a full collection (with --expose-gc) is the leak signal RSS only hints at.
    const gc = (globalThis as { gc?: () => void }).gc
    gc?.()
    process.send?.({ memory: process.memoryUsage(), collected: gc !== undefined })
  })
  process.send({ port })
}
