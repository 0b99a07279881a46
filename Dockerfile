# syntax=docker/dockerfile:1
# One image for the api, worker and migrate services of docker-compose.yml.

# Build stage: all dependencies, so tsc can compile everything into dist/.
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime stage: production dependencies and dist/ only.
# `npm run build` also bundled the workflows (dist/temporal/workflow-bundle.js); the worker
# loads that file instead of running webpack at start, which saves seconds per start and
# about 100 MiB of worker memory. WORKFLOW_BUNDLE_PATH names it, so a missing bundle fails
# the start instead of silently bundling.
FROM node:26-trixie-slim AS runtime
ENV NODE_ENV=production
ENV WORKFLOW_BUNDLE_PATH=/app/dist/temporal/workflow-bundle.js
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Where the local blob backend keeps file contents (a volume in docker-compose), owned by the runtime user.
RUN mkdir -p /data/blobs && chown node:node /data/blobs
USER node
EXPOSE 3000
# --max-semi-space-size=4 and the heap cap (API_HEAP_MB's default): see docker-compose.yml, which
# runs the API and the worker from this image with their own commands.
CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=512", "dist/main/api.js"]
