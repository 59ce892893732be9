# One image for the api and worker services (see docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV DATA_DIR=/data HOST=0.0.0.0
CMD ["npm", "run", "serve"]
