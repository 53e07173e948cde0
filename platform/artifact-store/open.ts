/**
 * The stores of a process: the configured one (`ARTIFACT_STORE`) receives new files; either one
 * serves a file, whichever wrote it (a job record names its backend), so switching the setting
 * never orphans an artifact that is still within retention.
 */
import { OBJECT_STORES } from '../../contracts/streams.ts';
import type { Nats } from '../nats.ts';
import { LocalArtifactStore } from './local.ts';
import { NatsArtifactStore } from './nats.ts';
import type { ArtifactStore, StorageBackend } from './store.ts';

export type ArtifactStores = {
  /** Where new files go. */
  readonly primary: ArtifactStore;
  /** The stores this process keeps (local, and the object store when configured): what retention sweeps. */
  readonly kept: readonly ArtifactStore[];
  /** The store of `backend` (opened on first use). */
  of(backend: StorageBackend): Promise<ArtifactStore>;
};

export type ArtifactStoreSettings = {
  backend: StorageBackend;
  /** Directory of the `local` backend. */
  localDir: string;
  replicas?: number;
  /** Cap of the object store bucket, bytes (0: none). */
  maxBytes?: number;
};

/** How long a request waits for the object store to be opened, ms (then 503, retry). */
const REQUEST_OPEN_MS = 5_000;

export async function openArtifactStores(
  nats: Nats,
  settings: ArtifactStoreSettings,
): Promise<ArtifactStores> {
  const local = new LocalArtifactStore(settings.localDir);
  let remote: Promise<NatsArtifactStore> | null = null;
  // At start, as patient as any start-up step; opened later for a request (a download of a file
  // the object store holds while new files go to disk), no longer than a request may wait.
  const openNats = (withinMs?: number): Promise<NatsArtifactStore> => {
    remote ??= NatsArtifactStore.open(nats, OBJECT_STORES.artifacts, {
      replicas: settings.replicas ?? 1,
      maxBytes: settings.maxBytes ?? 0,
      ...(withinMs === undefined ? {} : { withinMs }),
    }).catch((err: unknown) => {
      remote = null;
      throw err;
    });
    return remote;
  };
  const primary = settings.backend === 'nats' ? await openNats() : local;
  return {
    primary,
    kept: primary === local ? [local] : [local, primary],
    of: async (backend) => (backend === 'nats' ? openNats(REQUEST_OPEN_MS) : local),
  };
}
