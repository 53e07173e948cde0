/** How `stream` and `sync` show what is not an event: notices, warnings, reconnections (stderr). */
import type { StreamItem } from '@mdp/client';
import type { Palette } from '../term.ts';

export function streamNote(item: Exclude<StreamItem, { type: 'event' }>, json: boolean, c: Palette): string {
  if (item.type === 'reconnecting') {
    const e = item.error;
    if (json)
      return JSON.stringify({
        type: 'reconnecting',
        attempt: item.attempt,
        delay_ms: item.delayMs,
        code: e.code,
        request_id: e.requestId,
      });
    return c.yellow(
      `reconnecting in ${(item.delayMs / 1000).toFixed(1)} s (attempt ${item.attempt}, ${e.code}: ${e.message})`,
    );
  }
  const body = item.type === 'notice' ? item.notice : item.warning;
  if (json) return JSON.stringify({ type: item.type, ...body });
  const text = `${item.type} ${body.code}: ${body.message}`;
  return item.type === 'notice' ? c.cyan(text) : c.yellow(text);
}
