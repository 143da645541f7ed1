/**
 * `sluice proxy`: the gate core behind a real HTTP proxy on the real clock.
 *
 *   sluice proxy [--config FILE] [--admin HOST:PORT] [--admin-token-file F] [--decision-log FILE] ...
 *   sluice proxy --smg --worker-urls URL... [--max-concurrent-requests N] [--queue-size N]
 *                [--queue-timeout-secs N] [--rate-limit-tokens-per-second N]
 *                [--request-timeout-secs N] [--port P]
 *
 * Runs until SIGINT/SIGTERM; see proxy/README.md.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { SMG_I32_MIN } from '../gate/index.js';
import { installCrashGuard } from '../proxy/crash-guard.js';
import { loadApiKeys, loadJwtKeys } from '../proxy/credentials.js';
import { type DecisionSink, JsonlDecisionLog } from '../proxy/decision-log.js';
import { DEFAULT_MAX_JSON_DEPTH } from '../proxy/json-bounds.js';
import { LoxiProxy } from '../proxy/proxy.js';
import { SmgProxy } from '../proxy/smg-proxy.js';
import { SMG_MAX_REQUEST_TIMEOUT_SECS, SMG_REQUEST_TIMEOUT_SECS } from '../proxy/smg-request-timeout.js';
import { intArg, reportError, UsageError } from './errors.js';
import { followParent, reexecWithProxyFlags } from './proxy-node-flags.js';

interface ProxyFlags {
  config?: string;
  admin: string;
  adminTokenFile?: string;
  adminHostName: string[];
  adminMaxJsonDepth: number;
  decisionLog?: string;
  policy?: string;
  deferDb?: string;
  deferDbSync: string;
  decisionLogBufferBytes: number;
  auditLogPerSecond: number;
  apiKeys?: string;
  jwtSecretFile?: string;
  jwtPublicKeyFile?: string;
  jwtTenantClaim: string;
  jwtLeewayS: number;
  jwtAudience?: string;
  jwtIssuer?: string;
  jwtAllowNoExp?: boolean;
  scrapeIntervalMs: number;
  healthIntervalMs: number;
  healthPath: string;
  probeTimeoutMs: number;
  breakerFailures: number;
  breakerOpenMs: number;
  headersTimeoutMs: number;
  keepaliveTimeoutMs: number;
  bufferBodyBytes: number;
  maxBodyBytes: number;
  maxJsonDepth: number;
  shutdownGraceMs: number;
  bodyTimeoutMs: number;
  bodyMemoryBytes: number;
  backendHeadersTimeoutMs: number;
  backendBodyTimeoutMs: number;
  smg?: boolean;
  workerUrls?: string[];
  maxConcurrentRequests?: number;
  queueSize?: number;
  queueTimeoutSecs?: number;
  rateLimitTokensPerSecond?: number;
  requestTimeoutSecs: number;
  port: number;
  host: string;
}

/** How long past the shutdown grace the process waits for its listeners and logs before it exits anyway. */
const SHUTDOWN_MARGIN_MS = 5_000;

/** Parses HOST:PORT (IPv6 in brackets). */
export function hostPort(flag: string) {
  return (v: string): { host: string; port: number } => {
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(v.trim());
    const port = m ? Number(m[2]) : Number.NaN;
    if (!m || port > 65535) throw new InvalidArgumentError(`${flag}: ${JSON.stringify(v)} is not HOST:PORT`);
    const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
    return { host, port };
  };
}

function numArg(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(v)} is not a number >= 0`);
    }
    return n;
  };
}

/** The `sluice proxy` command. */
export function proxyCommand(): Command {
  return new Command('proxy')
    .description(
      'run the gate behind a real HTTP/1.1 + h2c proxy, configured through the loxilb management API',
    )
    .option('--config <file>', 'rules to start with: the JSON of GET /netlox/v1/config/loadbalancer/all')
    .option('--admin <host:port>', 'management API and /metrics listener', '127.0.0.1:11111')
    .option('--admin-token-file <file>', 'require "Authorization: Bearer <token>" on the management API')
    .option(
      '--admin-host-name <name>',
      'a Host name the management API answers to besides its address (repeatable; DNS-rebinding protection)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--admin-max-json-depth <n>',
      'deepest JSON nesting of a management API body (deeper: 400 SLUICE_E_JSON_DEPTH)',
      intArg('--admin-max-json-depth', 4, 1000),
      32,
    )
    .option('--decision-log <file>', 'append one JSON line per request (see proxy/README.md)')
    .option(
      '--policy <file>',
      'admission policy (docs/policy.md) in front of every rule: classes, seats, deadlines, queue, degrade, defer, reject',
    )
    .option(
      '--defer-db <file>',
      'SQLite file of the deferred requests (WAL, created when missing); required when a class of --policy defers',
    )
    .option(
      '--defer-db-sync <mode>',
      'full: every defer is fsynced before its 202 (survives power loss); normal: survives a crash of the proxy, not of the machine',
      'full',
    )
    .option(
      '--decision-log-buffer-bytes <n>',
      'decision-log bytes buffered for a slow disk; past it records are dropped (decision_log_dropped_total)',
      intArg('--decision-log-buffer-bytes', 1),
      1024 * 1024,
    )
    .option(
      '--audit-log-per-second <n>',
      'most sec.ai.deny JSON lines per second on stderr; the rest are counted in one "suppressed" line (0: none)',
      intArg('--audit-log-per-second', 0),
      20,
    )
    .option('--api-keys <file>', 'API keys to tenant ids: {"keys": {"sk-...": "tenant-a"}}')
    .option('--jwt-secret-file <file>', 'HS256 secret for JWT credentials')
    .option('--jwt-public-key-file <file>', 'RS256 public key (PEM) for JWT credentials')
    .option('--jwt-tenant-claim <name>', 'JWT claim naming the tenant', 'sub')
    .option(
      '--jwt-leeway-s <n>',
      'clock-skew allowance on exp/nbf, seconds',
      intArg('--jwt-leeway-s', 0, 3600),
      0,
    )
    .option('--jwt-audience <aud>', 'a JWT must name this audience in "aud" (unchecked when unset)')
    .option('--jwt-issuer <iss>', 'a JWT\'s "iss" must be this issuer (unchecked when unset)')
    .option('--jwt-allow-no-exp', 'accept JWTs without "exp" (refused by default: they never expire)')
    .option(
      '--scrape-interval-ms <n>',
      'engine /metrics scrape period for adaptive rules',
      intArg('--scrape-interval-ms', 0),
      10_000,
    )
    .option(
      '--health-interval-ms <n>',
      'endpoint health probe period (0: no probes)',
      intArg('--health-interval-ms', 0),
      5_000,
    )
    .option('--health-path <path>', 'endpoint health probe path', '/health')
    .option(
      '--probe-timeout-ms <n>',
      'deadline of a health probe or /metrics scrape, first byte to last; a late one fails',
      intArg('--probe-timeout-ms', 1),
      2_000,
    )
    .option(
      '--breaker-failures <n>',
      'consecutive failures that take an endpoint out',
      intArg('--breaker-failures', 1),
      3,
    )
    .option(
      '--breaker-open-ms <n>',
      'least time an endpoint stays out before a good probe returns it',
      intArg('--breaker-open-ms', 0),
      5_000,
    )
    .option(
      '--headers-timeout-ms <n>',
      'longest time a client may take to send a request head',
      intArg('--headers-timeout-ms', 1),
      10_000,
    )
    .option(
      '--keepalive-timeout-ms <n>',
      'idle client keep-alive timeout',
      intArg('--keepalive-timeout-ms', 1),
      65_000,
    )
    .option(
      '--buffer-body-bytes <n>',
      'bodies up to this size are read before the decision',
      intArg('--buffer-body-bytes', 0),
      1024 * 1024,
    )
    .option(
      '--max-body-bytes <n>',
      'larger request bodies are refused 413',
      intArg('--max-body-bytes', 1),
      64 * 1024 * 1024,
    )
    .option(
      '--max-json-depth <n>',
      'deepest nesting of a JSON body the proxy parses (P/D requests); deeper is refused 400 json_too_deep',
      intArg('--max-json-depth', 1, 10_000),
      DEFAULT_MAX_JSON_DEPTH,
    )
    .option(
      '--shutdown-grace-ms <n>',
      'on SIGINT/SIGTERM, running requests get this long before every connection is closed',
      intArg('--shutdown-grace-ms', 0, 600_000),
      5_000,
    )
    .option(
      '--body-timeout-ms <n>',
      'longest silence of a request body being read; past it 408 body_timeout (0: none)',
      intArg('--body-timeout-ms', 0),
      30_000,
    )
    .option(
      '--body-memory-bytes <n>',
      'most bytes of request bodies read before their decision, process-wide; past it 503 proxy_body_memory_full (0: no bound)',
      intArg('--body-memory-bytes', 0),
      256 * 1024 * 1024,
    )
    .option(
      '--backend-headers-timeout-ms <n>',
      'longest wait for a backend response head; past it 504 backend_timeout (0: none)',
      intArg('--backend-headers-timeout-ms', 0),
      300_000,
    )
    .option(
      '--backend-body-timeout-ms <n>',
      'longest silence between backend response chunks; past it the response is cut (0: none)',
      intArg('--backend-body-timeout-ms', 0),
      120_000,
    )
    .option('--smg', 'run the SMG admission-control dialect instead of the loxilb services')
    .option('--worker-urls <url...>', 'SMG: worker base URLs')
    .option(
      '--max-concurrent-requests <n>',
      'SMG: permits (default -1; any value <= 0 turns admission off)',
      intArg('--max-concurrent-requests', SMG_I32_MIN),
    )
    .option('--queue-size <n>', 'SMG: waiting requests (0: no queue)', intArg('--queue-size', 0))
    .option('--queue-timeout-secs <n>', 'SMG: longest wait in seconds', intArg('--queue-timeout-secs', 0))
    .option(
      '--rate-limit-tokens-per-second <n>',
      'SMG: bucket refill rate',
      numArg('--rate-limit-tokens-per-second'),
    )
    .option(
      '--request-timeout-secs <n>',
      'SMG: longest time a request sent to a worker may take (and hold its permit)',
      intArg('--request-timeout-secs', 1, SMG_MAX_REQUEST_TIMEOUT_SECS),
      SMG_REQUEST_TIMEOUT_SECS,
    )
    .option('--port <n>', 'SMG: listening port', intArg('--port', 0, 65535), 30_000)
    .option('--host <host>', 'SMG: listening address', '127.0.0.1')
    .action(async (flags: ProxyFlags) => {
      // Started without the proxy's V8 flags: run it in a child that has them.
      const child = reexecWithProxyFlags();
      if (child !== null) {
        process.exitCode = await child;
        return;
      }
      // The last resort: an error no exchange caught is logged and the proxy keeps serving.
      installCrashGuard(process, (line) => process.stderr.write(`${line}\n`));
      try {
        const stop = flags.smg ? await startSmg(flags) : await startLoxi(flags);
        let stopping = false;
        const shutdown = (): void => {
          if (stopping) return;
          stopping = true;
          // Closing ends within the grace; should anything still hang, the process goes anyway.
          setTimeout(() => {
            process.stderr.write(
              `sluice proxy: shutdown still not done ${SHUTDOWN_MARGIN_MS} ms past the grace; exiting\n`,
            );
            process.exit(1);
          }, flags.shutdownGraceMs + SHUTDOWN_MARGIN_MS).unref();
          stop().finally(() => process.exit(0));
        };
        process.on('SIGINT', shutdown);
        process.on('SIGTERM', shutdown);
        followParent(shutdown);
      } catch (err) {
        reportError(err);
      }
    });
}

function decisionLog(f: ProxyFlags): DecisionSink | null {
  return f.decisionLog === undefined
    ? null
    : new JsonlDecisionLog(f.decisionLog, { bufferBytes: f.decisionLogBufferBytes });
}

function backendTimeouts(f: ProxyFlags): { headersTimeoutMs: number; bodyIdleTimeoutMs: number } {
  return { headersTimeoutMs: f.backendHeadersTimeoutMs, bodyIdleTimeoutMs: f.backendBodyTimeoutMs };
}

/** The --policy and --defer-db flags as the proxy's option, the file read. */
function policyOption(
  f: ProxyFlags,
): { text: string; fileName: string; deferDb?: string; deferSync: 'FULL' | 'NORMAL' } | undefined {
  if (f.deferDbSync !== 'full' && f.deferDbSync !== 'normal')
    throw new UsageError(`--defer-db-sync: ${JSON.stringify(f.deferDbSync)} is not one of full, normal`);
  const deferSync = f.deferDbSync === 'full' ? 'FULL' : 'NORMAL';
  if (f.policy === undefined) {
    if (f.deferDb !== undefined)
      throw new UsageError('--defer-db needs --policy FILE (only a policy defers)');
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(f.policy, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--policy ${f.policy}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  return { text, fileName: f.policy, deferSync, ...(f.deferDb === undefined ? {} : { deferDb: f.deferDb }) };
}

/** Builds the proxy; a bad policy file or defer database is a usage error naming file, field and bound. */
function buildProxy(build: () => LoxiProxy): LoxiProxy {
  try {
    return build();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && /^SLUICE_E_(POLICY|DEFER_DB)/.test(code))
      throw new UsageError((err as Error).message);
    throw err;
  }
}

async function startLoxi(f: ProxyFlags): Promise<() => Promise<void>> {
  const admin = hostPort('--admin')(f.admin);
  const token = f.adminTokenFile === undefined ? undefined : readFileSync(f.adminTokenFile, 'utf8').trim();
  if (token === '') throw new UsageError(`--admin-token-file ${f.adminTokenFile}: the token is empty`);
  const log = decisionLog(f);
  const jwt =
    f.jwtSecretFile !== undefined || f.jwtPublicKeyFile !== undefined
      ? loadJwtKeys({
          ...(f.jwtSecretFile === undefined ? {} : { secretFile: f.jwtSecretFile }),
          ...(f.jwtPublicKeyFile === undefined ? {} : { publicKeyFile: f.jwtPublicKeyFile }),
          leewayS: f.jwtLeewayS,
          ...(f.jwtAudience === undefined ? {} : { audience: f.jwtAudience }),
          ...(f.jwtIssuer === undefined ? {} : { issuer: f.jwtIssuer }),
          allowNoExp: f.jwtAllowNoExp === true,
        })
      : undefined;
  const policy = policyOption(f);
  const proxy = buildProxy(
    () =>
      new LoxiProxy({
        adminHost: admin.host,
        adminPort: admin.port,
        ...(token === undefined ? {} : { adminToken: token }),
        adminHostNames: f.adminHostName,
        adminMaxJsonDepth: f.adminMaxJsonDepth,
        decisionLog: log,
        audit: { perSecond: f.auditLogPerSecond },
        credentials: {
          ...(f.apiKeys === undefined ? {} : { apiKeys: loadApiKeys(f.apiKeys) }),
          ...(jwt === undefined ? {} : { jwt }),
          tenantClaim: f.jwtTenantClaim,
        },
        monitor: {
          scrapeIntervalMs: f.scrapeIntervalMs,
          healthIntervalMs: f.healthIntervalMs,
          healthPath: f.healthPath,
          probeTimeoutMs: f.probeTimeoutMs,
          breakerFailures: f.breakerFailures,
          breakerOpenMs: f.breakerOpenMs,
        },
        backend: backendTimeouts(f),
        ...(policy === undefined ? {} : { policy }),
        limits: {
          headersTimeoutMs: f.headersTimeoutMs,
          keepAliveTimeoutMs: f.keepaliveTimeoutMs,
          bufferBodyBytes: f.bufferBodyBytes,
          maxBodyBytes: f.maxBodyBytes,
          maxJsonDepth: f.maxJsonDepth,
          bodyTimeoutMs: f.bodyTimeoutMs,
          bodyMemoryBytes: f.bodyMemoryBytes,
        },
      }),
  );
  if (f.config !== undefined) {
    const doc = JSON.parse(readFileSync(f.config, 'utf8')) as { lbAttr?: unknown };
    if (!Array.isArray(doc.lbAttr)) throw new UsageError(`--config ${f.config}: expected {"lbAttr": [...]}`);
    for (const [i, rule] of doc.lbAttr.entries()) {
      try {
        await proxy.apply(rule);
      } catch (err) {
        await proxy.close();
        throw new UsageError(`--config ${f.config}: lbAttr[${i}]: ${(err as Error).message}`);
      }
    }
  }
  await proxy.start();
  process.stdout.write(`sluice proxy: management API on http://${f.admin}\n`);
  return () => proxy.close(f.shutdownGraceMs);
}

async function startSmg(f: ProxyFlags): Promise<() => Promise<void>> {
  if (!f.workerUrls || f.workerUrls.length === 0) throw new UsageError('--smg needs --worker-urls URL...');
  if (f.policy !== undefined || f.deferDb !== undefined)
    throw new UsageError('--policy and --defer-db run in front of the loxilb services, not with --smg');
  // Without --max-concurrent-requests, admission control is off (SMG's default -1).
  const proxy = new SmgProxy({
    requestTimeoutSecs: f.requestTimeoutSecs,
    settings: {
      ...(f.maxConcurrentRequests === undefined ? {} : { max_concurrent_requests: f.maxConcurrentRequests }),
      ...(f.queueSize === undefined ? {} : { queue_size: f.queueSize }),
      ...(f.queueTimeoutSecs === undefined ? {} : { queue_timeout_secs: f.queueTimeoutSecs }),
      ...(f.rateLimitTokensPerSecond === undefined
        ? {}
        : { rate_limit_tokens_per_second: f.rateLimitTokensPerSecond }),
    },
    workerUrls: f.workerUrls,
    host: f.host,
    port: f.port,
    decisionLog: decisionLog(f),
    audit: { perSecond: f.auditLogPerSecond },
    monitor: {
      healthIntervalMs: f.healthIntervalMs,
      healthPath: f.healthPath,
      probeTimeoutMs: f.probeTimeoutMs,
      breakerFailures: f.breakerFailures,
      breakerOpenMs: f.breakerOpenMs,
    },
    backend: backendTimeouts(f),
    limits: {
      headersTimeoutMs: f.headersTimeoutMs,
      keepAliveTimeoutMs: f.keepaliveTimeoutMs,
      maxBodyBytes: f.maxBodyBytes,
      bodyTimeoutMs: f.bodyTimeoutMs,
      bodyMemoryBytes: f.bodyMemoryBytes,
    },
  });
  await proxy.start();
  const cap = proxy.smg.settings;
  process.stdout.write(
    `sluice proxy --smg: listening on http://${f.host}:${proxy.port} (admission control ${
      cap.enabled ? `on: ${cap.maxConcurrentRequests} permits` : 'off'
    })\n`,
  );
  return () => proxy.close(f.shutdownGraceMs);
}
