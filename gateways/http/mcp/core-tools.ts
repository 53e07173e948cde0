/**
 * Handlers of the simulation tools (health, presets, config schema, validation, generation),
 * each with the legacy REST route that serves the same code. Health is public (spec
 * "Authentication" §1: health checks need no key); the other legacy routes need scope `mcp`.
 */
import { manifestJsonSchema } from '../../../contracts/manifest.ts';
import {
  GENERATE_DATASET,
  GET_CONFIG_SCHEMA,
  GET_HEALTH,
  GET_PRESETS,
  VALIDATE_CONFIG,
} from '../../../contracts/mcp-tools.ts';
import { PRESETS } from '../../../contracts/presets.ts';
import type { GenerationPort, HealthPort } from '../ports.ts';
import { datasetRequest, validateConfig } from './tool-args.ts';
import { defineTool, type ToolDefinition } from './tool-registry.ts';

export type CoreToolDeps = { generation: GenerationPort; health: HealthPort };

export function coreTools(deps: CoreToolDeps): ToolDefinition[] {
  return [
    defineTool({
      spec: GET_HEALTH,
      run: () => deps.health.health(),
      legacy: { method: 'GET', url: '/mcp/health', access: 'public' },
    }),
    defineTool({
      spec: GET_PRESETS,
      run: () => ({ presets: PRESETS }),
      legacy: { method: 'GET', url: '/mcp/presets', access: 'mcp' },
    }),
    defineTool({
      spec: GET_CONFIG_SCHEMA,
      run: () => manifestJsonSchema(),
      legacy: { method: 'GET', url: '/mcp/config/schema', access: 'mcp' },
    }),
    defineTool({
      spec: VALIDATE_CONFIG,
      run: (args) => validateConfig(args),
      legacy: { method: 'POST', url: '/mcp/config/validate', access: 'mcp' },
    }),
    defineTool({
      spec: GENERATE_DATASET,
      run: (args, ctx) =>
        deps.generation.generate(datasetRequest(args), {
          principal: ctx.principal,
          requestId: ctx.requestId,
          baseUrl: ctx.baseUrl,
          async: false,
        }),
      legacy: { method: 'POST', url: '/mcp/generate_dataset', access: 'mcp' },
      // Through tools/call it generates like POST /data/generate, so it needs what that needs.
      scope: 'generate',
    }),
  ];
}
