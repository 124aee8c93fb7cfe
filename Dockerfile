# The register runtime (and the compiler's CLI) as an image: node:20-slim, running as the unprivileged `node` user.
# Build: docker build -t identity-register .   Run one instance: see compose.yaml and docs/operations.md
# ("Several instances").

FROM node:20-slim AS build
# better-sqlite3 is compiled from source (no prebuilt download): the build stage has the toolchain, the image does not.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The sources come first: `npm ci` ends with the prepare script, which builds them into build/ (JavaScript, run by
# bin/register.mjs); the image runs no TypeScript loader. Every folder the build reaches is copied (generator/: the CLI's
# generate and import-v0); test/docs/container.test.ts builds exactly these COPY lines. .dockerignore keeps keys,
# state, secrets and local builds out of the context.
COPY package.json package-lock.json tsconfig.json ./
COPY bin bin
COPY cli cli
COPY client client
COPY common common
COPY compiler compiler
COPY edge edge
COPY explorer explorer
COPY generator generator
COPY mirror mirror
COPY runtime runtime
COPY scripts/build.mjs scripts/build.mjs
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787
WORKDIR /app
# zstd makes (compile) and applies (pull) the patches between stamps; without it both still work, moving whole files.
RUN apt-get update \
 && apt-get install -y --no-install-recommends zstd \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
# /state holds the SQLite database when no Redis is given; /dist is mounted read-only.
RUN mkdir -p /state /dist && chown node:node /state
USER node
EXPOSE 8787
VOLUME ["/state"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
ENTRYPOINT ["node", "bin/register.mjs"]
CMD ["serve", "--dist", "/dist", "--state", "sqlite:/state/register.db"]
