/**
 * The console (`{base_url}/api/v1/console`): login, logout, API keys, account. A session token
 * (from `login`) authorizes every other call. fetch only: browsers use it too.
 */
import type { Scope } from '@mdp/contracts/accounts';
import { HttpClient, type HttpClientOptions } from './http.ts';

export type Session = { session_token: string; expires_at: string | number };

export type KeyView = {
  key_id: string;
  name: string;
  prefix: string;
  tier: string;
  scopes: Scope[];
  status: 'active' | 'revoked';
  created_at: string | number;
  last_used_at: string | number | null;
  revoked_at: string | number | null;
  /** Past it the key answers as revoked (`key_expired`); null: never. */
  expires_at?: string | null;
};

/** `POST /keys`: the key in clear appears in this answer only. */
export type CreatedKey = Pick<
  KeyView,
  'key_id' | 'name' | 'prefix' | 'tier' | 'scopes' | 'created_at' | 'expires_at'
> & {
  key: string;
};

export class ConsoleClient {
  readonly http: HttpClient;
  session: string | null;

  constructor(opts: HttpClientOptions & { session?: string }) {
    this.session = opts.session ?? null;
    this.http = new HttpClient(opts, () =>
      this.session ? { authorization: `Bearer ${this.session}` } : ({} as Record<string, string>),
    );
  }

  /** Logs in and keeps the session for the calls that follow. */
  async login(email: string, password: string): Promise<Session> {
    const s = await this.http.json<Session>('POST', '/api/v1/console/login', { body: { email, password } });
    this.session = s.session_token;
    return s;
  }

  async logout(): Promise<void> {
    await this.http.json('POST', '/api/v1/console/logout');
    this.session = null;
  }

  account(): Promise<Record<string, unknown>> {
    return this.http.json('GET', '/api/v1/console/account');
  }

  readonly keys = {
    list: async (): Promise<KeyView[]> =>
      (await this.http.json<{ keys: KeyView[] }>('GET', '/api/v1/console/keys')).keys,
    /** `expiresAt`: ISO 8601; past it the key is refused (`key_expired`). */
    create: (name: string, scopes?: Scope[], expiresAt?: string): Promise<CreatedKey> =>
      this.http.json('POST', '/api/v1/console/keys', {
        body: { name, ...(scopes ? { scopes } : {}), ...(expiresAt ? { expires_at: expiresAt } : {}) },
      }),
    revoke: (keyId: string): Promise<void> =>
      this.http.json('DELETE', `/api/v1/console/keys/${encodeURIComponent(keyId)}`),
  };
}
