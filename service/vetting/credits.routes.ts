/**
 * POST /admin/credits: the admin CLI's path while the server holds the state
 * database (`npm run credits` falls back to it). Bearer ADMIN_TOKEN; absent
 * token configuration answers 404 (the endpoint does not exist then).
 */
import { HTTPError, type H3 } from 'h3';
import { z } from 'zod';
import type { ServiceDeps } from '../platform/deps.ts';
import { parseBody } from '../platform/http.ts';
import { creditsCommandAnswer } from './vetting.schema.ts';
import { describeRoute } from '../platform/route-registry.ts';
import { bearerTokenOf, stateOf, tokensEqual } from '../platform/guards.ts';
import { planIdSchema, runCreditsCommand } from './credits.ts';

const commandSchema = z.object({
  op: z.enum(['grant', 'key', 'show']),
  account: z.string().trim().min(1).max(120),
  n: z.number().int().min(0).optional(),
  plan: planIdSchema.optional(),
});

describeRoute({
  method: 'POST',
  path: '/admin/credits',
  family: 'credits',
  metered: false,
  summary: 'Admin: grant credits, issue an API key or show an account (Bearer ADMIN_TOKEN)',
  body: commandSchema,
  statuses: [400, 401, 404],
  response: creditsCommandAnswer,
});

export function registerCreditsRoutes(app: H3, deps: ServiceDeps): void {
  app.post('/admin/credits', async (event) => {
    const token = deps.options.adminToken;
    if (!token) throw new HTTPError({ status: 404, message: 'admin endpoints are disabled (ADMIN_TOKEN is not set)' });
    if (!tokensEqual(bearerTokenOf(event.req.headers.get('authorization')), token))
      throw new HTTPError({ status: 401, message: 'admin token required: Authorization: Bearer <ADMIN_TOKEN>' });
    const cmd = await parseBody(event, commandSchema);
    if (cmd.op === 'grant' && cmd.n === undefined)
      throw new HTTPError({ status: 400, message: "grant needs 'n'", data: { parameter: 'n' } });
    return runCreditsCommand(stateOf(deps), deps.options.dataDir, cmd, deps.now());
  });
}
