/** A stream definition for tests: kept forever, limits retention, one replica. */
import type { StreamDefinition } from '../../contracts/streams.ts';

export const keptStream = (name: string, subject: string): StreamDefinition => ({
  name,
  subjects: [subject],
  retention: 'limits',
  maxAgeSeconds: 0,
  maxMsgs: -1,
  maxBytes: -1,
  duplicateWindowSeconds: 120,
  replicas: 1,
});
