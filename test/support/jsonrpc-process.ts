/** Starts a real `gateway jsonrpc` process (free ports, the test secret); pushed to `into` at once. */
import { type ServiceProcess, startService } from './process.ts';

export function startJsonRpcEdge(
  natsUrl: string,
  apiKeySecret: string,
  env: Record<string, string>,
  into: ServiceProcess[],
): { process: ServiceProcess; url: Promise<string> } {
  const p = startService(['gateway', 'jsonrpc', '--region', 'us'], {
    NATS_URL: natsUrl,
    NODE_ENV: 'test',
    API_KEY_SECRET: apiKeySecret,
    JSONRPC_PORT_US: '0',
    JSONRPC_PORT_JP: '0',
    ...env,
  });
  into.push(p);
  return {
    process: p,
    url: p.waitForLog((l) => l.msg === 'json-rpc listening', 90_000).then((l) => l.url as string),
  };
}
