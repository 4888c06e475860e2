# syntax=docker/dockerfile:1
# toolgate: the gateway serving ./tools. Build: docker build -t toolgate .
# Listens on 0.0.0.0:3000 in the container, which the gateway allows only with credentials
# (API_KEYS, JWT_*, or a CONFIG_FILE holding apiKeys) or AUTH_DISABLED=true.

# Every dependency, as locked, and the compiled gateway (dist/).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json tsconfig.tools.json ./
COPY src ./src
COPY plugins ./plugins
COPY bin ./bin
COPY tools ./tools
RUN npm ci --no-audit --no-fund

# Production dependencies only.
FROM node:20-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-slim
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
# The compiled gateway and the shipped tools, compiled (dist/tools): nothing is transpiled at
# run time. A tools folder you mount instead (TOOLS_DIR=/tools -v ./my-tools:/tools) needs no
# node_modules: it imports `toolgate` and `zod` from here, and its .ts files are stripped as
# they load (esbuild is a production dependency).
COPY package.json ./
COPY --from=build /app/dist ./dist
# The code stays root-owned and read-only to the process.
USER node
# MALLOC_ARENA_MAX=2: glibc would keep up to 8 malloc arenas per core for Node's few threads;
# two hold about 2.5 MiB less when idle, at the same throughput (docs/benchmarks.md, idle memory).
ENV HOST=0.0.0.0 PORT=3000 TOOLS_DIR=/app/dist/tools MALLOC_ARENA_MAX=2
EXPOSE 3000
# No curl in slim images: Node's own fetch.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# What `npm start` runs, as one node process: it is PID 1 and gets SIGTERM itself, so
# graceful shutdown (SHUTDOWN_GRACE_MS) works on `docker stop`. --max-semi-space-size=4 caps
# V8's young generation, which start-up would otherwise grow to 2 x 16 MiB and keep while idle
# (docs/benchmarks.md, idle memory; the same throughput in bench/compare.ts).
CMD ["node", "--max-semi-space-size=4", "dist/bin/toolgate.js", "serve"]
