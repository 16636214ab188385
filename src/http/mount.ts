/**
 * The customer listener: every request gets its exchange and request id,
 * then goes to its dialect, API v2 at its one path and API v1 everywhere
 * else (which answers NOT_FOUND for what it does not serve). Neither
 * dialect knows the other.
 */
import { newRequestId } from '../ids/index.js';
import type { AppContext } from './context.js';
import { errorOutcome } from '../errors/index.js';
import { guarded, newExchange, send, sendError, type Exchange } from './transport/reply.js';
import { requestObserver } from './transport/request-observer.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './transport/uws.js';
import { handleV1 } from './v1/routes.js';
import { handleV2, V2_PATH } from './v2/routes.js';

export function mountCustomerApi(app: TemplatedApp, ctx: AppContext): void {
  const observer = requestObserver(ctx.metrics, ctx.log);
  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const ex = newExchange(res, newRequestId(), observer);
    guarded(ctx, ex, () => dispatch(ctx, ex, res, req));
  });
}

function dispatch(ctx: AppContext, ex: Exchange, res: HttpResponse, req: HttpRequest): void {
  const url = req.getUrl();
  const method = req.getMethod();
  ex.method = method;
  ex.head = method === 'head';
  if (url === '/healthz' || url === '/readyz') return health(ctx, ex, url, method);
  if (url === V2_PATH) handleV2(ctx, ex, res, req, method);
  else handleV1(ctx, ex, res, req, url, method);
}

/**
 * Health for load balancers, before any other check: /healthz is 200 while
 * the process runs; /readyz is 200 only on a node that serves (the leader,
 * or a standalone server once listening) and 503 with its role otherwise.
 */
function health(ctx: AppContext, ex: Exchange, url: string, method: string): void {
  if (method !== 'get' && method !== 'head') return sendError(ex, errorOutcome('METHOD', `${url} accepts only GET.`), ['Allow', 'GET']);
  ex.route = url;
  if (url === '/healthz') return send(ex, 200, '{"ok":true}');
  const readiness = ctx.readiness();
  send(ex, readiness.ok ? 200 : 503, JSON.stringify(readiness));
}
