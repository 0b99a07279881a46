# syntax=docker/dockerfile:1
# One image for the api, worker and migrate services of docker-compose.yml.

# Build stage: all dependencies, so tsc can compile everything into dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime stage: production dependencies and dist/ only.
# The worker bundles its workflows at start from dist/temporal/workflows (compiled JS,
# resolved via __dirname), with webpack/swc from @temporalio/worker, so no TS sources
# are needed here.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Where the local blob backend keeps file contents (a volume in docker-compose), owned by the runtime user.
RUN mkdir -p /data/blobs && chown node:node /data/blobs
USER node
EXPOSE 3000
CMD ["node", "dist/api/main.js"]
