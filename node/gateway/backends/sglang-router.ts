// Why: behind an sglang-router the gateway would lose session stickiness (the router picks the
// worker) and see the router, not the worker, as the engine; listing the router's workers and
// calling them directly keeps routing — and the recorded engine URL — ours.
//
// sgl-project/sglang docs/advanced_features/sgl_model_gateway.md ("Worker Management APIs"):
// `GET /workers` → `{workers:[{id,url,model_id,worker_type,is_healthy,load,…}], total, stats}`.
// Older sglang-router releases serve `GET /list_workers` → `{urls:[…]}`; both are accepted.
import { z } from "zod";
import { PolarError } from "../../../protocol/errors.ts";
import { engineBaseUrl } from "./engine-pool.ts";

const WorkersAnswer = z.object({
  workers: z.array(
    z.object({
      url: z.string(),
      worker_type: z.string().optional(),
      is_healthy: z.boolean().optional(),
    }),
  ),
});
const ListWorkersAnswer = z.object({ urls: z.array(z.string()) });

/** Regular, healthy worker base URLs behind one router. */
export async function listRouterWorkers(routerUrl: string, signal: AbortSignal, apiKey?: string): Promise<string[]> {
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const base = engineBaseUrl(routerUrl);
  const modern = await getJson(`${base}/workers`, headers, signal);
  const parsedModern = WorkersAnswer.safeParse(modern);
  if (parsedModern.success) {
    return parsedModern.data.workers.filter((w) => (w.worker_type ?? "regular") === "regular" && w.is_healthy !== false).map((w) => w.url);
  }
  const legacy = ListWorkersAnswer.safeParse(await getJson(`${base}/list_workers`, headers, signal));
  if (legacy.success) return legacy.data.urls;
  throw new PolarError("engine_error", "the sglang router lists no workers (neither /workers nor /list_workers answered)", { engineUrl: base });
}

async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  try {
    const response = await fetch(url, { headers, signal });
    if (!response.ok) return undefined;
    return await response.json();
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
}

/** Keeps an engine pool's URL set equal to the routers' workers, refreshed at most every `refreshMs`. */
export class RouterWorkerDiscovery {
  private lastRefresh = 0;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly routerUrls: readonly string[],
    private readonly apply: (workerUrls: string[]) => void,
    private readonly options: { refreshMs: number; timeoutMs: number; apiKey?: string },
  ) {}

  /** Refreshes when stale; a failed listing keeps the previous set (at first: the routers themselves). */
  async refreshIfStale(now = Date.now()): Promise<void> {
    if (now - this.lastRefresh < this.options.refreshMs) return;
    this.inFlight ??= this.refresh().finally(() => {
      this.inFlight = undefined;
    });
    await this.inFlight;
  }

  private async refresh(): Promise<void> {
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const lists = await Promise.allSettled(this.routerUrls.map((u) => listRouterWorkers(u, signal, this.options.apiKey)));
    const workers = [...new Set(lists.flatMap((r) => (r.status === "fulfilled" ? r.value : [])))];
    this.lastRefresh = Date.now();
    if (workers.length > 0) this.apply(workers);
  }
}
