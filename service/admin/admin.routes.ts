/**
 * /admin/queues: the Bull Board queue dashboard (queue-dashboard.ts), behind
 * ADMIN_TOKEN. Mounted only when the service was built with a dashboard
 * (REDIS_URL and ADMIN_TOKEN configured). A browser opens
 * `/admin/queues?token=…` once: a digest of the token (never the token) moves into an HttpOnly cookie, Secure over HTTPS,
 * scoped to /admin and the URL is cleaned; API clients send
 * `Authorization: Bearer …`.
 */
import { createHash } from 'node:crypto';
import type { H3 } from 'h3';
import type { ServiceDeps } from '../platform/deps.ts';
import { bearerTokenOf, tokensEqual } from '../platform/guards.ts';
import { DASHBOARD_PATH } from './queue-dashboard.ts';

const COOKIE = 'proofline_admin';

/**
 * The cookie's value: a digest of the admin token, never the token itself (issue 25), so a cookie read off a
 * browser or a log cannot be replayed as a Bearer token elsewhere (the CLI's /admin/credits).
 */
export function adminCookieValue(token: string): string {
  return createHash('sha256').update(`proofline-admin-cookie:v1:${token}`).digest('base64url');
}

/** HTTPS as the client saw it: the request URL, or `X-Forwarded-Proto` set by a TLS-terminating proxy. */
function isHttps(req: Request, url: URL): boolean {
  return url.protocol === 'https:' || (req.headers.get('x-forwarded-proto') ?? '').split(',')[0]?.trim() === 'https';
}

function cookieToken(req: Request): string | null {
  const raw = req.headers.get('cookie') ?? '';
  for (const part of raw.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === COOKIE) return decodeURIComponent(v.join('='));
  }
  return null;
}

/** Decides a request: the dashboard's answer, a redirect that stores the token, or 401. */
export async function handleDashboardRequest(req: Request, dashboard: NonNullable<ServiceDeps['queueDashboard']>): Promise<Response> {
  const url = new URL(req.url);
  const queryToken = url.searchParams.get('token');
  if (queryToken !== null) {
    if (!tokensEqual(queryToken, dashboard.token)) return unauthorized();
    url.searchParams.delete('token');
    return new Response(null, {
      status: 303,
      headers: {
        location: `${url.pathname}${url.search}`,
        'set-cookie': `${COOKIE}=${adminCookieValue(queryToken)}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=43200${isHttps(req, url) ? '; Secure' : ''}`,
      },
    });
  }
  const bearer = bearerTokenOf(req.headers.get('authorization'));
  if (!tokensEqual(bearer, dashboard.token) && !tokensEqual(cookieToken(req), adminCookieValue(dashboard.token))) return unauthorized();
  return dashboard.fetch(req);
}

function unauthorized(): Response {
  return new Response(
    JSON.stringify({
      error: 'admin token required',
      hint: 'send Authorization: Bearer <ADMIN_TOKEN>, or open /admin/queues?token=<ADMIN_TOKEN> in a browser',
    }),
    {
      status: 401,
      headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="proofline-admin"' },
    },
  );
}

export function registerAdminRoutes(app: H3, deps: ServiceDeps): void {
  const dashboard = deps.queueDashboard;
  if (!dashboard) return;
  const handler = (event: { req: Request }) => handleDashboardRequest(event.req, dashboard);
  app.all(DASHBOARD_PATH, handler);
  app.all(`${DASHBOARD_PATH}/**`, handler);
}
