# nodelet on a Node LTS slim image. No Go inside: the product never needs it.
# Build: docker build -t nodelet .   Run: docker run --rm nodelet --help
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY plugin-api/package.json plugin-api/
COPY providers/wasi/package.json providers/wasi/
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules node_modules
COPY package.json tsconfig.json ./
COPY bin bin
COPY core core
COPY plugin-api plugin-api
COPY providers providers
COPY sockets sockets
COPY examples examples
VOLUME ["/var/lib/nodelet"]
EXPOSE 10250
ENTRYPOINT ["node", "/app/bin/nodelet.mjs"]
