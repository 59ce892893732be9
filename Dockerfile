# One image for the api and worker services (docker-compose.yml; docs/operations.md#containers).
# Node 22 LTS; production dependencies only (tsx, the TypeScript loader, is one); runs as the image's non-root
# `node` user; node is the container's main process (exec form, no npm or shell in between), so SIGTERM reaches it:
# the API drains in-flight requests, a worker lets its running jobs finish, and both exit 0.
FROM node:22-bookworm-slim
ENV NODE_ENV=production DATA_DIR=/data HOST=0.0.0.0 PORT=8787
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --chown=node:node . .
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8787
# Liveness of the API: /api/health on the container's own port (the worker service overrides it in compose).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT||8787}/api/health`).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=128", "--import", "tsx", "jobs/cli/proofline.cli.ts", "serve"]
