/**
 * Time bounds for tests whose work is slow by nature, sized for the machine the README's
 * `npm ci && npm test` must pass on: two cores, running two test files at once
 * (vitest.config.ts), and maybe busy with something else besides. Each is several times what
 * that work took there under load, so it ends only work that hangs; a slow machine is not a
 * failure. Everything else keeps the suite's testTimeout (vitest.config.ts), so an ordinary
 * test that hangs still fails within seconds.
 */
export const SLOW = {
  /** A test that starts and stops child processes: a gateway (`toolgate serve`, `toolgate mcp`), the CLI, a node script. */
  PROCESS_MS: 60_000,
  /**
   * One `tsc` over a project: the examples of the README and docs/ take 20 to 30 s on a 2-core
   * machine and took 113 s on one running four times as much as it has cores.
   */
  COMPILE_MS: 360_000,
  /** An `npm pack` and an `npm install` into a new project, each command capped at COMPILE_MS. */
  INSTALL_MS: 2 * 360_000 + 60_000,
  /** Headless Chromium: its launch, page loads and clicks. */
  BROWSER_MS: 60_000,
  /** Hundreds of fast-check runs, or hundreds of requests through the whole pipeline, in process. */
  CPU_MS: 60_000,
  /** A Redis of the test's own started, stopped, paused or cut off, and the gateway's reconnection (backoff up to 2 s). */
  REDIS_OUTAGE_MS: 60_000,
} as const
