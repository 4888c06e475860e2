import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    // The shipped tools import the package by name; tests run them against the sources.
    alias: [
      { find: /^toolgate$/, replacement: source('./src/index.ts') },
      { find: /^toolgate\/server$/, replacement: source('./plugins/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Timing tests measure real timers; two cores run the files two at a time.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
