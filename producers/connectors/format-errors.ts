/**
 * What a connector does when a venue changes its format: the frame is refused with an error that
 * names the field (the mapper's `NormalizeError.field`), logged with the start of the frame and
 * counted per venue and field; the connector goes on with the next frame. Never a crash.
 */

import type { Logger } from '../../platform/logger.ts';
import { connectorFormatErrors, connectorFrames } from '../../platform/metrics.ts';
import { isNormalizeError } from '../normalizer/index.ts';

/** The field an error names, array indexes folded (`data[3].px` → `data[].px`) to bound the labels. */
export function fieldOf(error: unknown): string {
  const field = isNormalizeError(error) ? (error.field ?? 'payload') : 'internal';
  return field.replace(/\[\d+\]/g, '[]');
}

export function reportFormatError(venue: string, log: Logger, error: unknown, frame: string): void {
  const field = fieldOf(error);
  connectorFormatErrors.inc({ venue, field });
  connectorFrames.inc({ venue, outcome: 'format_error' });
  log.error(
    {
      venue,
      field,
      code: isNormalizeError(error) ? error.code : 'internal',
      err: error instanceof Error ? error.message : String(error),
      frame: frame.slice(0, 300),
    },
    `${venue} frame refused: field ${field} is not in the documented format`,
  );
}
