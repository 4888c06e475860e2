import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Timing tests measure real timers; two cores run the files two at a time.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
