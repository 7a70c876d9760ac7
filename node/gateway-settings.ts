// Why: the node builds its gateway and engine backend from its own snake_case settings; this is
// the one place that maps them onto the gateway's and backends' options (whose defaults apply to
// whatever the node's settings leave out), so `polar node` can set every knob `polar gateway` can.
import type { BackendOptionsInput } from "./gateway/backends/options.ts";
import type { GatewayConfigInput } from "./gateway/config.ts";
import type { NodeConfig } from "./node-config.ts";

export function nodeBackendOptions(config: NodeConfig): BackendOptionsInput {
  const e = config.engine;
  return {
    urls: e.urls,
    model: e.served_model,
    tokenizer: e.tokenizer,
    apiKey: e.api_key,
    timeoutMs: e.timeout_ms,
    retries: e.retries,
    backoffMs: e.backoff_ms,
    engineDownMs: e.engine_down_ms,
    maxSessions: e.max_sessions,
    passReasoning: e.pass_reasoning,
    tokenSplice: e.token_splice,
    titoEngine: e.tito_engine,
    sglangMode: e.sglang_mode,
    router: e.sglang_router,
  };
}

export function nodeGatewayConfig(config: NodeConfig): GatewayConfigInput {
  return {
    host: config.host,
    port: config.port,
    db: config.db,
    adminToken: config.admin_token,
    publicUrl: config.public_url,
    tokenizer: config.engine.tokenizer,
    cacheBytes: config.gateway.cache_bytes,
    streamHeadStartMs: config.gateway.stream_head_start_ms,
    keepAliveMs: config.gateway.keep_alive_ms,
    maxBodyBytes: config.gateway.max_body_bytes,
    maxJsonDepth: config.gateway.max_json_depth,
    maxTokensCap: config.sampling.max_tokens_cap,
    temperature: config.sampling.temperature,
    topP: config.sampling.top_p,
    thinking: config.sampling.thinking,
  };
}
