/**
 * POST /admin/credits: the admin CLI's path while the server holds the state
 * database (`npm run credits` falls back to it). Bearer ADMIN_TOKEN; absent
 * token configuration answers 404 (the endpoint does not exist then).
 */
import { timingSafeEqual } from 'node:crypto';
import { HTTPError, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../deps.ts';
import { parseBody } from '../http.ts';
import { describeRoute } from '../openapi/route-registry.ts';
import { runCreditsCommand } from '../../jobs/credits.cli.ts';
import { planIdSchema } from './credits.ts';
import { mapped, stateOf } from './vetting-deps.ts';

const commandSchema = z.object({ op: z.enum(['grant', 'key', 'show']), account: z.string().trim().min(1).max(120), n: z.number().int().min(0).optional(), plan: planIdSchema.optional() });

describeRoute({ method: 'POST', path: '/admin/credits', family: 'credits', metered: false, summary: 'Admin: grant credits, issue an API key or show an account (Bearer ADMIN_TOKEN)', body: commandSchema, statuses: [400, 401, 404] });

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function registerCreditsRoutes(app: H3, deps: ServiceDeps): void {
  app.post('/admin/credits', async (event) => {
    const token = deps.options.adminToken;
    if (!token) throw new HTTPError({ status: 404, message: 'admin endpoints are disabled (ADMIN_TOKEN is not set)' });
    const m = /^Bearer\s+(\S+)$/i.exec(event.req.headers.get('authorization') ?? '');
    if (!m || !sameToken(m[1]!, token)) throw new HTTPError({ status: 401, message: 'admin token required: Authorization: Bearer <ADMIN_TOKEN>' });
    const cmd = await parseBody(event, commandSchema);
    if (cmd.op === 'grant' && cmd.n === undefined) throw new HTTPError({ status: 400, message: "grant needs 'n'", data: { parameter: 'n' } });
    return mapped(() => runCreditsCommand(stateOf(deps), deps.options.dataDir, cmd, deps.now()));
  });
}
